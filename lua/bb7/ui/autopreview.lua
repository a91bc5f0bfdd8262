-- Auto-preview, as the first plugin's "auto" focus mode: moving the cursor in the files pane
-- shows the file under it in the preview (its diff when the preview shows a diff, else the file
-- view); going on to the chats pane or the input brings the chat back when the file view came
-- from here (a view picked with gf/gd or :BB7File stays). Never while a reply streams. Off
-- with `auto_preview = false`. Attached when the tab opens.
local config = require("bb7.config")
local preview = require("bb7.ui.preview")
local state = require("bb7.state")
local views = require("bb7.ui.views")

local M = {}

local GROUP = "bb7-autopreview"
M.sticky = nil -- the view ("file" or "diff") picked with a key, which the cursor then follows

--- Shows the file under the cursor of the files window `win` (nothing on a header row, a
--- directory or the empty list).
function M.follow(win)
  if not config.options.auto_preview or state.data.stream or not state.data.chat then
    return
  end
  local file = require("bb7.ui.files").current(win)
  if not file then
    return
  end
  if preview.mode ~= "file" and preview.mode ~= "diff" then
    M.sticky = nil
  elseif not views.auto and not (M.shown and M.shown.mode == preview.mode and M.shown.path == preview.path) then
    M.sticky = preview.mode -- picked with a key: followed in that view
  end
  local mode = (M.sticky or preview.mode) == "diff" and file.has_output and "diff" or "file"
  if (preview.mode == mode) and preview.path == file.path and preview.chat_id == state.data.active_id then
    return
  end
  local sticky = M.sticky
  if views.show(mode, file) then
    views.auto = sticky == nil
    M.shown = { mode = mode, path = file.path }
  end
end

--- Back to the chat when the shown file view is one this module opened.
function M.leave()
  if views.auto and (preview.mode == "file" or preview.mode == "diff") and not state.data.stream then
    views.chat()
  end
end

--- Hooks the panes of `ui` (bb7.ui).
function M.attach(ui)
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  local buffers = require("bb7.ui.buffers")
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = buffers.get("files"),
    callback = function()
      local win = ui.wins.files
      if win and vim.api.nvim_get_current_win() == win then
        M.follow(win)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    buffer = buffers.get("files"),
    callback = function()
      local win = ui.wins.files
      if win and vim.api.nvim_get_current_win() == win then
        M.follow(win)
      end
    end,
  })
  for _, pane in ipairs({ "chats", "input" }) do
    vim.api.nvim_create_autocmd("BufEnter", { group = group, buffer = buffers.get(pane), callback = M.leave })
  end
end

function M.detach()
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
end

return M
