-- Turns a chat (the `chat` reply) into preview lines: per message a header, its parts (text,
-- reasoning, code, file events), out-of-context pairs dimmed. Pure: returns data, writes nothing.
local boundary = require("bb7.boundary")

local M = {}

local EVENTS = {
  AssistantWriteFile = "wrote %s",
  UserWriteFile = "updated %s from the local file",
  UserApplyFile = "applied %s",
  UserSaveAs = "saved %s",
  UserRejectOutput = "rejected the output of %s",
  UserAddFile = "added %s",
  UserAddSection = "added section %s",
  UserRemoveFile = "removed %s",
  UserRemoveSection = "removed section %s",
  ForkWarningModified = "%s changed since this point",
  ForkWarningDeleted = "%s was deleted since this point",
}

--- One line describing a context event part.
function M.event_text(part)
  local path = part.path or "?"
  if part.start_line and part.end_line then
    path = string.format("%s:%d-%d", path, part.start_line, part.end_line)
  end
  if part.action == "UserSaveAs" and part.original_path then
    return string.format("● saved %s as %s", part.original_path, path)
  end
  if part.action == "UserSetReadOnly" then
    return string.format("● %s set %s", path, part.readonly and "read-only" or "writable")
  end
  local fmt = EVENTS[part.action] or (tostring(part.action) .. " %s")
  local text = "● " .. string.format(fmt, path)
  if part.action == "UserAddFile" and part.readonly then
    text = text .. " (read-only)"
  end
  return text
end

--- The plain text of a message (its `content`, else its text parts).
function M.message_text(message)
  if type(message.content) == "string" then
    return message.content
  end
  local out = {}
  for _, part in ipairs(message.parts or {}) do
    if part.type == "text" or part.type == "raw" then
      table.insert(out, part.content or "")
    end
  end
  return table.concat(out, "")
end

--- Whether a message holds only context events (an event, not a conversation turn).
local function only_events(message)
  if message.content and message.content ~= "" then
    return false
  end
  for _, part in ipairs(message.parts or {}) do
    if part.type ~= "context_event" then
      return false
    end
  end
  return true
end

--- Groups messages into pairs: each user message with the replies after it. Returns a list of
--- pairs `{first, last, tokens}` (message indexes, 1-based) and a map message index -> pair.
function M.pairs(messages, chars_per_token)
  local pairs_, of = {}, {}
  local current
  for i, message in ipairs(messages) do
    if message.role == "user" then
      current = { first = i, last = i, tokens = 0 }
      table.insert(pairs_, current)
    end
    if current and not only_events(message) then
      current.last = i
      current.tokens = current.tokens + boundary.estimate(M.message_text(message), chars_per_token)
      of[i] = current
    end
  end
  return pairs_, of
end

local function push_text(out, text, hl)
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    table.insert(out.lines, line)
    if hl then
      table.insert(out.hls, { #out.lines - 1, hl })
    end
  end
end

--- Renders `chat`. opts: `limit` (tokens the history may use, nil = unlimited),
--- `chars_per_token`, `allowance`, `usage_line`. Returns `{lines, hls = {{row, group}},
--- folds = {{first_row, last_row}}, messages = {{index, role, row}}, included, total}` with rows
--- 0-based.
function M.chat(chat, opts)
  opts = opts or {}
  local out = { lines = {}, hls = {}, folds = {}, messages = {} }
  local messages = chat and chat.messages or {}
  local pairs_, pair_of = M.pairs(messages, opts.chars_per_token)
  local tokens = {}
  for _, pair in ipairs(pairs_) do
    table.insert(tokens, pair.tokens)
  end
  local included = boundary.predict(tokens, opts.limit, opts.allowance)
  local first_included = #pairs_ - included + 1
  local dim = {}
  for n, pair in ipairs(pairs_) do
    if n < first_included then
      dim[pair] = true
    end
  end
  out.included, out.total = included, #pairs_

  for i, message in ipairs(messages) do
    local start = #out.lines
    if only_events(message) then
      for _, part in ipairs(message.parts or {}) do
        push_text(out, M.event_text(part), "BB7Event")
      end
    else
      if #out.lines > 0 then
        push_text(out, "", nil)
        start = #out.lines
      end
      local header
      if message.role == "user" then
        header = "▌You" .. (message.model and message.model ~= "" and ("  (" .. message.model .. ")") or "")
      elseif message.role == "assistant" then
        header = "▌Assistant" .. (message.model and message.model ~= "" and ("  (" .. message.model .. ")") or "")
      else
        header = "▌" .. (message.role or "system"):gsub("^%l", string.upper)
      end
      push_text(out, header, message.role == "user" and "BB7User" or "BB7Assistant")
      table.insert(out.messages, { index = i - 1, role = message.role, row = start })
      if type(message.content) == "string" then
        push_text(out, message.content, nil)
      end
      for _, part in ipairs(message.parts or {}) do
        if part.type == "text" or part.type == "raw" then
          -- a failed send is kept as a system message `<code>: <message>` (bb7.failed)
          local failure = message.role == "system" and require("bb7.failed").parse(part.content)
          push_text(out, failure and require("bb7.failed").display(part.content) or part.content or "", failure and "BB7Error" or nil)
        elseif part.type == "thinking" then
          local first = #out.lines
          push_text(out, part.content or "", "BB7Thinking")
          table.insert(out.folds, { first, #out.lines - 1 })
        elseif part.type == "code" then
          push_text(out, "```" .. (part.language or ""), nil)
          push_text(out, part.content or "", nil)
          push_text(out, "```", nil)
        elseif part.type == "file" then
          push_text(out, "● file " .. (part.path or "?"), "BB7Event")
        elseif part.type == "context_event" then
          push_text(out, M.event_text(part), "BB7Event")
        end
      end
    end
    if pair_of[i] and dim[pair_of[i]] then
      for row = start, #out.lines - 1 do
        table.insert(out.hls, { row, "BB7Dim" })
      end
    end
  end
  if opts.usage_line and opts.usage_line ~= "" then
    push_text(out, opts.usage_line, "BB7Usage")
  end
  return out
end

--- The message under `row` (0-based): the last rendered message starting at or before it.
function M.message_at(rendered, row)
  local found
  for _, entry in ipairs(rendered.messages) do
    if entry.row <= row then
      found = entry
    else
      break
    end
  end
  return found
end

return M
