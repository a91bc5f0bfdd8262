-- What the commands and pane keys do: each action talks to the daemon through bb7.session,
-- updates bb7.state, emits an event for the panes, and tells the user the result in the
-- spec's words.
local config = require("bb7.config")
local notify = require("bb7.notify")
local pins = require("bb7.pins")
local render = require("bb7.render")
local session = require("bb7.session")
local state = require("bb7.state")
local status = require("bb7.status")

local M = {}

local function done(cb, ...)
  if cb then
    cb(...)
  end
end

-- Chats ---------------------------------------------------------------------------------------

function M.refresh_chats(cb)
  session.request("chat_list", {}, function(reply)
    if reply.type ~= "chat_list" then
      notify.daemon_error("list chats", reply.message)
      return done(cb, false)
    end
    state.data.chats = pins.sort(reply.chats or {}, pins.load(state.data.root))
    state.emit("chats")
    done(cb, true)
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
    state.data.chat = reply
    state.data.active_id = reply.id
    if reply.model and reply.model ~= "" then
      state.data.model = reply.model
    end
    state.emit("chat")
    M.refresh_files()
    M.refresh_estimate()
    done(cb, true)
  end)
end

function M.select_chat(id, cb)
  session.request("chat_select", { id = id }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("open the chat", reply.message)
      return done(cb, false)
    end
    state.data.active_id = id
    state.data.last_usage, state.data.trimmed = nil, 0
    M.load_chat(cb)
  end)
end

function M.new_chat(name, cb)
  local fields = {}
  if name and name ~= "" then
    fields.name = name
  end
  session.request("chat_new", fields, function(reply)
    if reply.type == "error" then
      notify.daemon_error("create a chat", reply.message)
      return done(cb, false)
    end
    state.data.active_id = reply.id
    M.refresh_chats()
    M.load_chat(cb)
  end)
end

function M.delete_chat(id, cb)
  session.request("chat_delete", { id = id }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("delete the chat", reply.message)
      return done(cb, false)
    end
    notify.info("Deleted chat")
    if state.data.active_id == id then
      state.data.active_id, state.data.chat, state.data.files = nil, nil, {}
      state.emit("chat")
      state.emit("files")
    end
    M.refresh_chats(cb)
  end)
end

function M.rename_chat(id, name, cb)
  session.request("chat_rename", { id = id, name = name }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("rename the chat", reply.message)
      return done(cb, false)
    end
    if state.data.chat and state.data.chat.id == id then
      state.data.chat.name = name
      state.emit("status")
    end
    M.refresh_chats(cb)
  end)
end

function M.toggle_pin(id, cb)
  local pinned, err = pins.toggle(state.data.root, id)
  if pinned == nil then
    notify.error("Cannot write file " .. pins.path(state.data.root) .. ": " .. tostring(err))
    return done(cb, false)
  end
  M.refresh_chats(cb)
end

--- Asks the daemon for a new title of the active chat from its first user message.
function M.regenerate_title(cb)
  local chat = state.data.chat
  local first
  for _, message in ipairs(chat and chat.messages or {}) do
    if message.role == "user" then
      first = render.message_text(message)
      break
    end
  end
  if not first then
    notify.warn("No message to make a title from")
    return done(cb, false)
  end
  session.request("generate_title", { chat_id = chat.id, content = first }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("generate a title", reply.message)
      return done(cb, false)
    end
    done(cb, true)
  end)
end

function M.search(query, cb)
  session.request("search_chats", { query = query }, function(reply)
    if reply.type ~= "search_results" then
      notify.daemon_error("search chats", reply.message)
      return done(cb, nil)
    end
    done(cb, reply.results or {})
  end)
end

-- Context -------------------------------------------------------------------------------------

function M.refresh_files(cb)
  if not state.data.active_id then
    state.data.files = {}
    state.emit("files")
    return done(cb, false)
  end
  session.request("get_file_statuses", {}, function(reply)
    if reply.type ~= "file_statuses" then
      if reply.message ~= "No active chat" then
        notify.daemon_error("list files", reply.message)
      end
      return done(cb, false)
    end
    state.data.files = status.compute_all(state.data.root, reply.files or {})
    state.emit("files")
    done(cb, true)
  end)
end

--- Recomputes the frontend statuses (after a buffer write) without asking the daemon.
function M.recompute_statuses()
  if #state.data.files > 0 and state.data.root then
    status.compute_all(state.data.root, state.data.files)
    state.emit("files")
  end
end

