-- The statusline component (`require("bb7").status()`): "streaming" while a reply arrives,
-- "unread" when one finished while the bb7 tab was not in view, nothing once it is seen.
-- Symbols and groups come from `status` in the options.
local config = require("bb7.config")
local state = require("bb7.state")

local M = {}

M.defaults = {
  streaming = { symbol = "○ bb7", highlight = "BB7StatusStreaming" },
  unread = { symbol = "● bb7", highlight = "BB7StatusUnread" },
}

local value = nil -- "streaming", "unread" or nil
local handles = {}

local function redraw()
  pcall(vim.cmd, "redrawstatus!")
end

local function set(new)
  if value ~= new then
    value = new
    redraw()
  end
end

-- Whether the preview pane is in a window of the current tab (the reply is in view).
local function in_view()
  local buf = require("bb7.ui.buffers").peek("preview")
  if not buf then
    return false
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return true
    end
  end
  return false
end

local function option(kind)
  local user = (config.options.status or {})[kind]
  return vim.tbl_extend("force", M.defaults[kind], type(user) == "table" and user or {})
end

--- 'streaming', 'unread' or nil.
function M.raw()
  return value
end

--- The symbol for the current state ("" when there is nothing to say).
function M.text()
  if not value then
    return ""
  end
  local opt = option(value)
  if opt.enabled == false then
    return ""
  end
  return opt.symbol
end

--- The highlight group for the current state, or nil.
function M.highlight()
  return value and option(value).highlight or nil
end

--- The reply was seen: clears "unread".
function M.seen()
  if value == "unread" then
    set(nil)
  end
end

--- Listens to the streams (again, after a setup).
function M.attach()
  for _, off in ipairs(handles) do
    off()
  end
  value = nil
  handles = {
    state.on("stream_start", function()
      set("streaming")
    end),
    state.on("stream_end", function()
      if in_view() then
        set(nil)
      else
        set("unread")
      end
    end),
  }
  local group = vim.api.nvim_create_augroup("bb7-indicator", { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "TabEnter" }, {
    group = group,
    callback = function()
      if value == "unread" and in_view() then
        set(nil)
      end
    end,
  })
end

return M
