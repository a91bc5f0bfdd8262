-- The chats pane: the chat list, pinned first, the active chat marked.
local buffers = require("bb7.ui.buffers")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-chats")
M.rows = {} -- row (1-based) -> chat
-- after the name of a chat another bb7 process holds (the first plugin's ⊘)
M.LOCKED = "  ⊘ locked" -- with the default icon (see M.locked_mark)

-- The marks of the options' `style.icons`.
local function icons()
  local style = require("bb7.config").options.style or {}
  return vim.tbl_extend("force", { active = "▶", pinned = "★", locked = "⊘" }, style.icons or {})
end

--- What follows the name of a locked chat.
function M.locked_mark()
  return "  " .. icons().locked .. " locked"
end

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
  local marks = icons()
  -- unmarked rows get as many spaces as the marks are wide, so the names line up
  local function mark(on, icon)
    return on and icon or string.rep(" ", vim.fn.strdisplaywidth(icon))
  end
  for _, chat in ipairs(chats) do
    local lock = chat.locked and M.locked_mark() or ""
    table.insert(lines, string.format("%s%s %s%s", mark(chat.id == active_id, marks.active), mark(chat.pinned, marks.pinned), chat.name or chat.id, lock))
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
      local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
      local marks = icons()
      local width = #(chat.id == active_id and marks.active or string.rep(" ", vim.fn.strdisplaywidth(marks.active))) + #marks.pinned + 1
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { end_col = math.min(width, #line), hl_group = "BB7Pinned" })
    end
    if chat.locked then
      local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, #line - #M.locked_mark(), { end_col = #line, hl_group = "BB7Locked" })
    end
  end
end

--- The chat under the cursor of `win`.
function M.current(win)
  local row = vim.api.nvim_win_get_cursor(win or 0)[1]
  return M.rows[row]
end

return M