function M.refresh_estimate()
  session.request("estimate_tokens", {}, function(reply)
    if reply.type == "token_estimate" then
      local function fixed(e)
        return e and ((tonumber(e.total) or 0) - (tonumber(e.history) or 0)) or nil
      end
      local moved = fixed(state.data.estimate) ~= fixed(reply)
      state.data.estimate = reply
      -- the non-history tokens move the context boundary: redraw the dimming then
      state.emit(moved and "chat" or "status")
    end
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

local function section_label(path, first, last)
  if first then
    return string.format("%s:%d-%d", path, first, last)
  end
  return path
end

--- Adds a file (or, with `first`/`last`, a section of it) with `content`.
function M.add(path, content, opts, cb)
  opts = opts or {}
  local action, fields
  if opts.first then
    action = "context_add_section"
    fields = { path = path, content = content, start_line = opts.first, end_line = opts.last }
  else
    action = "context_add"
    fields = { path = path, content = content, readonly = opts.readonly == true }
  end
  session.request(action, fields, function(reply)
    if reply.type == "error" then
      if reply.message == "Context file already exists" then
        notify.warn("File already in context")
      else
        notify.daemon_error("add file", reply.message)
      end
      return done(cb, false)
    end
    notify.info("Added " .. section_label(path, opts.first, opts.last))
    M.load_chat()
    done(cb, true)
  end)
end

function M.remove(path, opts, cb)
  opts = opts or {}
  local action, fields = "context_remove", { path = path }
  if opts.first then
    action = "context_remove_section"
    fields = { path = path, start_line = opts.first, end_line = opts.last }
  end
  session.request(action, fields, function(reply)
    if reply.type == "error" then
      if reply.message == "File not found" then
        notify.warn("File not in context")
      else
        notify.daemon_error("remove file", reply.message)
      end
      return done(cb, false)
    end
    notify.info("Removed " .. section_label(path, opts.first, opts.last))
    M.load_chat()
    done(cb, true)
  end)
end

--- Re-snapshots a context file from its local content.
function M.update(path, cb)
  local content = status.local_content(status.absolute(state.data.root, path))
  if content == nil then
    notify.error("Cannot read file " .. path)
    return done(cb, false)
  end
  session.request("context_update", { path = path, content = content }, function(reply)
    if reply.type == "error" then
      if reply.message == "File not found" then
        notify.warn("File not in context")
      else
        notify.daemon_error("update file", reply.message)
      end
      return done(cb, false)
    end
    notify.info("Updated " .. path)
    M.load_chat()
    done(cb, true)
  end)
end

function M.set_readonly(path, readonly, cb)
  session.request("context_set_readonly", { path = path, readonly = readonly }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("set read-only", reply.message)
      return done(cb, false)
    end
    notify.info((readonly and "Set read-only " or "Set writable ") .. path)
    M.load_chat(cb)
  end)
end

local function file_entry(path)
  for _, file in ipairs(state.data.files) do
    if file.path == path and not file.start_line then
      return file
    end
  end
end

-- Reloads an open, unmodified buffer of `abs` after its file changed on disk.
local function reload_buffer(abs)
  local buf = vim.fn.bufnr(abs)
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].modified then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("silent! edit")
    end)
  end
end

-- Applies one output without feedback; calls cb(ok, message).
local function apply_one(path, cb)
  session.request("apply_file", { path = path }, function(reply)
    if reply.type == "error" then
      return cb(false, reply.message)
    end
    reload_buffer(status.absolute(state.data.root, path))
    cb(true)
  end)
end

--- Whether a file has output that differs from what it would replace.
local function pending_output(file)
  return file.has_output and (file.status == "M" or file.status == "A" or file.status == "!A")
end

function M.apply(path, cb)
  local file = file_entry(path)
  if file and file.has_output and not pending_output(file) then
    notify.info("File already applied")
    return done(cb, false)
  end
  if file and not file.has_output then
    notify.warn("No output to apply")
    return done(cb, false)
  end
  apply_one(path, function(ok, message)
    if not ok then
      if message == "File not found" then
        notify.warn("No output to apply")
      else
        notify.daemon_error("apply " .. path, message)
      end
      return done(cb, false)
    end
    notify.info("Applied " .. path)
    M.load_chat()
    done(cb, true)
  end)
end

