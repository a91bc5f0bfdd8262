-- Message actions: the draft, send (with re-ask of a failed pair), cancel, retry after a
-- diff_error, fork, edit, deleting a failed pair.
local Client = require("bb7.client")
local common = require("bb7.actions.common")
local config = require("bb7.config")
local failed = require("bb7.failed")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")
local sync = require("bb7.actions.sync")

local M = {}
local done = common.done

--- Saves the input's text as the active chat's draft. While a send streams the daemon refuses
--- `save_draft` ("Another request is already in progress"): the text is kept here and saved
--- when the reply ends, before the chat is loaded again, so the draft the reload brings back is
--- the one typed last (never the message just sent, never nothing over text typed meanwhile).
function M.save_draft(text, cb)
  if not state.data.active_id then
    return done(cb, false)
  end
  if state.data.chat then
    state.data.chat.draft = text
  end
  if state.data.stream then
    state.data.pending_draft = { chat_id = state.data.active_id, text = text }
    return done(cb, true)
  end
  local chat_id = state.data.active_id
  local outgoing, err = require("bb7.bigdraft").outgoing(chat_id, text)
  if not outgoing then
    notify.error("Cannot save the draft: " .. tostring(err))
    return done(cb, false)
  end
  session.request("save_draft", { draft = outgoing }, function(reply)
    if Client.gone(reply) then
      -- kept, and saved when the chat is loaded from the restarted daemon (bb7.actions.sync)
      state.data.pending_draft = { chat_id = chat_id, text = text }
    elseif reply.type == "error" then
      notify.daemon_error("save the draft", reply.message)
    end
    done(cb, reply.type ~= "error")
  end)
end

-- Saves the draft kept while a send streamed (M.save_draft), then calls cb().
local function flush_draft(cb)
  local pending = state.data.pending_draft
  state.data.pending_draft = nil
  if not pending or pending.chat_id ~= state.data.active_id then
    return cb()
  end
  local outgoing = require("bb7.bigdraft").outgoing(pending.chat_id, pending.text) or ""
  session.request("save_draft", { draft = outgoing }, function(reply)
    if Client.gone(reply) then
      state.data.pending_draft = pending
    elseif reply.type == "error" then
      notify.daemon_error("save the draft", reply.message)
    end
    cb()
  end)
end

-- After a send the daemon refused before recording it (no model, an instruction error...):
-- the message is not in the chat, so it goes back into the input unless something was typed.
local function keep_unsent(content)
  local chat = state.data.chat
  if not chat then
    return
  end
  for i = #(chat.messages or {}), 1, -1 do
    local message = chat.messages[i]
    if message.role == "user" then
      if failed.text_of(message) == content then
        return
      end
      break
    end
  end
  if (chat.draft or "") == "" then
    M.save_draft(content, function()
      state.emit("chat")
    end)
  end
end

local function stream(content, retry_context, cb)
  local fields = { content = content, model = state.data.model }
  local effort = state.data.reasoning_effort
  if effort and effort ~= "" and effort ~= "none" then
    fields.reasoning_effort = effort
  end
  if retry_context then
    fields.retry_context = retry_context
  end
  local started = false
  local id
  id = session.request("send", fields, function(msg)
    if msg.type == "chunk" or msg.type == "thinking" then
      state.emit("stream", msg)
      return
    end
    local running = state.data.stream
    state.data.stream = nil
    if msg.type == "done" then
      state.data.diff_error = nil
      state.data.last_usage = msg.usage
      state.data.trimmed = tonumber(msg.trimmed) or 0
    elseif msg.type == "diff_error" then
      state.data.diff_error = { errors = msg.errors or {}, tool_calls = msg.tool_calls or {}, chat_id = state.data.active_id }
      state.data.last_usage = msg.usage
    end
    msg.cancelled = (running and running.cancelled) or msg.message == failed.ABORTED
    state.emit("stream_end", msg)
    if Client.gone(msg) then
      -- the daemon died: the preview says so, the restart offer follows, and there is nothing
      -- to load (each step failing said so once more); a draft typed meanwhile stays pending
      return done(cb, msg)
    end
    if msg.type == "error" and not msg.cancelled then
      -- a labelled failure stays in the chat as its error row, so the notice may be brief
      local labelled = failed.parse(msg.message) ~= nil
      notify.daemon_error("send", labelled and failed.display(msg.message) or msg.message, labelled)
    end
    if started then
      flush_draft(function()
        sync.load_chat(function(ok)
          if ok and msg.type == "error" then
            keep_unsent(content)
          end
        end)
        sync.refresh_balance()
      end)
    end
    done(cb, msg)
  end, true)
  if not id then
    return
  end
  started = true
  state.data.stream = { id = id, cancelled = false }
  state.emit("stream_start", { id = id, content = content, model = state.data.model })
