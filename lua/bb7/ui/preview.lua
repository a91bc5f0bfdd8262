-- The preview pane: the conversation (rendered once per chat load), the streamed reply
-- (appended as it arrives), and the context-to-output diff of a file.
local buffers = require("bb7.ui.buffers")
local codehl = require("bb7.codehl")
local config = require("bb7.config")
local fileview = require("bb7.fileview")
local format = require("bb7.format")
local render = require("bb7.render")
local state = require("bb7.state")
local status = require("bb7.status")
local Stream = require("bb7.ui.stream")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-preview")
M.rendered = nil -- the last render.chat result (message rows for fork/edit)
M.stream = nil
M.mode = "empty" -- what the buffer shows: "chat", "file", "diff" or "empty"
M.path = nil -- the file of the "file" and "diff" views
M.chat_id = nil -- the chat that file belongs to
M.ns = ns

function M.buf()
  return buffers.get("preview")
end

local function apply_folds(buf, folds)
  for _, win in ipairs(buffers.windows(buf)) do
    vim.api.nvim_win_call(win, function()
      vim.wo.foldmethod = "manual"
      vim.cmd("silent! normal! zE")
      for _, fold in ipairs(folds) do
        vim.cmd(string.format("silent! %d,%dfold", fold[1] + 1, fold[2] + 1))
        if not config.options.fold_thinking then
          vim.cmd(string.format("silent! %dfoldopen", fold[1] + 1))
        end
      end
    end)
  end
end

-- Markers are concealed in normal mode too, so the text reads as rendered markdown; a closed
-- reasoning fold shows its header without fill dots.
local function conceal_options(buf)
  for _, win in ipairs(buffers.windows(buf)) do
    vim.wo[win].conceallevel = 2
    vim.wo[win].concealcursor = "nc"
    vim.api.nvim_win_call(win, function()
      vim.opt_local.fillchars:append({ fold = " " })
    end)
  end
end

-- Inline markdown spans, then code blocks (treesitter, or the plain BB7Code group).
local function apply_spans(buf, rendered)
  for _, span in ipairs(rendered.spans or {}) do
    local row, first, last, group, cchar = span[1], span[2], span[3], span[4], span[5]
    if group == "conceal" then
      vim.api.nvim_buf_set_extmark(buf, ns, row, first, { end_col = last, conceal = "" })
    else
      vim.api.nvim_buf_set_extmark(buf, ns, row, first, { end_col = last, hl_group = group, conceal = cchar, priority = 120 })
    end
  end
end

