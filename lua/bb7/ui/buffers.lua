-- Scratch buffers for the panes: created once per pane, never listed, never written.
local M = {}

local bufs = {}

--- The pane's buffer (created on first use) with `filetype` "bb7-<pane>".
function M.get(pane)
  local buf = bufs[pane]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "bb7-" .. pane
  pcall(vim.api.nvim_buf_set_name, buf, "bb7://" .. pane)
  if pane ~= "input" then
    vim.bo[buf].modifiable = false
  end
  bufs[pane] = buf
  return buf
end

--- The pane's buffer if it exists.
function M.peek(pane)
  local buf = bufs[pane]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
end

--- Replaces all lines of a read-only pane buffer.
function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- Windows currently showing `buf`.
function M.windows(buf)
  return vim.fn.win_findbuf(buf)
end

return M