end

--- Sends `content` (and, for a retry, `retry_context`) and streams the reply into the preview.
--- After a re-ask, the failed pair is removed first (`chat_edit` when it is the last pair,
--- `message_delete` otherwise), so the new pair is appended at the end.
function M.send(content, retry_context, cb)
  if state.data.stream then
    notify.warn("Another request is already in progress")
    return done(cb, false)
  end
  if not state.data.active_id then
    notify.warn("No active chat")
    return done(cb, false)
  end
  if content == nil or vim.trim(content) == "" then
    notify.warn("Nothing to send")
    return done(cb, false)
  end
  local consent = require("bb7.consent")
  if #consent.pending(state.data.chat, state.data.root) > 0 then
    -- instructions that include files: asked once per project before they are sent
    if not consent.ask(state.data.chat, state.data.root) then
      return done(cb, false)
    end
    -- the stream must start in this call (callers check state.data.stream right after)
    state.data.stream = { pending = true, cancelled = false }
    return consent.tell(state.data.root, function()
      sync.load_chat(function()
        state.data.stream = nil
        M.send(content, retry_context, cb)
        if not state.data.stream then
          -- the input was cleared for the send: give the text back as the draft
          M.save_draft(content)
          state.emit("chat")
        end
      end)
    end)
  end
  local instructions_error = require("bb7.instructions").error(state.data.chat)
  if instructions_error then
    -- blocked until fixed; the chat is read again so a fixed file lets the next send go
    notify.warn("Fix the project instructions before sending: " .. instructions_error)
    sync.load_chat()
    return done(cb, false)
  end
  local reask = state.data.reask
  if not reask or reask.chat_id ~= state.data.active_id then
    state.data.reask = nil
    return stream(content, retry_context, cb)
  end
  state.data.reask = nil
  local action, fields
  if reask.last then
    action, fields = "chat_edit", { chat_id = state.data.active_id, message_index = reask.index, content = content }
  else
    action, fields = "message_delete", { index = reask.index }
  end
  -- the stream must start in this call (callers check state.data.stream right after)
  state.data.stream = { pending = true, cancelled = false }
  session.request(action, fields, function(reply)
    state.data.stream = nil
    state.data.pending_draft = nil
    if reply.type == "error" then
      notify.daemon_error("remove the failed message", reply.message)
      -- the input was cleared for the send: give the text back as the draft
      M.save_draft(content)
      state.emit("chat")
      return done(cb, false)
    end
    stream(content, retry_context, cb)
  end)
end

--- Before Neovim exits: a draft kept while a reply streamed (the daemon refuses `save_draft`
--- then) is saved after cancelling the reply, so `:qa` during a reply does not lose it (the
--- composer's text, or the input's). Waits a few seconds at most.
function M.save_before_exit()
  local client = session.client
  if not state.data.pending_draft or not client or not client:is_running() then
    return
  end
  if state.data.stream then
    M.cancel()
    vim.wait(3000, function()
      return state.data.stream == nil
    end, 10)
  end
  -- the end of the reply saved it (flush_draft); wait for the daemon's answer
  vim.wait(2000, function()
    return state.data.pending_draft == nil and next(client.pending) == nil
  end, 10)
end

function M.cancel(cb)
  local running = state.data.stream
  if not running and state.data.reask then
    state.data.reask = nil
    notify.info("Re-ask cancelled")
    return done(cb, true)
  end
  if not running and state.data.diff_error then
    return M.abort_retry(cb)
  end
  if not running or running.pending then
    notify.warn("Nothing to cancel")
    return done(cb, false)
  end
  running.cancelled = true
  session.request("cancel", { target_request_id = running.id }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("cancel", reply.message)
      if state.data.stream == running then
        -- the daemon runs no such send: its end was lost, so end it here (or nothing could be
        -- sent again until Neovim restarts)
        if session.client then
          session.client:forget(running.id)
        end
        state.data.stream = nil
        state.emit("stream_end", { id = running.id, type = "error", message = reply.message, cancelled = true })
        flush_draft(function()
          sync.load_chat()
        end)
      end
      return done(cb, false)
    end
    done(cb, true)
  end)
