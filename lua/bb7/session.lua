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

-- The project root once chosen: the global working directory when the session first started,
-- kept until `:cd` changes the global one (DirChanged, set up in bb7.init). A window-local
-- directory (`:lcd`, `:tcd`, 'autochdir') never switches the project.
M.chosen = nil

function M.root()
  local root = config.options.root or M.chosen or vim.fn.getcwd(-1, -1)
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
    state.emit("stream_end", { id = stream.id, type = "error", message = Client.EXITED })
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
      on_reply({ type = "error", message = Client.NOT_RUNNING })
    end
    return nil
  end
  return M.client:request(action, fields, on_reply, stream)
end

-- `init` for `root`. Without `.bb7/` there the daemon runs in global-only mode: `init` with an
-- empty project_root. A daemon that wants the root instead (older ones: it answers
-- `global_only`) is asked again with it; when neither works, the session is up but not
-- initialized (only :BB7Init works). cb(reply, global_only).
local function init_request(root, project, cb)
  if project then
    return M.request("init", { project_root = root }, function(reply)
      cb(reply, false)
    end)
  end
  M.request("init", { project_root = "" }, function(reply)
    if reply.type ~= "error" then
      return cb(reply, true)
    end
    M.request("init", { project_root = root }, function(again)
      if again.type == "error" or not again.global_only then
        -- not initialized here: keep the session for :BB7Init
        return cb({ type = "ok" }, false)
      end
      cb(again, true)
    end)
  end)
end

--- Holds every `ensure` until `release`: `:BB7Init` changes the store that requests go to, so
--- a command run right after it (`:BB7NewChat`) waits for the session it leads to.
function M.hold()
  waiting = waiting or {}
end

--- Ends a `hold`: `init` runs again, then `cb(ok)` and the held callers are called.
function M.release(cb)
  local held = waiting or {}
  waiting = nil
  state.data.ready = false
  M.ensure(function(ok)
    if cb then
      cb(ok)
    end
    M.call_held(held, ok)
  end)
end

--- Calls the waiting `ensure` callbacks `list` with `ok`; when one of them holds the session
--- (`:BB7Init` queued with the others), the rest wait for its release.
function M.call_held(list, ok)
  waiting = nil
  for i, fn in ipairs(list) do
    if waiting then
      vim.list_extend(waiting, list, i)
      return
    end
    fn(ok)
  end
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
  if waiting then
    -- an init runs (or :BB7Init holds the session): answered when it is done
    table.insert(waiting, cb)
    return
  end
  if state.data.ready and M.client and M.client:is_running() then
    cb(true)
    return
  end
  if not M.start() then
    cb(false)
    return
  end
  waiting = { cb }
  local previous = state.data.active_id
  local function finish(ok)
    M.call_held(waiting or {}, ok)
  end
  local project = M.project_initialized(root)
  init_request(root, project, function(reply, global_only)
    if reply.type == "error" then
      notify.daemon_error("initialize", reply.message)
      finish(false)
      return
    end
    state.data.root = root
    M.chosen = root
    state.data.ready = true
    state.data.initialized = project and not reply.global_only
    if state.data.initialized then
      -- the includes this user allowed here before (asked once per project, bb7.consent)
      require("bb7.consent").tell(root)
    end
    if global_only then
      state.data.scope = "global"
    elseif state.data.global_only then
      state.data.scope = "project" -- :BB7Init made this a project
    end
    state.data.global_only = global_only
    if reply.default_model and not state.data.model then
      state.data.model = reply.default_model
    end
    M.request("chat_active", {}, function(active)
      local id = active.type == "chat_active" and active.id or nil
      if id or not previous then
        state.data.active_id = id
        if active.global then
          state.data.scope = "global"
        end
        return finish(true)
      end
      -- a restarted daemon has no active chat: select the one this session had
      M.request("chat_select", { id = previous, global = state.data.scope == "global" or nil }, function(selected)
        state.data.active_id = selected.type ~= "error" and previous or nil
        finish(true)
      end)
    end)
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
  local stream = state.data.stream
  state.data.stream = nil
  if stream and stream.id then
    state.emit("stream_end", { id = stream.id, type = "error", message = "bb7 daemon stopped", cancelled = true })
  end
  if close_log then
    close_log()
    close_log = nil
  end
end

return M
