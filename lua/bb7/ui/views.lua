-- Focus modes of the preview: the chat, one file (its output or context snapshot), or its
-- diff; the file steps forward and back through the context; the diff shows hunks or whole
-- files. A file view stays while the chat reloads (after an apply, say) and gives way to the
-- chat when another chat is selected or a reply starts streaming.
local notify = require("bb7.notify")
local preview = require("bb7.ui.preview")
local state = require("bb7.state")
local status = require("bb7.status")

local M = {}

-- Whether the file view up was opened by the auto-preview (bb7.ui.autopreview), not a key.
M.auto = false

local windows = function()
  return {}
end
local unsubscribe = nil

-- Whether `file` belongs in a view of `mode` (the diff view skips files without output).
local function fits(file, mode)
  return mode == "file" or file.has_output == true
end

-- The entry of `path` (the whole file before a section of it).
local function find(path)
  local found
  for _, file in ipairs(state.data.files) do
    if file.path == path and (not found or found.start_line) then
      found = file
    end
  end
  return found
end

-- The file a view should start on: the files pane's row when the cursor is there, else the
-- file shown last, else the first that fits (for the diff: the first with output).
local function pick(mode)
  local wins = windows()
  local files = require("bb7.ui.files")
  if wins.files and vim.api.nvim_get_current_win() == wins.files then
    local file = files.current(wins.files)
    if file then
      return file
    end
  end
  local last = preview.path and find(preview.path)
  if last and fits(last, mode) then
    return last
  end
  for _, file in ipairs(state.data.files) do
    if fits(file, mode) then
      return file
    end
  end
end

local function local_text(file)
  if not state.data.root then
    return nil
  end
  return (status.context_content(state.data.root, file.path))
end

local function draw(mode, file)
  if mode == "diff" then
    preview.show_diff(file, nil, nil, local_text(file))
  else
    preview.show_file(file)
  end
  state.emit("status")
end

--- Shows `file` (or the one picked as above) in `mode` ("file" or "diff").
function M.show(mode, file)
  if state.data.stream then
    notify.warn("Wait for the reply to finish (or cancel it) before switching views")
    return false
  end
  file = file or pick(mode)
  if not file then
    notify.warn(mode == "diff" and "No output to show" or "No files in context")
    return false
  end
  draw(mode, file)
  M.auto = false
  return true
end

--- Back to the chat.
function M.chat()
  M.auto = false
  preview.mode = "chat"
  state.emit("chat")
end

--- Steps `delta` files through the context (the diff view: through files with output) and
--- moves the files pane's cursor along.
function M.cycle(delta)
  local mode = preview.mode
  if mode ~= "file" and mode ~= "diff" then
    notify.warn("Not in a file or diff view (gf, gd)")
    return
  end
  local list = {}
  local at = 1
  for _, file in ipairs(state.data.files) do
    if fits(file, mode) then
      table.insert(list, file)
      if file.path == preview.path then
        at = #list
      end
    end
  end
  if #list == 0 then
    return
  end
  local file = list[((at - 1 + delta) % #list) + 1]
  draw(mode, file)
  local wins = windows()
  local files = require("bb7.ui.files")
  if wins.files and vim.api.nvim_win_is_valid(wins.files) then
    for row, entry in pairs(files.rows) do
      if entry == file then
        vim.api.nvim_win_set_cursor(wins.files, { row, 0 })
      end
    end
  end
end

--- Switches the diff between hunks and whole files (redrawn when the diff is shown).
function M.toggle_full()
  preview.full_diff = not preview.full_diff
  if preview.mode == "diff" then
    local file = preview.path and find(preview.path)
    if file then
      draw("diff", file)
    end
  end
  notify.info(preview.full_diff and "Diff: whole files" or "Diff: hunks")
end

--- Called instead of drawing the chat: redraws the file or diff view when one is up for the
--- active chat and no reply streams. Returns false when the chat should be drawn.
function M.redraw()
  local mode = preview.mode
  if (mode ~= "file" and mode ~= "diff") or state.data.stream then
    return false
  end
  local file = preview.path and find(preview.path)
  if preview.chat_id ~= state.data.active_id or not file or not fits(file, mode) then
    preview.mode = "chat"
    return false
  end
  draw(mode, file)
  return true
end

--- Hooks the views to the tab: `get_windows()` returns the pane windows; the file views follow
--- changes of the files (an apply, an update).
function M.attach(get_windows)
  windows = get_windows
  if unsubscribe then
    unsubscribe()
  end
  unsubscribe = state.on("files", function()
    if preview.mode == "file" or preview.mode == "diff" then
      if not M.redraw() then
        state.emit("chat")
      end
    end
  end)
end

M.handlers = {
  view_chat = function()
    M.chat()
  end,
  view_file = function()
    M.show("file")
  end,
  view_diff = function()
    M.show("diff")
  end,
  toggle_full_diff = function()
    M.toggle_full()
  end,
  next_file = function()
    M.cycle(1)
  end,
  prev_file = function()
    M.cycle(-1)
  end,
}

return M
