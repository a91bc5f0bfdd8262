-- Handlers of the keys that are not one pane's own: the `global` keymaps (views, help, pane
-- jumps, cancel, close) and the preview's navigation keys. `ui` is bb7.ui, passed in so this
-- module does not load it.
local actions = require("bb7.actions")
local help = require("bb7.ui.help")
local nav = require("bb7.ui.nav")
local views = require("bb7.ui.views")

local M = {}

-- Panes in the order <Tab> visits them (an `info` pane is visited when the tab has one).
M.order = { "chats", "files", "info", "preview", "input" }

local function current_pane(ui)
  local win = vim.api.nvim_get_current_win()
  for pane, w in pairs(ui.wins) do
    if w == win then
      return pane
    end
  end
end

--- Focuses the pane `delta` steps from the current one, skipping panes without a window.
function M.cycle(ui, delta)
  local present = {}
  for _, pane in ipairs(M.order) do
    local win = ui.wins[pane]
    if win and vim.api.nvim_win_is_valid(win) then
      table.insert(present, pane)
    end
  end
  if #present == 0 then
    return
  end
  local at = 1
  local here = current_pane(ui)
  for i, pane in ipairs(present) do
    if pane == here then
      at = i
    end
  end
  ui.focus(present[((at - 1 + delta) % #present) + 1])
end

--- The handlers of the `global` keymaps.
function M.global(ui)
  local handlers = vim.tbl_extend("error", {}, views.handlers)
  handlers.help = function()
    help.show()
  end
  handlers.cancel = function()
    actions.cancel()
  end
  handlers.close = function()
    ui.close()
  end
  handlers.next_pane = function()
    M.cycle(ui, 1)
  end
  handlers.prev_pane = function()
    M.cycle(ui, -1)
  end
  -- half a page of the preview, from whichever pane has the cursor
  local function scroll(key)
    return function()
      local win = ui.wins.preview
      if win and vim.api.nvim_win_is_valid(win) then
        vim.api.nvim_win_call(win, function()
          vim.cmd("normal! " .. vim.api.nvim_replace_termcodes(key, true, false, true))
        end)
      end
    end
  end
  handlers.scroll_preview_down = scroll("<C-d>")
  handlers.scroll_preview_up = scroll("<C-u>")
  for _, pane in ipairs(M.order) do
    handlers["focus_" .. pane] = function()
      ui.focus(pane)
    end
  end
  return handlers
end

--- Maps the options' `nav_left`, `nav_down`, `nav_up` and `nav_right` keys in pane buffer `buf`
--- to the window in that direction (what <C-w>h, j, k, l do).
function M.nav(buf)
  local options = require("bb7.config").options
  for option, dir in pairs({ nav_left = "h", nav_down = "j", nav_up = "k", nav_right = "l" }) do
    local lhs = options[option]
    if type(lhs) == "string" and lhs ~= "" then
      vim.keymap.set("n", lhs, "<Cmd>wincmd " .. dir .. "<CR>", { buffer = buf, nowait = true, silent = true, desc = "bb7: pane " .. option:sub(5) })
    end
  end
end

--- Handlers a pane has beyond bb7.ui's own (the preview's navigation).
function M.extra(pane)
  if pane == "preview" then
    return nav.handlers
  end
  return {}
end

return M
