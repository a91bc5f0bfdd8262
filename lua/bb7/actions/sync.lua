-- Reloads what the panes show from the daemon: the active chat, its files, the token estimate,
-- the balance and the instruction files.
local common = require("bb7.actions.common")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")
local status = require("bb7.status")

---@class bb7.FileStatus  one entry of `get_file_statuses`
---@field path string relative to the root, or absolute for external files
---@field status string backend status: "", "M", "A", "!A" or "S"
---@field display_status string|nil with the frontend's R, ~ and ~M (bb7.status)
---@field has_output boolean
---@field in_context boolean
---@field readonly boolean
---@field context_content string|nil
---@field output_content string|nil
---@field start_line integer|nil sections only
---@field end_line integer|nil

---@class bb7.Chat  the `chat` reply
---@field id string
---@field name string
---@field model string
---@field reasoning_effort string|nil "", low, medium or high
---@field draft string
---@field messages table[]
---@field global boolean|nil a global chat

local M = {}
local done = common.done

-- Status replies are answered by the daemon's workers and can arrive out of order: only the
-- reply to the latest request is shown (an older one would bring back a deleted output or
-- stale content that apply compares against). The callers of the requests it replaced are
-- answered with it.
local statuses_asked = 0
local statuses_waiting = {}

function M.refresh_files(cb)
  if not state.data.active_id then
    statuses_asked = statuses_asked + 1
    local waiting = statuses_waiting
    statuses_waiting = {}
    state.data.files = {}
    state.emit("files")
    for _, waiter in ipairs(waiting) do
      done(waiter, false)
    end
    return done(cb, false)
  end
  statuses_asked = statuses_asked + 1
  local generation = statuses_asked
  table.insert(statuses_waiting, cb or false)
  session.request("get_file_statuses", {}, function(reply)
    if generation ~= statuses_asked then
      return -- a newer request is out: its reply decides
    end
    local waiting = statuses_waiting
    statuses_waiting = {}
    local ok = reply.type == "file_statuses"
    if ok then
      state.data.files = status.compute_all(state.data.root, reply.files or {})
      state.emit("files")
    elseif reply.message ~= "No active chat" then
      notify.daemon_error("list files", reply.message)
    end
    for _, waiter in ipairs(waiting) do
      done(waiter or nil, ok)
    end
  end)
end

--- Recomputes the frontend statuses (after a buffer write) without asking the daemon.
function M.recompute_statuses()
  if #state.data.files > 0 and state.data.root then
    status.compute_all(state.data.root, state.data.files)
    state.emit("files")
  end
end

--- Asks for the token estimate; `input_text` (the draft being typed) is counted in `total`.
function M.refresh_estimate(input_text, cb)
  local fields = {}
  if input_text and input_text ~= "" then
    fields.input_text = input_text
  end
  session.request("estimate_tokens", fields, function(reply)
    if reply.type == "token_estimate" then
      local function fixed(e)
        return e and ((tonumber(e.total) or 0) - (tonumber(e.history) or 0) - (tonumber(e.input_text) or 0)) or nil
      end
      local moved = fixed(state.data.estimate) ~= fixed(reply)
      state.data.estimate = reply
      -- the non-history tokens move the context boundary: redraw the dimming then
      state.emit(moved and "chat" or "status")
    end
    done(cb, reply.type == "token_estimate")
  end)
end

function M.refresh_balance()
  session.request("get_balance", {}, function(reply)
    if reply.type == "balance" then
      state.data.balance = reply
      state.emit("status")
    end
  end)
end

--- Which instruction files exist (and the project file's parse error).
function M.refresh_customization(cb)
  session.request("get_customization_info", {}, function(reply)
    if reply.type == "customization_info" then
      state.data.customization = reply
      state.emit("status")
    end
    done(cb, reply.type == "customization_info")
  end)
end

local reloading, reload_again = false, false

--- Reloads the active chat once for a burst of changes: a call while a reload runs asks for
--- one more after it, not one each (300 single adds reloaded the chat and its growing file
--- list 300 times). The daemon answers in order, so the first reload's answer comes after the
--- changes sent before it, and the one more covers those sent meanwhile.
function M.reload()
  if reloading then
    reload_again = true
    return
  end
  reloading = true
  M.load_chat(function()
    reloading = false
    if reload_again then
      reload_again = false
      M.reload()
    end
  end)
end

--- Reloads the active chat (chat_get), then its files and token estimate.
function M.load_chat(cb)
  session.request("chat_get", {}, function(reply)
    if reply.type ~= "chat" then
      if reply.message == "No active chat" then
        state.data.active_id, state.data.chat = nil, nil
        state.emit("chat")
        return done(cb, false)
      end
      notify.daemon_error("load the chat", reply.message)
      return done(cb, false)
    end
    local pending = state.data.pending_draft
    if pending and pending.chat_id == reply.id and not state.data.stream then
      -- a draft the daemon could not take (it had died): it wins over the stored one, which
      -- would have replaced the text in the input
      state.data.pending_draft = nil
      reply.draft = pending.text
      local outgoing = require("bb7.bigdraft").outgoing(reply.id, pending.text) or ""
      session.request("save_draft", { draft = outgoing }, function(saved)
        if saved.type == "error" then
          notify.daemon_error("save the draft", saved.message)
        end
      end)
    end
    if (reply.draft or "") == "" then
      -- a draft too long for the daemon (bb7.bigdraft)
      reply.draft = require("bb7.bigdraft").take(reply.id) or reply.draft
    end
    state.data.chat = reply
    state.data.active_id = reply.id
    if state.data.diff_error and state.data.diff_error.chat_id ~= reply.id then
      -- a pending retry belongs to the chat whose edits failed
      state.data.diff_error = nil
    end
    if reply.model and reply.model ~= "" then
      state.data.model = reply.model
    end
    state.data.reasoning_effort = (reply.reasoning_effort and reply.reasoning_effort ~= "") and reply.reasoning_effort or "none"
    state.emit("chat")
    M.refresh_files()
    M.refresh_estimate()
    done(cb, true)
  end)
end

return M
