-- The chats pane: the chat list, pinned first, the active chat marked.
local buffers = require("bb7.ui.buffers")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-chats")
M.rows = {} -- row (1-based) -> chat
-- after the name of a chat another bb7 process holds (the first plugin's ⊘)
M.LOCKED = "  ⊘ locked"

--- What opening a chat another bb7 process holds says: the chats pane's <CR> (`in_pane`) and
--- the pickers.
function M.locked_message(in_pane)
  local key = require("bb7.config").key("chats", "unlock")
  local where = in_pane and "" or " in the chats pane"
  return "Chat is locked by another bb7 process" .. (key and (" (" .. key .. where .. " force-unlocks it)") or "")
end

function M.buf()
  return buffers.get("chats")
end

--- The lines for `chats` with `active_id` marked (pure).
function M.lines(chats, active_id)
  local lines = {}
  for _, chat in ipairs(chats) do
    local mark = chat.id == active_id and "▶" or " "
    local pin = chat.pinned and "★" or " "
    local lock = chat.locked and M.LOCKED or ""
    table.insert(lines, string.format("%s%s %s%s", mark, pin, chat.name or chat.id, lock))
  end
  if #lines == 0 then
    lines = { "  No chats yet: press n" }
  end
  return lines
end

function M.render(chats, active_id)
  local buf = M.buf()
  buffers.set_lines(buf, M.lines(chats, active_id))
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  M.rows = {}
  for row, chat in ipairs(chats) do
    M.rows[row] = chat
    if chat.pinned then
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { end_col = #"▶" + #"★" + 1, hl_group = "BB7Pinned" })
    end
    if chat.locked then
      local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, #line - #M.LOCKED, { end_col = #line, hl_group = "BB7Locked" })
    end
  end
end

--- The chat under the cursor of `win`.
function M.current(win)
  local row = vim.api.nvim_win_get_cursor(win or 0)[1]
  return M.rows[row]
end

return M