-- Code is highlighted where it is seen: the chunks of code blocks (CHUNK rows each) that come
-- into view (with a window's height of margin) are done, each once per render. A long chat
-- or file stays quick to draw however much code it holds.
local CHUNK = 100
local pending = {} -- chunks not highlighted yet: { block, from, to } (rows in the block)

local function queue_code(rendered)
  pending = {}
  for _, block in ipairs(rendered.code or {}) do
    if block.last >= block.first then
      local size = block.last - block.first + 1
      for from = 0, size - 1, CHUNK do
        table.insert(pending, { block = block, from = from, to = math.min(from + CHUNK, size) - 1 })
      end
    end
  end
end

local function highlight_chunk(buf, chunk)
  local block = chunk.block
  if block.handle == nil then
    local lines = vim.api.nvim_buf_get_lines(buf, block.first, block.last + 1, false)
    block.handle = codehl.parse(lines, codehl.lang(block.lang, block.path)) or false
  end
  if block.handle then
    codehl.highlight(buf, ns, block.first, block.handle, chunk.from, chunk.to)
  elseif block.path == nil then
    local lines = vim.api.nvim_buf_get_lines(buf, block.first + chunk.from, block.first + chunk.to + 1, false)
    for i, line in ipairs(lines) do
      vim.api.nvim_buf_set_extmark(buf, ns, block.first + chunk.from + i - 1, 0, { end_col = #line, hl_group = "BB7Code", priority = 110 })
    end
  end
end

--- Highlights the code in view in the windows showing the preview (all of it when none does).
function M.highlight_visible()
  if #pending == 0 then
    return
  end
  local buf = M.buf()
  local ranges = {}
  for _, win in ipairs(buffers.windows(buf)) do
    local view = vim.api.nvim_win_call(win, function()
      return { vim.fn.line("w0"), vim.fn.line("w$") }
    end)
    local top, bot = view[1], view[2]
    local margin = vim.api.nvim_win_get_height(win)
    table.insert(ranges, { top - 1 - margin, bot - 1 + margin })
  end
  local left = {}
  for _, chunk in ipairs(pending) do
    local first, last = chunk.block.first + chunk.from, chunk.block.first + chunk.to
    local seen = #ranges == 0
    for _, r in ipairs(ranges) do
      if last >= r[1] and first <= r[2] then
        seen = true
      end
    end
    if seen then
      highlight_chunk(buf, chunk)
    else
      table.insert(left, chunk)
    end
  end
  pending = left
end

vim.api.nvim_create_autocmd({ "WinScrolled", "BufWinEnter" }, {
  group = vim.api.nvim_create_augroup("bb7-preview-code", { clear = true }),
  callback = function()
    if #pending > 0 and #buffers.windows(M.buf()) > 0 then
      M.highlight_visible()
    end
  end,
})

local hinted = "chat" -- the view the preview's hint was made for

--- Writes a rendered result (see bb7.render) into the buffer.
function M.show(rendered, mode)
  local buf = M.buf()
  local count = vim.api.nvim_buf_line_count(buf)
  -- windows at the end of the chat stay there when it is drawn again (a reply that ended
  -- comes back with its usage line)
  local at_end = {}
  if M.mode == "chat" and (mode or "chat") == "chat" then
    at_end = vim.tbl_filter(function(win)
      return vim.api.nvim_win_get_cursor(win)[1] >= count
    end, buffers.windows(buf))
  end
  M.mode = mode or "chat"
  M.stream = nil
  M.rendered = rendered
  if hinted ~= M.mode then
    -- the hint names the keys of what the preview holds now
    hinted = M.mode
    for _, win in ipairs(buffers.windows(buf)) do
      vim.wo[win].statusline = require("bb7.ui.help").hint("preview", vim.api.nvim_win_get_width(win))
    end
  end
  buffers.set_lines(buf, rendered.lines)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(at_end) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, Stream.ns, 0, -1)
  for _, hl in ipairs(rendered.hls) do
    -- dimming sits above every other highlight so out-of-context pairs read as dim
    vim.api.nvim_buf_set_extmark(buf, ns, hl[1], 0, { line_hl_group = hl[2], priority = hl[2] == "BB7Dim" and 250 or 100 })
  end
  apply_spans(buf, rendered)
  conceal_options(buf)
  apply_folds(buf, rendered.folds)
  queue_code(rendered)
  M.highlight_visible()
end

--- Renders `chat` with the options of the current state.
function M.render_chat(chat, opts)
  opts = opts or {}
  M.show(render.chat(chat, {
    limit = opts.limit,
    chars_per_token = config.options.chars_per_token,
    allowance = config.options.user_request_allowance,
    usage_line = opts.usage and format.usage(opts.usage) or nil,
    banner = require("bb7.instructions").banner(chat),
    notice = opts.notice,
  }))
end

--- The empty state: no chat selected.
function M.show_empty(text)
  M.show({ lines = vim.split(text, "\n", { plain = true }), hls = {}, folds = {}, messages = {} }, "empty")
end

--- Starts showing a reply to `content`: the user's message, then the assistant header.
function M.stream_start(content, model)
  local buf = M.buf()
  local count = vim.api.nvim_buf_line_count(buf)
  local empty = count == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
  local base = empty and 0 or count
  local lines = {}
  if not empty then
    table.insert(lines, "")
  end
  local suffix = model and model ~= "" and ("  (" .. model .. ")") or ""
  table.insert(lines, require("bb7.render").bar() .. "You" .. suffix)
  local user_row = base + #lines - 1
  vim.list_extend(lines, vim.split(content, "\n", { plain = true }))
  table.insert(lines, "")
  table.insert(lines, require("bb7.render").bar() .. "Assistant" .. suffix)
  local assistant_row = base + #lines - 1
  table.insert(lines, "")
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, base, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_extmark(buf, ns, user_row, 0, { line_hl_group = "BB7User" })
  vim.api.nvim_buf_set_extmark(buf, ns, assistant_row, 0, { line_hl_group = "BB7Assistant" })
  M.stream = Stream.new(buf, config.options.fold_thinking)
  -- a send shows its message and the reply wherever the preview was scrolled (the first
  -- plugin's way); the reply then follows the end until you move away from it
  M.show_end()
end

--- Puts the cursor of each window showing the preview on its last line. Returns whether one
--- does.
function M.show_end()
  local buf = M.buf()
  local count = vim.api.nvim_buf_line_count(buf)
  local wins = buffers.windows(buf)
  for _, win in ipairs(wins) do
    vim.api.nvim_win_set_cursor(win, { count, 0 })
  end
  return #wins > 0
end

--- Appends one stream message (`chunk` or `thinking`).
function M.stream_message(msg)
  if not M.stream then
    return
  end
  if msg.type == "thinking" then
    M.stream:write("thinking", msg.content)
  else
    M.stream:write("text", msg.content)
  end
end

--- Appends a notice line (errors, cancellation, usage) to the streamed reply.
function M.stream_notice(kind, text)
  if not M.stream then
    M.stream = Stream.new(M.buf(), config.options.fold_thinking)
  end
  M.stream:finish()
  M.stream:line(kind, text)
end

function M.stream_finish()
  if M.stream then
    M.stream:finish()
  end
end

M.full_diff = false -- the diff view shows whole files instead of hunks

--- The diff view of a file: context -> output (and local -> output for `~M`/`!A`). `file` is a
--- get_file_statuses entry; the older form `(path, before, after)` diffs two texts.
function M.show_diff(file, before, after, local_text)
  if type(file) == "string" then
    local path = file
    file = { path = path, has_output = true, context_content = before, output_content = after }
    for _, entry in ipairs(state.data.files) do
      if entry.path == path and not entry.start_line then
        file = entry
      end
    end
  end
  if local_text == nil and state.data.root then
    local_text = (status.context_content(state.data.root, file.path))
  end
  M.show(fileview.diff(file, local_text, M.full_diff), "diff")
  M.path, M.chat_id = file.path, state.data.active_id
end

--- The file view: the file's output (or its context snapshot), highlighted by file type.
function M.show_file(file)
  M.show(fileview.file(file), "file")
  M.path, M.chat_id = file.path, state.data.active_id
end

--- The message (index, role) under the cursor of the preview window, or nil.
function M.message_under_cursor(win)
  if not M.rendered then
    return nil
  end
  win = win or vim.api.nvim_get_current_win()
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  return render.message_at(M.rendered, row)
end

return M
