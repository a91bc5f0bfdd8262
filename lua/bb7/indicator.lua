-- The statusline component (`require("bb7").status()`): "streaming" while a reply arrives,
-- "unread" when one finished while the bb7 tab was not in view, nothing once it is seen.
-- Symbols and groups come from `status` in the options.
local config = require("bb7.config")
local state = require("bb7.state")

local M = {}

M.defaults = {
  streaming = { symbol = "○ bb7", highlight = "DiagnosticWarn" },
  unread = { symbol = "● bb7", highlight = "DiagnosticInfo" },
}

-- The group `highlight()` names per state; `highlight` in the options only colours it.
M.GROUPS = { streaming = "BB7StatusStreaming", unread = "BB7StatusUnread" }

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

--- The highlight group for the current state, or nil (always a group name, whatever colour
--- the options give: configs put it in statusline sections).
function M.highlight()
  if not value or option(value).enabled == false then
    return nil
  end
  return M.GROUPS[value]
end

-- The foreground of `spec`: a group name, "#rrggbb" or a 256-colour number (the first plugin's
-- three forms); nil when it names nothing.
local function foreground(spec)
  if type(spec) == "number" then
    return { ctermfg = spec }
  end
  if type(spec) ~= "string" or spec == "" then
    return nil
  end
  if spec:match("^#%x%x%x%x%x%x$") then
    return { fg = spec }
  end
  local hl = vim.api.nvim_get_hl(0, { name = spec, link = false, create = false })
  if hl.fg or hl.ctermfg then
    return { fg = hl.fg, ctermfg = hl.ctermfg }
  end
  return nil
end

--- Defines the two statusline groups as foreground-only (the section's background stays) from
--- `status.*.highlight` in the options. A group the user styled after setup is left alone.
function M.define_groups()
  for kind, group in pairs(M.GROUPS) do
    local user = ((config.options.status or {})[kind] or {}).highlight
    local spec = foreground(user) or foreground(M.defaults[kind].highlight)
    if spec then
      vim.api.nvim_set_hl(0, group, vim.tbl_extend("force", spec, { default = user == nil }))
    end
  end
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
  M.define_groups()
  local group = vim.api.nvim_create_augroup("bb7-indicator", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = M.define_groups })
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
