-- Turns a chat (the `chat` reply) into preview lines: per message a header, its parts (text,
-- reasoning, code, file events), out-of-context pairs dimmed. Pure: returns data, writes nothing.
local boundary = require("bb7.boundary")
local format = require("bb7.format")
local markdown = require("bb7.markdown")
local inert = require("bb7.safepath").inert

local M = {}

--- The mark before a message's heading (`style.bar_char` of the options).
function M.bar()
  local style = require("bb7.config").options.style
  return style and style.bar_char or "▌"
end

local EVENTS = {
  AssistantWriteFile = "modified %s", -- "added %s (new file)" when the model created it
  UserWriteFile = "updated %s from the local file",
  UserApplyFile = "applied %s",
  UserPartialApplyFile = "applied part of %s",
  UserSetReadOnly = "set %s read-only",
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
  -- a name from the chat or the model is one line of text, whatever it holds
  local path = inert(part.path or "?")
  if part.start_line and part.end_line then
    path = string.format("%s:%d-%d", path, part.start_line, part.end_line)
  end
  if part.action == "UserSaveAs" and part.original_path then
    return string.format("● saved %s as %s", inert(part.original_path), path)
  end
  if part.action == "AssistantWriteFile" and part.added then
    return string.format("● added %s (new file)", path)
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

-- Appends markdown text: inline spans, fenced code blocks (with their language) and fences.
local function push_markdown(out, text)
  local base = #out.lines
  local lines = vim.split(text, "\n", { plain = true })
  vim.list_extend(out.lines, lines)
  local parsed = markdown.parse(lines)
  for _, span in ipairs(parsed.spans) do
    table.insert(out.spans, { base + span[1], span[2], span[3], span[4], span[5] })
  end
  for _, block in ipairs(parsed.code) do
    table.insert(out.code, { first = base + block.first, last = base + block.last, lang = block.lang })
  end
  for _, row in ipairs(parsed.fences) do
    table.insert(out.hls, { base + row, "BB7CodeFence" })
  end
end

--- The header of a reasoning block (the line a closed fold shows).
function M.thinking_header(count)
  return string.format("▸ Thinking (%d line%s)", count, count == 1 and "" or "s")
end

-- Appends a reasoning block: a header, then the text; the fold covers both so a closed fold
-- shows the header.
local function push_thinking(out, text)
  local lines = vim.split(text, "\n", { plain = true })
  local first = #out.lines
  push_text(out, M.thinking_header(#lines), "BB7ThinkingHeader")
  for _, line in ipairs(lines) do
    push_text(out, line, "BB7Thinking")
  end
  table.insert(out.folds, { first, #out.lines - 1 })
end

--- Renders `chat`. opts: `limit` (tokens the history may use, nil = unlimited),
--- `chars_per_token`, `allowance`, `usage_line` (shown after the last reply when it has no
--- stored usage). Returns `{lines, hls = {{row, group}}, spans = {{row, start_col, end_col,
--- group, conceal}}, code = {{first, last, lang}}, folds = {{first_row, last_row}},
--- messages = {{index, role, row, last}}, included, total}` with rows 0-based; `group`
--- "conceal" marks markdown markers to hide.
function M.chat(chat, opts)
  opts = opts or {}
  local out = { lines = {}, hls = {}, spans = {}, code = {}, folds = {}, messages = {} }
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
  if opts.banner then
    -- the instruction-error banner: first, so it is seen (sending waits until it is fixed)
    push_text(out, opts.banner, "BB7Error")
    out.banner = select(2, opts.banner:gsub("\n", "")) + 1
  end

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
        header = M.bar() .. "You" .. (message.model and message.model ~= "" and ("  (" .. message.model .. ")") or "")
      elseif message.role == "assistant" then
        header = M.bar() .. "Assistant" .. (message.model and message.model ~= "" and ("  (" .. message.model .. ")") or "")
      else
        header = M.bar() .. (message.role or "system"):gsub("^%l", string.upper)
      end
      push_text(out, header, message.role == "user" and "BB7User" or "BB7Assistant")
      local entry = { index = i - 1, role = message.role, row = start }
      table.insert(out.messages, entry)
      if type(message.content) == "string" then
        push_markdown(out, message.content)
      end
      for _, part in ipairs(message.parts or {}) do
        if part.type == "text" or part.type == "raw" then
          -- a failed send is kept as a system message `<code>: <message>` (bb7.failed)
          local failure = message.role == "system" and require("bb7.failed").parse(part.content)
          if failure then
            push_text(out, require("bb7.failed").display(part.content), "BB7Error")
          elseif part.type == "text" then
            push_markdown(out, part.content or "")
          else
            push_text(out, part.content or "", nil)
          end
        elseif part.type == "thinking" then
          push_thinking(out, part.content or "")
        elseif part.type == "code" then
          push_markdown(out, "```" .. (part.language or "") .. "\n" .. (part.content or "") .. "\n```")
        elseif part.type == "file" then
          push_text(out, "● file " .. inert(part.path or "?"), "BB7Event")
        elseif part.type == "context_event" then
          push_text(out, M.event_text(part), "BB7Event")
        end
      end
      local usage = message.role == "assistant" and format.usage_line(message.usage) or ""
      if usage ~= "" then
        push_text(out, usage, "BB7Usage")
        out.has_usage = true
      end
      entry.last = #out.lines - 1
    end
    if pair_of[i] and dim[pair_of[i]] then
      for row = start, #out.lines - 1 do
        table.insert(out.hls, { row, "BB7Dim" })
      end
    end
  end
  -- a daemon that stores no usage in messages: this session's last reply still gets its line
  if opts.usage_line and opts.usage_line ~= "" and not out.has_usage then
    push_text(out, opts.usage_line, "BB7Usage")
  end
  if opts.notice then
    -- what happened to a reply the chat does not hold (the daemon stopped during it)
    push_text(out, "", nil)
    push_text(out, opts.notice, "BB7Error")
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