function M.apply_all(cb)
  local todo = {}
  for _, file in ipairs(state.data.files) do
    if pending_output(file) then
      table.insert(todo, file.path)
    end
  end
  if #todo == 0 then
    notify.warn("No output to apply")
    return done(cb, false)
  end
  local applied, failed = 0, {}
  local function step(i)
    if i > #todo then
      if #failed > 0 then
        notify.error("Failed to apply " .. table.concat(failed, ", "))
      end
      if applied > 0 then
        notify.info(string.format("Applied %d files", applied))
      end
      M.load_chat()
      return done(cb, #failed == 0)
    end
    apply_one(todo[i], function(ok)
      if ok then
        applied = applied + 1
      else
        table.insert(failed, todo[i])
      end
      step(i + 1)
    end)
  end
  step(1)
end

--- The context-to-output diff of a file, shown in the preview.
function M.show_diff(path)
  local file = file_entry(path)
  if not file then
    notify.warn("File not in context")
    return
  end
  if not file.has_output then
    notify.warn("No output to apply")
    return
  end
  require("bb7.ui.preview").show_diff(path, file.context_content or "", file.output_content or "")
end

--- `:BB7DiffLocal`: the local file and the output side by side in a new tab, native diff mode.
--- Closing the tab tells the daemon (`diff_local_done`).
function M.diff_local(path, cb)
  session.request("get_diff_paths", { path = path }, function(reply)
    if reply.type ~= "diff_paths" then
      if reply.message == "File not found" then
        notify.warn("No output to apply")
      else
        notify.daemon_error("diff " .. path, reply.message)
      end
      return done(cb, false)
    end
    vim.cmd("tabnew " .. vim.fn.fnameescape(reply.local_path))
    vim.cmd("diffthis")
    vim.cmd("vertical rightbelow diffsplit " .. vim.fn.fnameescape(reply.output_path))
    local tab = vim.api.nvim_get_current_tabpage()
    local group = vim.api.nvim_create_augroup("bb7-diff-local-" .. tostring(tab), { clear = true })
    vim.api.nvim_create_autocmd("TabClosed", {
      group = group,
      callback = function()
        if not vim.api.nvim_tabpage_is_valid(tab) then
          vim.api.nvim_del_augroup_by_id(group)
          session.request("diff_local_done", { path = path }, function()
            M.refresh_files()
          end)
        end
      end,
    })
    done(cb, true)
  end)
end

-- Messages ------------------------------------------------------------------------------------

function M.save_draft(text, cb)
  if not state.data.active_id then
    return done(cb, false)
  end
  if state.data.chat then
    state.data.chat.draft = text
  end
  session.request("save_draft", { draft = text }, function(reply)
    done(cb, reply.type ~= "error")
  end)
end

--- Sends `content` (and, for a retry, `retry_context`) and streams the reply into the preview.
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
  local fields = { content = content, model = state.data.model }
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
    local stream = state.data.stream
    state.data.stream = nil
    if msg.type == "done" then
      state.data.diff_error = nil
      state.data.last_usage = msg.usage
      state.data.trimmed = tonumber(msg.trimmed) or 0
    elseif msg.type == "diff_error" then
      state.data.diff_error = { errors = msg.errors or {}, tool_calls = msg.tool_calls or {} }
      state.data.last_usage = msg.usage
    end
    msg.cancelled = stream and stream.cancelled or false
    state.emit("stream_end", msg)
    if msg.type == "error" and not msg.cancelled then
      notify.daemon_error("send", msg.message)
    end
    if started then
      M.load_chat()
      M.refresh_balance()
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

function M.cancel(cb)
  local stream = state.data.stream
  if not stream then
    notify.warn("Nothing to cancel")
    return done(cb, false)
  end
  stream.cancelled = true
  session.request("cancel", { target_request_id = stream.id }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("cancel", reply.message)
      return done(cb, false)
    end
    done(cb, true)
  end)
end

--- After a `diff_error`: sends again with the errors and failed calls as `retry_context`.
function M.retry(cb)
  local failed = state.data.diff_error
  if not failed then
    notify.warn("Nothing to retry")
    return done(cb, false)
  end
  M.send(config.options.retry_message, { errors = failed.errors, tool_calls = failed.tool_calls }, cb)
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
  session.request("fork_chat", { chat_id = state.data.active_id, fork_message_index = index }, function(reply)
    if reply.type ~= "fork_result" then
      notify.daemon_error("fork the chat", reply.message)
      return done(cb, false)
    end
    notify.info("Forked chat")
    warn_context(reply.context_warnings)
    state.data.active_id = reply.new_chat_id
    M.refresh_chats()
    M.select_chat(reply.new_chat_id, cb)
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
    content = render.message_text(message),
  }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("edit the message", reply.message)
      return done(cb, false)
    end
    warn_context(reply.context_warnings)
    state.data.last_usage, state.data.trimmed = nil, 0
    M.load_chat(cb)
  end)
end

-- Models --------------------------------------------------------------------------------------

function M.set_model(model, cb)
  state.data.model = model
  state.emit("status")
  notify.info("Model " .. model)
  if not state.data.active_id then
    return done(cb, true)
  end
  session.request("save_chat_settings", { model = model }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("save the model", reply.message)
      return done(cb, false)
    end
    M.refresh_estimate()
    done(cb, true)
  end)
end

--- The model list (fetched once). `quiet` skips the error notification (the background fetch
--- that only feeds the context counter).
function M.fetch_models(cb, quiet)
  if state.data.models then
    return done(cb, state.data.models)
  end
  session.request("get_models", {}, function(reply)
    if reply.type ~= "models" then
      if not quiet then
        notify.daemon_error("list models", reply.message)
      end
      return done(cb, nil)
    end
    state.data.models = reply.models or {}
    -- the counter depends on the model's context length
    state.emit("chat")
    done(cb, state.data.models)
  end)
end

--- The context length of the current model, when known.
function M.context_length()
  for _, model in ipairs(state.data.models or {}) do
    if model.id == state.data.model then
      return tonumber(model.context_length)
    end
  end
end

return M
