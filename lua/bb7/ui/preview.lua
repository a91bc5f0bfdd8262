-- The preview pane: the conversation (rendered once per chat load), the streamed reply
-- (appended as it arrives), and the context-to-output diff of a file.
local buffers = require("bb7.ui.buffers")
local config = require("bb7.config")
local format = require("bb7.format")
local render = require("bb7.render")
local Stream = require("bb7.ui.stream")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-preview")
M.rendered = nil -- the last render.chat result (message rows for fork/edit)
M.stream = nil
M.mode = "empty" -- what the buffer shows: "chat", "diff" or "empty"

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

--- Writes a rendered result (see bb7.render) into the buffer.
function M.show(rendered, mode)
  local buf = M.buf()
  M.mode = mode or "chat"
  M.stream = nil
  M.rendered = rendered
  buffers.set_lines(buf, rendered.lines)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, Stream.ns, 0, -1)
  for _, hl in ipairs(rendered.hls) do
    vim.api.nvim_buf_set_extmark(buf, ns, hl[1], 0, { line_hl_group = hl[2], priority = hl[2] == "BB7Dim" and 200 or 100 })
  end
  apply_folds(buf, rendered.folds)
end

--- Renders `chat` with the options of the current state.
function M.render_chat(chat, opts)
  opts = opts or {}
  M.show(render.chat(chat, {
    limit = opts.limit,
    chars_per_token = config.options.chars_per_token,
    allowance = config.options.user_request_allowance,
    usage_line = opts.usage and format.usage(opts.usage) or nil,
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
  table.insert(lines, "▌You" .. suffix)
  local user_row = base + #lines - 1
  vim.list_extend(lines, vim.split(content, "\n", { plain = true }))
  table.insert(lines, "")
  table.insert(lines, "▌Assistant" .. suffix)
  local assistant_row = base + #lines - 1
  table.insert(lines, "")
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, base, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_extmark(buf, ns, user_row, 0, { line_hl_group = "BB7User" })
  vim.api.nvim_buf_set_extmark(buf, ns, assistant_row, 0, { line_hl_group = "BB7Assistant" })
  M.stream = Stream.new(buf, config.options.fold_thinking)
  M.stream:_follow()
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

--- The unified diff of a file's context and output, with added/removed lines highlighted.
function M.show_diff(path, before, after)
  local diff = vim.diff(before or "", after or "", { result_type = "unified", ctxlen = 3 })
  local lines = { "diff " .. path, "--- context/" .. path, "+++ output/" .. path }
  local hls = { { 0, "BB7DiffHeader" }, { 1, "BB7DiffHeader" }, { 2, "BB7DiffHeader" } }
  for _, line in ipairs(vim.split(diff, "\n", { plain = true, trimempty = true })) do
    table.insert(lines, line)
    local first = line:sub(1, 1)
    if first == "+" then
      table.insert(hls, { #lines - 1, "BB7DiffAdd" })
    elseif first == "-" then
      table.insert(hls, { #lines - 1, "BB7DiffDelete" })
    elseif first == "@" then
      table.insert(hls, { #lines - 1, "BB7DiffHeader" })
    end
  end
  if diff == "" then
    table.insert(lines, "(no differences)")
  end
  M.show({ lines = lines, hls = hls, folds = {}, messages = {} }, "diff")
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
