-- An in-process stand-in for the bb7 daemon, used as the client's transport. It answers like
-- specs/bb7-protocol.md and the real daemon's transcripts (error strings included), keeps its
-- chats in memory and creates `.bb7/` on disk for `bb7_init`. Output is delivered on the event
-- loop, optionally cut into pieces of `split` bytes to exercise the line buffer.
local Fake = {}
Fake.__index = Fake

function Fake.new()
  local self = setmetatable({}, Fake)
  self.requests = {} -- every request received, decoded
  self.chats = {} -- id -> chat
  self.order = {} -- chat ids, newest first
  self.active = nil
  self.root = nil
  self.ready = false
  self.project = false
  self.split = nil
  self.next_chat = 0
  self.send_script = nil -- function(fake, request, emit) or list of messages
  self.models = {
    { id = "anthropic/claude-sonnet-4", name = "Claude Sonnet 4", context_length = 200000, supports_reasoning = true, pricing = { prompt = "0.000003", completion = "0.000015" } },
    { id = "openai/gpt-4o", name = "GPT-4o", context_length = 128000, pricing = { prompt = "0.0000025", completion = "0.00001" } },
  }
  self.handlers = nil
  self.running = false
  self.includes = nil -- the `project_includes` of chat_get ({path, bytes, needs_consent?})
  self.allowed_includes = {} -- what `allow_includes` gave
  return self
end

--- `instructions_info` as the daemon gives it: the includes, and the error of the first one
--- that needs consent and was not allowed.
function Fake:instructions_info()
  if not self.includes then
    return nil
  end
  local info = { project_exists = true, global_exists = false, project_includes = self.includes }
  for n, include in ipairs(self.includes) do
    if include.needs_consent and not vim.tbl_contains(self.allowed_includes, include.path) then
      info.project_error = string.format(
        "%s/.bb7/instructions:%d: include %s is not tracked by git: it is sent only once you allow it",
        self.root or "",
        n,
        include.path
      )
      break
    end
  end
  return info
end

--- The transport function to give bb7.session / bb7.client.
function Fake:transport()
  return function(_, handlers)
    self.handlers = handlers
    self.running = true
    self.buffer = ""
    return {
      pid = 4242,
      write = function(data)
        self:_input(data)
      end,
      stop = function()
        self.running = false
      end,
    }
  end
end

function Fake:emit(msg)
  local line = vim.json.encode(msg) .. "\n"
  local handlers = self.handlers
  vim.schedule(function()
    if not self.running then
      return
    end
    if self.split then
      for i = 1, #line, self.split do
        handlers.on_stdout(line:sub(i, i + self.split - 1))
      end
    else
      handlers.on_stdout(line)
    end
  end)
end

--- Simulates the daemon dying.
function Fake:die(code, stderr)
  local handlers = self.handlers
  vim.schedule(function()
    self.running = false
    if stderr then
      handlers.on_stderr(stderr)
    end
    handlers.on_exit(code, 0)
  end)
end

function Fake:_input(data)
  self.buffer = self.buffer .. data
  while true do
    local nl = self.buffer:find("\n", 1, true)
    if not nl then
      break
    end
    local line = self.buffer:sub(1, nl - 1)
    self.buffer = self.buffer:sub(nl + 1)
    local req = vim.json.decode(line)
    table.insert(self.requests, req)
    self:_handle(req)
  end
end

--- The requests received with this action.
function Fake:sent(action)
  local out = {}
  for _, req in ipairs(self.requests) do
    if req.action == action then
      table.insert(out, req)
    end
  end
  return out
end

local function reply(req, msg)
  msg.request_id = req.request_id
  return msg
end

local function err(req, message)
  return reply(req, { type = "error", message = message })
end

function Fake:chat()
  return self.active and self.chats[self.active]
end

function Fake:new_chat(name, global)
  self.next_chat = self.next_chat + 1
  local id = string.format("%010x", self.next_chat)
  self.chats[id] = {
    id = id,
    name = name or ("Chat " .. self.next_chat),
    created = "2026-01-01T00:00:00Z",
    model = "anthropic/claude-sonnet-4",
    draft = "",
    messages = {},
    context = {},
    outputs = {},
    global = global == true,
    reasoning_effort = "",
  }
  table.insert(self.order, 1, id)
  return id
end

local function find_context(chat, path, first, last)
  for i, file in ipairs(chat.context) do
    if file.path == path and file.start_line == first and file.end_line == last then
      return i, file
    end
  end
