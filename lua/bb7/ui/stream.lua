-- Appends a streamed reply to the end of a buffer: each piece goes after what is there (no
-- redraw of earlier lines), new lines get their highlight as they are created, and a reasoning
-- block becomes a fold when it ends. Keeps only the byte length of the last line.
local Stream = {}
Stream.__index = Stream

local ns = vim.api.nvim_create_namespace("bb7-stream")
Stream.ns = ns

local HL = { thinking = "BB7Thinking", header = "BB7ThinkingHeader", text = nil, notice = "BB7Event", error = "BB7Error" }
Stream.THINKING_HEADER = "▸ Thinking…"

--- A stream writing to `buf`; `fold` says whether finished reasoning blocks are closed.
function Stream.new(buf, fold)
  local self = setmetatable({ buf = buf, kind = nil, col = 0, fold = fold, fold_start = nil }, Stream)
  local count = vim.api.nvim_buf_line_count(buf)
  local last = vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ""
  self.col = #last
  return self
end

function Stream:_highlight(row, kind)
  local group = HL[kind]
  if group then
    -- left gravity: text inserted at column 0 of an empty line must not carry the mark along
    vim.api.nvim_buf_set_extmark(self.buf, ns, row, 0, { line_hl_group = group, right_gravity = false })
  end
end

-- Inserts `pieces` (a split by "\n") at the end; pieces after the first become new lines.
function Stream:_insert(pieces)
  local last = vim.api.nvim_buf_line_count(self.buf) - 1
  vim.api.nvim_buf_set_text(self.buf, last, self.col, last, self.col, pieces)
  if #pieces == 1 then
    self.col = self.col + #pieces[1]
  else
    self.col = #pieces[#pieces]
    for row = last + 1, last + #pieces - 1 do
      self:_highlight(row, self.kind)
    end
  end
end

-- Folds the reasoning block from its first line to `last` (1-based).
function Stream:_close_fold(last)
  if not self.fold_start then
    return
  end
  local first = self.fold_start + 1
  self.fold_start = nil
  if last < first then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      vim.cmd(string.format("silent! %d,%dfold", first, last))
      if not self.fold then
        vim.cmd(string.format("silent! %dfoldopen", first))
      end
    end)
  end
end

--- Appends `text` of `kind` ("text", "thinking", "notice", "error"). A change of kind starts
--- a new line.
function Stream:write(kind, text)
  if text == nil or text == "" then
    return
  end
  vim.bo[self.buf].modifiable = true
  if kind ~= self.kind then
    local was = self.kind
    local opening = kind == "thinking"
    self.kind = not opening and kind or nil
    if self.col > 0 then
      self:_insert({ "", "" })
    elseif not opening then
      self:_highlight(vim.api.nvim_buf_line_count(self.buf) - 1, kind)
    end
    if was == "thinking" then
      -- after the new line exists, so the fold is not cut by the insertion
      self:_close_fold(vim.api.nvim_buf_line_count(self.buf) - 1)
    end
    if opening then
      -- a header line first: the fold starts there, so a closed block still says what it is
      local row = vim.api.nvim_buf_line_count(self.buf) - 1
      self.fold_start = row
      self:_insert({ Stream.THINKING_HEADER })
      self:_highlight(row, "header")
      self.kind = "thinking"
      self:_insert({ "", "" })
    end
  end
  local before = vim.api.nvim_buf_line_count(self.buf)
  self:_insert(vim.split(text, "\n", { plain = true }))
  vim.bo[self.buf].modifiable = false
  if vim.api.nvim_buf_line_count(self.buf) ~= before then
    -- appending to the last line leaves a following cursor where it is
    self:_follow()
  end
end

--- Appends whole lines of `kind` after the current content.
function Stream:line(kind, text)
  self:write(kind, text)
  self.kind = nil
end

--- Ends the stream (closes a reasoning fold left open).
function Stream:finish()
  if self.kind == "thinking" then
    local count = vim.api.nvim_buf_line_count(self.buf)
    self:_close_fold(self.col == 0 and count - 1 or count)
  end
  self.kind = nil
end

-- Windows whose cursor sat on the last line keep following the end.
function Stream:_follow()
  local count = vim.api.nvim_buf_line_count(self.buf)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if row >= count - 1 then
      vim.api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
end

return Stream
