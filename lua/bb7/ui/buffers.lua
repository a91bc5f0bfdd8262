-- Scratch buffers for the panes: created once per pane, never listed, never written.
local M = {}

local bufs = {}

-- The prefix of every bb7 buffer name: "bb7:chats", "bb7:input", ... No slash, so the tab
-- line (which shortens each directory of a name to its first letter) shows the name whole:
-- "bb7://chats" came out as "b//chats". ("bb7" is no URL scheme to Neovim, digits are not
-- allowed in one, so such a name is a file name either way.)
M.PREFIX = "bb7:"

--- The buffer name of `pane` ("bb7:input").
function M.name(pane)
  return M.PREFIX .. pane
end

--- The pane whose buffer `buf` is (default: the current buffer), or nil.
function M.pane_of(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  for pane, b in pairs(bufs) do
    if b == buf and vim.api.nvim_buf_is_valid(b) then
      return pane
    end
  end
end

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
  pcall(vim.api.nvim_buf_set_name, buf, M.name(pane))
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