end

function Fake:statuses(chat)
  local files = {}
  local seen = {}
  for _, file in ipairs(chat.context) do
    local entry = {
      path = file.path,
      in_context = true,
      readonly = file.readonly,
      external = false,
      tokens = math.ceil(#file.content / 4),
      context_content = file.content,
      status = "",
      has_output = false,
    }
    if file.start_line then
      entry.status = "S"
      entry.start_line, entry.end_line = file.start_line, file.end_line
    else
      seen[file.path] = true
      local out = chat.outputs[file.path]
      if out then
        entry.has_output = true
        entry.output_content = out
        if out ~= file.content then
          entry.status = "M"
        end
      end
    end
    table.insert(files, entry)
  end
  for path, out in pairs(chat.outputs) do
    if not seen[path] then
      local exists = vim.fn.filereadable(self.root .. "/" .. path) == 1
      table.insert(files, {
        path = path,
        in_context = false,
        has_output = true,
        readonly = false,
        external = false,
        tokens = math.ceil(#out / 4),
        output_content = out,
        status = exists and "!A" or "A",
      })
    end
  end
  return files
end

local NEEDS_CHAT = {
  chat_get = true, context_add = true, context_add_section = true, context_update = true,
  context_remove = true, context_remove_section = true, context_list = true,
  context_set_readonly = true, send = true, save_draft = true, get_file_statuses = true,
  apply_file = true, apply_file_as = true, output_delete = true, message_delete = true, get_diff_paths = true, estimate_tokens = true, save_chat_settings = true,
  diff_local_done = true,
}

-- Answered while a send streams, as the real daemon's `allowed_while_streaming`: the
-- read-only actions and the changes that do not touch the streaming chat. Everything else is
-- refused with "Another request is already in progress" (save_draft among them).
local WHILE_STREAMING = {
  chat_get = true, chat_list = true, chat_active = true, search_chats = true, context_list = true,
  get_context_file = true, get_output_file = true, get_diff_paths = true, get_file_statuses = true,
  get_customization_info = true, estimate_tokens = true, estimate_text_tokens = true,
  get_models = true, get_balance = true, shutdown = true, ping = true, version = true, cancel = true,
  chat_rename = true, chat_force_unlock = true, bb7_init = true, generate_title = true, init = true,
  allow_includes = true,
}

function Fake:_handle(req)
  local a = req.action
  local other_move = a == "chat_move" and req.id ~= self.active
  if self.streaming and not WHILE_STREAMING[a] and a ~= "send" and not other_move then
    return self:emit(err(req, "Another request is already in progress"))
  end
  if a == "ping" or a == "shutdown" then
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "version" then
    return self:emit(reply(req, { type = "version", version = "0.1.0" }))
  elseif a == "init" then
    if req.project_root ~= "" and vim.fn.isdirectory(req.project_root .. "/.bb7") == 0 then
      return self:emit(err(req, "Not initialized. Run :BB7Init"))
    end
    self.root = req.project_root
    self.ready = true
    self.project = self.root ~= ""
    local msg = { type = "ok" }
    if not self.project then
      msg.global_only = true
    end
    return self:emit(reply(req, msg))
  elseif a == "bb7_init" then
    if vim.fn.isdirectory(req.project_root .. "/.bb7") == 1 then
      return self:emit(err(req, "Already initialized"))
    end
    vim.fn.mkdir(req.project_root .. "/.bb7/chats", "p")
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "cancel" then
    if self.streaming and self.streaming.request_id == req.target_request_id then
      self.streaming.cancelled = true
      self:emit(reply(req, { type = "ok" }))
      return
    end
    return self:emit(err(req, "No request with that id is running"))
  end
  if not self.ready then
    return self:emit(err(req, "Not initialized. Run :BB7Init"))
  end
  if a == "get_models" then
    return self:emit(reply(req, { type = "models", models = self.models }))
  elseif a == "get_balance" then
    return self:emit(reply(req, { type = "balance", total_credits = 10, total_usage = 3.45 }))
  elseif a == "chat_list" then
    local chats = {}
    local global = req.global == true or not self.project
    for _, id in ipairs(self.order) do
      local c = self.chats[id]
      if c.global == global then
        table.insert(chats, { id = id, name = c.name, created = c.created, locked = c.locked or nil })
      end
    end
    return self:emit(reply(req, { type = "chat_list", chats = chats }))
  elseif a == "chat_active" then
    local c = self.active and self.chats[self.active]
    return self:emit(reply(req, { type = "chat_active", id = self.active, global = c and c.global or nil }))
  elseif a == "chat_move" then
    local c = self.chats[req.id]
    if not c then
      return self:emit(err(req, "Chat not found"))
    end
    if req.to ~= "global" and req.to ~= "project" then
      return self:emit(err(req, "Missing or invalid field: to (must be 'global' or 'project')"))
    end
    if not self.project then
      return self:emit(err(req, "Not initialized. Run :BB7Init"))
    end
    if req.to == "global" and next(c.outputs or {}) ~= nil then
      -- as bb7: global chats have no outputs
      return self:emit(err(req, "chat has pending file modifications — apply or reject changes before moving"))
    end
    c.global = req.to == "global"
    if not self.streaming then
      -- as the real daemon: the moved chat becomes the active one
      self.active = req.id
    end
    return self:emit(reply(req, { type = "ok", id = req.id }))
  elseif a == "get_customization_info" then
    return self:emit(reply(req, vim.tbl_extend("force", { type = "customization_info" }, self.customization or {
      system_override = false, global_instructions = true, project_instructions = false, project_instructions_error = "",
    })))
  elseif a == "prepare_instructions" then
    local paths = {
      project = self.root .. "/.bb7/instructions",
      global = vim.env.HOME .. "/.config/bb7/instructions",
      system = vim.env.HOME .. "/.config/bb7/system_prompt.md",
    }
    local path = paths[req.level]
    if not path then
      return self:emit(err(req, "invalid level: must be project, global, or system"))
    end
    if vim.fn.filereadable(path) == 0 then
      vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
      vim.fn.writefile({ "# Instructions" }, path)
    end
    return self:emit(reply(req, { type = "instructions_path", path = path }))
  elseif a == "chat_new" then
    local id = self:new_chat(req.name, req.global == true or not self.project)
    self.active = id
    return self:emit(reply(req, { type = "ok", id = id }))
  elseif a == "chat_new_with_context" then
    local source = self.chats[req.source_chat_id]
    local global = req.global == true or not self.project
    if not source or source.global ~= global then
      return self:emit(err(req, "Chat not found"))
    end
    local id = self:new_chat(nil, global)
    self.chats[id].context = vim.deepcopy(source.context)
    self.chats[id].model = source.model
    self.active = id
    return self:emit(reply(req, { type = "ok", id = id }))
  elseif a == "chat_select" then
    local c = self.chats[req.id]
    if not c or c.global ~= (req.global == true or not self.project) then
      return self:emit(err(req, "Chat not found"))
    end
    if c.locked then
      return self:emit(err(req, "Chat is locked by another bb7 process (PID 1). Close it there or use chat_force_unlock"))
    end
    self.active = req.id
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "chat_delete" then
    if not self.chats[req.id] then
      return self:emit(err(req, "Chat not found"))
    end
    self.chats[req.id] = nil
    self.order = vim.tbl_filter(function(id)
      return id ~= req.id
    end, self.order)
    if self.active == req.id then
      self.active = nil
    end
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "chat_force_unlock" then
    if not self.chats[req.id] then
      return self:emit(err(req, "Chat not found"))
    end
    self.chats[req.id].locked = nil
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "chat_rename" then
    if not self.chats[req.id] then
      return self:emit(err(req, "Chat not found"))
    end
    self.chats[req.id].name = req.name
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "search_chats" then
    local results = {}
    for _, id in ipairs(self.order) do
      local c = self.chats[id]
      if c.name:lower():find(req.query:lower(), 1, true) then
        table.insert(results, { id = id, name = c.name, created = c.created, match_type = "title" })
      end
    end
    return self:emit(reply(req, { type = "search_results", results = results }))
  elseif a == "generate_title" then
    self:emit(reply(req, { type = "ok" }))
    return self:emit({ type = "title_updated", chat_id = req.chat_id, title = "Generated title" })
  end
  local chat = self:chat()
  if NEEDS_CHAT[a] and not chat then
    return self:emit(err(req, "No active chat"))
  end
  if a == "chat_get" then
    return self:emit(reply(req, {
      type = "chat", id = chat.id, name = chat.name, created = chat.created, model = chat.model,
      draft = chat.draft, messages = chat.messages, reasoning_effort = chat.reasoning_effort,
      global = chat.global or nil, instructions_info = self:instructions_info(),
    }))
  elseif a == "allow_includes" then
    self.allowed_includes = req.paths or {}
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "add_system_message" then
    table.insert(chat.messages, { role = "system", parts = { { type = "text", content = req.message or req.content } } })
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "save_draft" then
    chat.draft = req.draft
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "save_chat_settings" then
    chat.model = req.model or chat.model
    chat.reasoning_effort = req.reasoning_effort or chat.reasoning_effort
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "context_add" or a == "context_add_section" then
    if a == "context_add" and req.path:sub(1, 1) ~= "/" and req.path:find("^%.%./") then
      return self:emit(err(req, string.format("Invalid path %q: escapes the project root", req.path)))
    end
    if find_context(chat, req.path, req.start_line, req.end_line) then
      return self:emit(err(req, "Context file already exists"))
    end
    table.insert(chat.context, {
      path = req.path, content = req.content, readonly = a == "context_add_section" or req.readonly == true,
      start_line = req.start_line, end_line = req.end_line,
    })
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "context_remove" or a == "context_remove_section" then
    local i = find_context(chat, req.path, req.start_line, req.end_line)
    if not i then
      return self:emit(err(req, "File not found"))
    end
    table.remove(chat.context, i)
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "context_update" then
    local _, file = find_context(chat, req.path)
    if not file then
      return self:emit(err(req, "File not found"))
    end
    file.content = req.content
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "context_set_readonly" then
    local _, file = find_context(chat, req.path)
    if not file then
      return self:emit(err(req, "File not found"))
    end
    if req.readonly and chat.outputs[req.path] and chat.outputs[req.path] ~= file.content then
      return self:emit(err(req, "File has pending output. Apply changes before setting read-only."))
    end
    file.readonly = req.readonly
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "get_file_statuses" then
    return self:emit(reply(req, { type = "file_statuses", files = self:statuses(chat) }))
  elseif a == "estimate_tokens" then
    local typed = req.input_text and math.ceil(#req.input_text / 4) or nil
    return self:emit(reply(req, { type = "token_estimate", total = (self.estimate_total or 4200) + (typed or 0), context_files = 2800, history = 1200, instructions = 200, system_prompt = 150, files = {}, potential_savings = 0, input_text = typed }))
  elseif a == "apply_file" or a == "apply_file_as" then
    -- like the daemon: records the apply and answers the text; the client writes the file
    local out = chat.outputs[req.path]
    if not out then
      return self:emit(err(req, "File not found"))
    end
    if a == "apply_file_as" and (req.destination or "") == "" then
      return self:emit(err(req, "Missing required field: destination"))
    end
    local dest = a == "apply_file_as" and req.destination or req.path
    chat.outputs[req.path] = nil
    local _, file = find_context(chat, dest)
    if file then
      file.content = out
    else
      table.insert(chat.context, { path = dest, content = out, readonly = false })
    end
    return self:emit(reply(req, { type = "ok", content = out }))
  elseif a == "output_delete" then
    if not chat.outputs[req.path] then
      return self:emit(err(req, "File not found"))
    end
    chat.outputs[req.path] = nil
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "message_delete" then
    local msg = chat.messages[(req.index or -1) + 1]
    if not msg or msg.role ~= "user" then
      return self:emit(err(req, "Can only delete user messages"))
    end
    local last = #chat.messages
    for j = req.index + 2, #chat.messages do
      if chat.messages[j].role == "user" then
        last = j - 1
        break
      end
    end
    for _ = req.index + 1, last do
      table.remove(chat.messages, req.index + 1)
    end
    return self:emit(reply(req, { type = "ok" }))
  elseif a == "get_diff_paths" then
    if not chat.outputs[req.path] then
      return self:emit(err(req, "File not found"))
    end
    local out_path = self.root .. "/.bb7/chats/" .. chat.id .. "/output/" .. req.path
    vim.fn.mkdir(vim.fn.fnamemodify(out_path, ":h"), "p")
    vim.fn.writefile(vim.split(chat.outputs[req.path], "\n", { plain = true }), out_path, "b")
    return self:emit(reply(req, { type = "diff_paths", path = req.path, output_path = out_path, local_path = self.root .. "/" .. req.path }))
  elseif a == "diff_local_done" then
    return self:emit(reply(req, { type = "ok", outcome = "unchanged" }))
  elseif a == "fork_chat" then
    local source = self.chats[req.chat_id]
    if not source then
      return self:emit(err(req, "Chat not found"))
    end
    local msg = source.messages[req.fork_message_index + 1]
    if not msg or msg.role ~= "user" then
      return self:emit(err(req, "Can only fork user messages"))
    end
    local id = self:new_chat("Fork of " .. source.name)
    local new = self.chats[id]
    new.messages = vim.deepcopy(vim.list_slice(source.messages, 1, req.fork_message_index))
    new.draft = msg.parts[1].content
    new.context = vim.deepcopy(source.context)
    self.active = id
    return self:emit(reply(req, { type = "fork_result", new_chat_id = id, fork_message_content = new.draft, context_warnings = { { path = "math.cs", issue = "modified", original_version = "a1b2c3d4" } } }))
  elseif a == "chat_edit" then
    if req.chat_id ~= self.active then
      return self:emit(err(req, "Chat is not active"))
    end
    local msg = chat.messages[req.message_index + 1]
    if not msg or msg.role ~= "user" then
      return self:emit(err(req, "Can only edit user messages"))
    end
    chat.messages = vim.list_slice(chat.messages, 1, req.message_index)
    chat.draft = req.content
    return self:emit(reply(req, { type = "ok", context_warnings = {} }))
  elseif a == "send" then
    return self:_send(req, chat)
  end
  return self:emit(err(req, "Unknown action: " .. tostring(a)))
end

-- A send: the script decides what streams. Messages are stored in the chat like the daemon
-- does (user message, assistant message with text/thinking parts).
function Fake:_send(req, chat)
  if self.streaming then
    return self:emit(err(req, "Another request is already in progress"))
  end
  table.insert(chat.messages, {
    role = "user", model = req.model, timestamp = "2026-01-01T00:00:01Z",
    parts = { { type = "text", content = req.content } }, context_snapshot = {},
  })
  local script = self.send_script or {
    { type = "chunk", content = "Hello " },
    { type = "chunk", content = "world" },
    { type = "done", output_files = {}, usage = { prompt_tokens = 4200, completion_tokens = 890, cached_tokens = 3500, total_tokens = 5090, cost = 0.012 } },
  }
  if type(script) == "function" then
    script = script(self, req)
  end
  self.streaming = { request_id = req.request_id }
  local text, thinking = {}, {}
  local i = 0
  local function step()
    i = i + 1
    local msg = script[i]
    if not msg then
      return
    end
    if msg.hold then
      -- waits until the test cancels (or releases) the stream
      if not self.streaming then
        return -- the test dropped the stream: its end never comes
      end
      if self.streaming.cancelled then
        self.streaming = nil
        table.insert(chat.messages, { role = "assistant", parts = { { type = "text", content = table.concat(text) } } })
        table.insert(chat.messages, { role = "system", parts = { { type = "text", content = "Response aborted by user." } } })
        self:emit(reply(req, { type = "done", output_files = {}, usage = {} }))
        return
      end
      i = i - 1
      vim.defer_fn(step, 5)
      return
    end
    msg = vim.deepcopy(msg)
    if msg.type == "chunk" then
      table.insert(text, msg.content)
    elseif msg.type == "thinking" then
      table.insert(thinking, msg.content)
    end
    local final = msg.type == "done" or msg.type == "diff_error" or msg.type == "error"
    if final then
      self.streaming = nil
      local parts = {}
      if #thinking > 0 then
        table.insert(parts, { type = "thinking", content = table.concat(thinking) })
      end
      table.insert(parts, { type = "text", content = table.concat(text) })
      -- like the daemon: the reply's usage is stored with the message (zero fields left out)
      local usage
      for key, value in pairs(msg.usage or {}) do
        if value ~= 0 then
          usage = usage or {}
          usage[key] = value
        end
      end
      if msg.type ~= "error" or #text > 0 or #thinking > 0 then
        table.insert(chat.messages, { role = "assistant", model = req.model, parts = parts, output_files = msg.output_files, usage = usage, timestamp = "2026-01-01T00:00:02Z" })
      end
      if msg.type == "error" then
        -- a provider error is kept in the chat as a system message, as the first bb7 does
        table.insert(chat.messages, { role = "system", parts = { { type = "text", content = msg.message } } })
      end
      for path, content in pairs(msg.write or {}) do
        chat.outputs[path] = content
      end
      msg.write = nil
    end
    self:emit(reply(req, msg))
    if not final then
      vim.schedule(step)
    end
  end
  vim.schedule(step)
end

return Fake
