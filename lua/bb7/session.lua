-- The connection to the daemon: starts it on first use, sends `init` for the project root,
-- learns the active chat, offers a restart when the daemon dies, and stops it on VimLeavePre.
local Client = require("bb7.client")
local binary = require("bb7.binary")
local config = require("bb7.config")
local notify = require("bb7.notify")
local state = require("bb7.state")

local M = {}

M.client = nil
-- Replaces the process transport (tests); nil means vim.system.
M.transport = nil
local close_log = nil
local waiting = nil -- callbacks waiting for the running `init`

function M.root()
  local root = config.options.root or vim.fn.getcwd()
  local abs = vim.fn.fnamemodify(root, ":p")
  if #abs > 1 then
    abs = abs:gsub("/$", "")
  end
  return abs
end

--- Whether the project root has `.bb7/` (the spec's "initialized").
function M.project_initialized(root)
  return vim.fn.isdirectory((root or M.root()) .. "/.bb7") == 1
end

local function handle_event(msg)
  if msg.type == "title_updated" then
    for _, chat in ipairs(state.data.chats) do
      if chat.id == msg.chat_id then
        chat.name = msg.title
      end
    end
    if state.data.chat and state.data.chat.id == msg.chat_id then
      state.data.chat.name = msg.title
    end
    state.emit("chats")
    state.emit("status")
    state.emit("title_updated", msg)
  elseif msg.type == "error" then
    notify.error("Failed to handle a request: " .. tostring(msg.message))
  elseif msg.type == "protocol_error" then
    notify.error(msg.message)
  end
end

local function offer_restart(code, signal, stderr)
  local last = vim.trim(stderr or "")
  last = last:match("([^\n]*)$") or ""
  local text = string.format("Daemon exited (code %s%s)", tostring(code), signal and signal ~= 0 and (", signal " .. signal) or "")
  if last ~= "" then
    text = text .. ": " .. last
  end
  notify.error(text)
  local stream = state.data.stream
  state.data.stream = nil
  state.data.ready = false
  if stream then
    state.emit("stream_end", { id = stream.id, type = "error", message = "bb7 daemon exited" })
  end
  vim.ui.select({ "Restart bb7", "Leave it stopped" }, { prompt = "BB-7: the daemon stopped." }, function(choice)
    if choice == "Restart bb7" then
      local active = state.data.active_id
      M.ensure(function(ok)
        if ok and active then
          require("bb7.actions").select_chat(active)
        end
      end)
    end
  end)
end

--- Starts the daemon if needed. Returns true, or false after telling the user why not.
function M.start()
  if M.client and M.client:is_running() then
    return true
  end
  local cmd, looked = binary.find(config.options.cmd)
  if not cmd and not M.transport then
    vim.notify(binary.not_found_message(looked), vim.log.levels.ERROR)
    return false
  end
  local log
  if config.options.debug then
    if close_log then
      close_log()
    end
    log, close_log = require("bb7.traffic_log").open()
  end
  M.client = Client.new({
    cmd = cmd or { "bb7" },
    transport = M.transport,
    log = log,
    on_event = handle_event,
    on_exit = offer_restart,
  })
  local ok, err = M.client:start()
  if not ok then
    notify.error("Failed to start the daemon: " .. tostring(err))
    return false
  end
  return true
end

--- Sends a request (see Client:request). Starts nothing: use M.ensure first.
function M.request(action, fields, on_reply, stream)
  if not M.client then
    if on_reply then
      on_reply({ type = "error", message = "bb7 daemon is not running" })
    end
    return nil
  end
  return M.client:request(action, fields, on_reply, stream)
end

--- Makes sure the daemon runs and `init` has been answered, then calls `cb(ok)`.
function M.ensure(cb)
  local root = M.root()
  if state.data.ready and state.data.root ~= root then
    -- the working directory moved to another project: start over there
    local keep_model = state.data.model
    state.reset()
    state.data.model = keep_model
    state.emit("chats")
    state.emit("chat")
    state.emit("files")
  end
  if state.data.ready and M.client and M.client:is_running() then
    cb(true)
    return
  end
  if waiting then
    table.insert(waiting, cb)
    return
  end
  if not M.start() then
    cb(false)
    return
  end
  waiting = { cb }
  local previous = state.data.active_id
  local function finish(ok)
    local list = waiting or {}
    waiting = nil
    for _, fn in ipairs(list) do
      fn(ok)
    end
  end
  local function on_init(reply)
    if reply.type == "error" then
      notify.daemon_error("initialize", reply.message)
      finish(false)
      return
    end
    state.data.root = root
    state.data.ready = true
    state.data.initialized = not reply.global_only and M.project_initialized(root)
    if reply.default_model and not state.data.model then
      state.data.model = reply.default_model
    end
    M.request("chat_active", {}, function(active)
      local id = active.type == "chat_active" and active.id or nil
      if id or not previous then
        state.data.active_id = id
        return finish(true)
      end
      -- a restarted daemon has no active chat: select the one this session had
      M.request("chat_select", { id = previous }, function(selected)
        state.data.active_id = selected.type ~= "error" and previous or nil
        finish(true)
      end)
    end)
  end
  -- A directory without `.bb7/` is refused (as by the first bb7): fall back to global-only
  -- mode (`init` with an empty root) until :BB7Init.
  M.request("init", { project_root = root }, function(reply)
    if reply.type == "error" and reply.message == "Not initialized. Run :BB7Init" then
      M.request("init", { project_root = "" }, on_init)
      return
    end
    on_init(reply)
  end)
end

--- Stops the daemon (VimLeavePre, tests).
function M.stop()
  if M.client then
    M.client:stop()
  end
  M.client = nil
  waiting = nil
  state.data.ready = false
  if close_log then
    close_log()
    close_log = nil
  end
end

return M