end

--- The `retry_context` a send carries after a `diff_error` (the errors and the failed calls),
--- or nil. Any send does, as in the first plugin, until the retry is aborted.
function M.retry_context()
  local diff = state.data.diff_error
  if not diff then
    return nil
  end
  return { errors = diff.errors, tool_calls = diff.tool_calls }
end

--- Drops the pending retry after a `diff_error` (the first plugin's <C-x>): the chat records
--- "File changes failed to apply." and the next send goes without the failed edits.
function M.abort_retry(cb)
  if not state.data.diff_error then
    notify.warn("No retry to abort")
    return done(cb, false)
  end
  state.data.diff_error = nil
  state.emit("retry_aborted")
  session.request("add_system_message", { message = "File changes failed to apply." }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("record the aborted retry", reply.message)
    end
    notify.info("Retry aborted")
    sync.load_chat(function(ok)
      done(cb, ok)
    end)
  end)
end

--- After a `diff_error`: sends again with the errors and failed calls as `retry_context`.
function M.retry(cb)
  local diff = state.data.diff_error
  if not diff then
    notify.warn("Nothing to retry")
    return done(cb, false)
  end
  M.send(config.options.retry_message, { errors = diff.errors, tool_calls = diff.tool_calls }, cb)
end

local function warn_context(warnings)
  for _, warning in ipairs(warnings or {}) do
    notify.warn(string.format("%s was %s since that message", warning.path, warning.issue))
  end
end

local function user_message(index)
  local chat = state.data.chat
  local message = chat and chat.messages and chat.messages[index + 1]
  if not message or message.role ~= "user" then
    notify.warn("Cursor is not on a user message")
    return nil
  end
  return message
end

--- Forks the active chat at the user message with 0-based `index`; the new chat becomes active
--- with that message as its draft.
function M.fork(index, cb)
  if not user_message(index) then
    return done(cb, false)
  end
  local fields = common.active_store({ chat_id = state.data.active_id, fork_message_index = index })
  common.show_active_store()
  session.request("fork_chat", fields, function(reply)
    if reply.type ~= "fork_result" then
      notify.daemon_error("fork the chat", reply.message)
      return done(cb, false)
    end
    notify.info("Forked chat")
    warn_context(reply.context_warnings)
    state.data.active_id = reply.new_chat_id
    local chats = require("bb7.actions.chats")
    chats.refresh_chats()
    chats.select_chat(reply.new_chat_id, cb)
  end)
end

--- Truncates the active chat before the user message `index` and makes it the draft.
function M.edit(index, cb)
  local message = user_message(index)
  if not message then
    return done(cb, false)
  end
  session.request("chat_edit", {
    chat_id = state.data.active_id,
    message_index = index,
    content = failed.text_of(message),
  }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("edit the message", reply.message)
      return done(cb, false)
    end
    warn_context(reply.context_warnings)
    state.data.last_usage, state.data.trimmed = nil, 0
    sync.load_chat(cb)
  end)
end

---@param index integer 0-based index of any message of the pair
---@return bb7.FailedPair|nil
local function failed_pair(index)
  local chat = state.data.chat
  local pair = chat and failed.at(chat.messages or {}, index)
  if not pair then
    notify.warn("Cursor is not on a failed message")
  end
  return pair
end

--- Re-ask of the failed pair holding message `index`: returns its user text for the input;
--- the next send replaces the pair. nil when the message is not in a failed pair.
function M.reask(index)
  local pair = failed_pair(index)
  if not pair then
    return nil
  end
  state.data.reask = { chat_id = state.data.active_id, index = pair.index, last = pair.last }
  notify.info("Re-ask: edit the message and send it; the failed one is then removed")
  return pair.text
end

--- Deletes the failed pair holding message `index` (no confirmation: it holds no reply).
function M.delete_failed(index, cb)
  local pair = failed_pair(index)
  if not pair then
    return done(cb, false)
  end
  session.request("message_delete", { index = pair.index }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("delete the failed message", reply.message)
      return done(cb, false)
    end
    -- indexes after the deleted pair moved: a pending re-ask would point elsewhere
    state.data.reask = nil
    notify.info("Deleted the failed message")
    sync.load_chat(cb)
  end)
end

return M
