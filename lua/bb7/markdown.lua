-- Markdown for the preview, as data: which byte ranges of a line are bold, italic or inline
-- code (with the markers to conceal), headings and list bullets, and where fenced code blocks
-- start and end. Pure: no buffer, no Neovim state.
local M = {}

local function is_word(ch)
  return ch ~= nil and ch ~= "" and ch:match("[%w]") ~= nil
end

-- The closing `marker` after `from` whose content is not empty and does not end in a space.
local function find_close(line, marker, from)
  local pos = from
  while true do
    local s = line:find(marker, pos, true)
    if not s then
      return nil
    end
    if s > from and line:sub(s - 1, s - 1) ~= " " then
      return s
    end
    pos = s + 1
  end
end

--- Inline spans of one line: `{start_col, end_col, group}` (0-based, end exclusive) for the
--- text and `{start_col, end_col, "conceal"}` for each marker. Code spans win over emphasis;
--- `_` only delimits at word boundaries, so snake_case stays plain.
function M.inline(line)
  local spans = {}
  local i = 1
  local n = #line
  while i <= n do
    local ch = line:sub(i, i)
    local handled = false
    if ch == "`" then
      local ticks = line:match("^`+", i)
      local close = line:find(ticks, i + #ticks, true)
      if close and close > i + #ticks then
        table.insert(spans, { i - 1, i - 1 + #ticks, "conceal" })
        table.insert(spans, { i - 1 + #ticks, close - 1, "BB7InlineCode" })
        table.insert(spans, { close - 1, close - 1 + #ticks, "conceal" })
        i = close + #ticks
        handled = true
      end
    elseif (ch == "*" or ch == "_") and line:sub(i + 1, i + 1) == ch then
      local marker = ch .. ch
      local next_ch = line:sub(i + 2, i + 2)
      local boundary = ch == "*" or not is_word(line:sub(i - 1, i - 1))
      if next_ch ~= " " and next_ch ~= "" and boundary then
        local close = find_close(line, marker, i + 2)
        if close and (ch == "*" or not is_word(line:sub(close + 2, close + 2))) then
          table.insert(spans, { i - 1, i + 1, "conceal" })
          table.insert(spans, { i + 1, close - 1, "BB7Bold" })
          table.insert(spans, { close - 1, close + 1, "conceal" })
          i = close + 2
          handled = true
        end
      end
    elseif ch == "*" or ch == "_" then
      local next_ch = line:sub(i + 1, i + 1)
      local boundary = ch == "*" or not is_word(line:sub(i - 1, i - 1))
      if next_ch ~= " " and next_ch ~= "" and next_ch ~= ch and boundary then
        local close = find_close(line, ch, i + 1)
        if close and line:sub(close + 1, close + 1) ~= ch and (ch == "*" or not is_word(line:sub(close + 1, close + 1))) then
          table.insert(spans, { i - 1, i, "conceal" })
          table.insert(spans, { i, close - 1, "BB7Italic" })
          table.insert(spans, { close - 1, close, "conceal" })
          i = close + 1
          handled = true
        end
      end
    end
    if not handled then
      i = i + 1
    end
  end
  return spans
end

--- The fence of a line: its language ("" when none) if the line opens or closes a fenced code
--- block, else nil.
function M.fence(line)
  local lang = line:match("^%s*```+%s*([%w_+#.-]*)")
  if lang == nil then
    lang = line:match("^%s*~~~+%s*([%w_+#.-]*)")
  end
  return lang
end

--- Block-level spans of a line outside code: a heading (whole line) or a list bullet (the
--- marker, with `conceal` replacing `-`, `*` or `+` by a bullet).
function M.block(line)
  local hashes = line:match("^(#+)%s")
  if hashes and #hashes <= 6 then
    return { { 0, #line, "BB7Heading" } }
  end
  local indent, bullet = line:match("^(%s*)([-*+])%s")
  if bullet then
    return { { #indent, #indent + 1, "BB7ListBullet", conceal = "•" } }
  end
  local indent2, number = line:match("^(%s*)(%d+[.)])%s")
  if number then
    return { { #indent2, #indent2 + #number, "BB7ListBullet" } }
  end
  local quote = line:match("^(%s*>)")
  if quote then
    return { { 0, #line, "BB7Quote" } }
  end
  return {}
end

--- Walks `lines` (a message's text) and returns `{spans = {{row, s, e, group, conceal}},
--- code = {{first, last, lang}}, fences = {row...}}`, rows relative to the first line.
--- An unclosed fence runs to the end (a reply cut off mid-block).
function M.parse(lines)
  local out = { spans = {}, code = {}, fences = {} }
  local open -- the current code block
  for row, line in ipairs(lines) do
    local r = row - 1
    local lang = M.fence(line)
    if open then
      if lang == "" and line:match("^%s*[`~]+%s*$") then
        open.last = r - 1
        table.insert(out.code, open)
        table.insert(out.fences, r)
        open = nil
      end
    elseif lang ~= nil then
      open = { first = r + 1, last = r, lang = lang }
      table.insert(out.fences, r)
    else
      for _, span in ipairs(M.block(line)) do
        table.insert(out.spans, { r, span[1], span[2], span[3], span.conceal })
      end
      for _, span in ipairs(M.inline(line)) do
        table.insert(out.spans, { r, span[1], span[2], span[3] })
      end
    end
  end
  if open then
    open.last = #lines - 1
    table.insert(out.code, open)
  end
  return out
end

return M
