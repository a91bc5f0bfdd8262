-- Reopening the bb7 tab puts you back where you left it: the pane that had the focus, the
-- cursor of each pane and the preview's view (the chat, or a file or diff view of the same
-- chat). Captured when the tab closes, applied when it opens again.
local preview = require("bb7.ui.preview")
local state = require("bb7.state")

local M = {}

M.saved = nil

--- Records the focus, cursors and preview view of the tab of `ui` (bb7.ui).
function M.capture(ui)
  local saved = { cursors = {}, view = { mode = preview.mode, path = preview.path, chat_id = preview.chat_id } }
  local current = vim.api.nvim_get_current_win()
  for pane, win in pairs(ui.wins) do
    if vim.api.nvim_win_is_valid(win) then
      saved.cursors[pane] = vim.api.nvim_win_get_cursor(win)
      if win == current then
        saved.pane = pane
      end
    end
  end
  saved.chat_id = state.data.active_id
  M.saved = saved
end

local function set_cursor(win, pos)
  if not (win and vim.api.nvim_win_is_valid(win)) then
    return
  end
  local count = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win))
  local row = math.max(1, math.min(pos[1], count))
  pcall(vim.api.nvim_win_set_cursor, win, { row, pos[2] })
end

--- Applies what `capture` recorded to the newly opened tab of `ui`; returns the pane to focus
--- (nil: the default). The preview view is restored only for the same active chat.
function M.apply(ui)
  local saved = M.saved
  M.saved = nil
  if not saved then
    return nil
  end
  local view = saved.view
  -- (a running reply shows in the chat view: the file view waits for the next time)
  if (view.mode == "file" or view.mode == "diff") and view.chat_id == state.data.active_id and view.path and not state.data.stream then
    for _, file in ipairs(state.data.files) do
      if file.path == view.path and (view.mode == "file" or file.has_output) then
        require("bb7.ui.views").show(view.mode, file)
        break
      end
    end
  end
  local same_chat = saved.chat_id == state.data.active_id
  for pane, pos in pairs(saved.cursors) do
    -- the preview's and the input's places belong to one chat
    if same_chat or pane == "chats" then
      set_cursor(ui.wins[pane], pos)
    end
  end
  return saved.pane
end

return M
