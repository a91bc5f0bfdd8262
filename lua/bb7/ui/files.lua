-- The files pane: context and output files with their statuses.
local buffers = require("bb7.ui.buffers")
local format = require("bb7.format")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-files")
M.rows = {}

local GROUPS = {
  M = "BB7StatusM",
  A = "BB7StatusA",
  ["!A"] = "BB7StatusConflict",
  ["~M"] = "BB7StatusConflict",
  ["~"] = "BB7StatusSync",
  S = "BB7StatusS",
  R = "BB7StatusR",
}

function M.buf()
  return buffers.get("files")
end

--- One line: status (3 wide), path with the section's lines, tokens.
function M.line(file)
  local name = file.path
  if file.start_line then
    name = string.format("%s:%d-%d", name, file.start_line, file.end_line)
  end
  local tokens = file.tokens and ("  " .. format.tokens(file.tokens)) or ""
  return string.format("%-3s %s%s", file.display_status or file.status or "", name, tokens)
end

function M.render(files)
  local buf = M.buf()
  local lines = {}
  for _, file in ipairs(files) do
    table.insert(lines, M.line(file))
  end
  if #lines == 0 then
    lines = { "  No files: :BB7Add" }
  end
  buffers.set_lines(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  M.rows = {}
  for row, file in ipairs(files) do
    M.rows[row] = file
    local group = GROUPS[file.display_status or file.status or ""]
    if group then
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { end_col = 3, hl_group = group })
    end
  end
end

function M.current(win)
  local row = vim.api.nvim_win_get_cursor(win or 0)[1]
  return M.rows[row]
end

return M
