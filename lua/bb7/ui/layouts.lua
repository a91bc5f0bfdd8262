-- The layouts of the bb7 UI besides its own tab (`layout = "tab"`):
-- - "float": the first plugin's floating panes over the current tab, with titles and footers
--   (chats "N of M", files "3 files · 12k tokens (save 4k)", the chat's name on the preview);
-- - "left" / "right": a side chat, a column of the current tab beside the code with the files
--   (top), the preview and the input (`:BB7Split` opens it whatever the layout).
-- `open` makes the windows (into `ui.wins`); `update` redraws the float titles and footers.
local config = require("bb7.config")
local format = require("bb7.format")
local state = require("bb7.state")

local M = {}

M.PANES = {
  tab = { "chats", "files", "info", "preview", "input" },
  float = { "chats", "files", "info", "preview", "input" },
  left = { "files", "preview", "input" },
  right = { "files", "preview", "input" },
}

--- The layout mode of the options: "tab", "float", "left" or "right".
function M.mode()
  local layout = config.options.layout
  if type(layout) == "string" then
    return layout
  end
  return (layout and layout.mode) or "tab"
end

-- "3 files · 12k tokens (save 4k)": the files, their tokens, and what applying the outputs of
-- `M` files would save (their context snapshot is sent besides the output until then).
function M.files_summary(files)
  local count, tokens, save = 0, 0, 0
  for _, file in ipairs(files or {}) do
    count = count + 1
    tokens = tokens + (tonumber(file.tokens) or 0)
    if file.status == "M" then
      save = save + (tonumber(file.original_tokens) or 0)
    end
  end
  if count == 0 then
    return nil
  end
  local text = string.format("%d file%s · %s tokens", count, count == 1 and "" or "s", format.tokens(tokens))
  if save > 0 then
    text = text .. " (save " .. format.tokens(save) .. ")"
  end
  return text
end

-- "N of M": the chat under the cursor of the chats pane and how many there are.
local function chats_footer(ui)
  local total = #(state.data.chats or {})
  if total == 0 then
    return nil
  end
  local win = ui.wins.chats
  local row = win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_cursor(win)[1] or 1
  return string.format("%d of %d", math.min(row, total), total)
end

--- The title and footer of each float pane (pure but for the cursor of the chats window).
function M.decorations(ui)
  local chat = state.data.chat
  return {
    chats = { title = state.data.scope == "global" and "Global chats" or "Chats", footer = chats_footer(ui) },
    files = { title = "Files", footer = M.files_summary(state.data.files) },
    info = { title = "Info" },
    preview = { title = chat and chat.name and ("Preview: " .. chat.name) or "Preview" },
    input = { title = "Input", footer = state.data.model },
  }
end

--- Redraws the titles and footers of the float panes of `ui` (nothing in other layouts).
function M.update(ui)
  if ui.mode ~= "float" then
    return
  end
  for pane, deco in pairs(M.decorations(ui)) do
    local win = ui.wins[pane]
    if win and vim.api.nvim_win_is_valid(win) then
      local cfg = { title = " " .. deco.title .. " ", title_pos = "left", footer_pos = "left" }
      -- floats have no status line: the pane's key hint goes in the footer, before what the
      -- footer tells (the chat under the cursor, the files' tokens, the model)
      local info = deco.footer and ("│ " .. deco.footer .. " ") or ""
      local room = vim.api.nvim_win_get_width(win) - vim.fn.strdisplaywidth(info) - 2
      local footer = require("bb7.ui.help").hint_chunks(pane, room)
      if info ~= "" then
        table.insert(footer, { info, "FloatFooter" })
      end
      cfg.footer = footer
      pcall(vim.api.nvim_win_set_config, win, cfg)
    end
  end
end

-- The place of each float pane for the editor's size now: pane -> { row, col, width, height }.
local function geometry()
  local layout = type(config.options.layout) == "table" and config.options.layout or config.defaults.layout
  local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
  local W = math.max(60, math.floor(columns * 0.92))
  local H = math.max(20, math.floor(lines * 0.9))
  local top = math.max(0, math.floor((lines - H) / 2))
  local left = math.max(0, math.floor((columns - W) / 2))
  local side = math.min(layout.sidebar_width or 36, math.floor(W / 3))
  local right_w = W - side - 4
  -- left column: chats, files, info (each float takes 2 more rows for its border)
  local info_h = 6
  local files_h = math.min(layout.files_height or 12, math.floor((H - 6) / 3))
  local chats_h = H - 6 - info_h - files_h
  -- right column: preview over input
  local input_h = layout.input_height or 8
  local preview_h = H - 4 - input_h
  local function place(row, col, width, height)
    return { row = row, col = col, width = math.max(width, 10), height = math.max(height, 1) }
  end
  return {
    chats = place(top, left, side, chats_h),
    files = place(top + chats_h + 2, left, side, files_h),
    info = place(top + chats_h + files_h + 4, left, side, info_h),
    preview = place(top, left + side + 2, right_w, preview_h),
    input = place(top + preview_h + 2, left + side + 2, right_w, input_h),
  }
end

--- Opens the float panes over the current tab into `ui.wins`, with `bufs` (pane -> buffer).
--- As in the first plugin, they follow the editor's size, and closing one (`:q`) or going to
--- a window of the tab that is not a float closes them all (a picker's float does not).
function M.open_float(ui, bufs)
  for pane, place in pairs(geometry()) do
    ui.wins[pane] = vim.api.nvim_open_win(bufs[pane], false, vim.tbl_extend("force", place, {
      relative = "editor", style = "minimal", border = "rounded", title = " ", title_pos = "left",
    }))
  end
  local group = vim.api.nvim_create_augroup("bb7-float", { clear = true })
  vim.api.nvim_create_autocmd("VimResized", {
    group = group,
    callback = function()
      for pane, place in pairs(geometry()) do
        local win = ui.wins[pane]
        if win and vim.api.nvim_win_is_valid(win) then
          vim.api.nvim_win_set_config(win, vim.tbl_extend("force", place, { relative = "editor" }))
        end
      end
    end,
  })
  local ours = {}
  for _, win in pairs(ui.wins) do
    ours[win] = true
    vim.api.nvim_create_autocmd("WinClosed", {
      group = group,
      pattern = tostring(win),
      callback = function()
        vim.schedule(function()
          if ui.mode == "float" and ui.is_open() then
            ui.close()
          end
        end)
      end,
    })
  end
  vim.api.nvim_create_autocmd("WinEnter", {
    group = group,
    callback = function()
      local win = vim.api.nvim_get_current_win()
      if not ours[win] and vim.api.nvim_win_get_config(win).relative == "" then
        vim.schedule(function()
          if ui.mode == "float" and ui.is_open() and not ours[vim.api.nvim_get_current_win()] then
            ui.close()
          end
        end)
      end
    end,
  })
end

--- Opens the side chat (`side` "left" or "right") in the current tab into `ui.wins`.
function M.open_side(ui, bufs, side)
  local layout = type(config.options.layout) == "table" and config.options.layout or config.defaults.layout
  local width = layout.side_width or config.defaults.layout.side_width
  vim.cmd((side == "left" and "topleft" or "botright") .. " vsplit")
  local col = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(col, bufs.files)
  ui.wins.files = col
  ui.wins.preview = vim.api.nvim_open_win(bufs.preview, false, { split = "below", win = col })
  ui.wins.input = vim.api.nvim_open_win(bufs.input, false, { split = "below", win = ui.wins.preview, height = layout.input_height or 8 })
  vim.api.nvim_win_set_width(col, math.min(width, math.floor(vim.o.columns * 0.6)))
  vim.api.nvim_win_set_height(col, layout.side_files_height or 6)
  for _, pane in ipairs({ "files", "input" }) do
    vim.wo[ui.wins[pane]].winfixheight = true
  end
  for _, win in pairs(ui.wins) do
    vim.wo[win].winfixwidth = true
  end
end

--- Closes the windows of `ui` in the current tab, keeping one window for the code.
function M.close(ui)
  pcall(vim.api.nvim_del_augroup_by_name, "bb7-float")
  local ours = {}
  for _, win in pairs(ui.wins) do
    if vim.api.nvim_win_is_valid(win) then
      ours[win] = true
    end
  end
  local others = 0
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if not ours[win] and vim.api.nvim_win_get_config(win).relative == "" then
      others = others + 1
    end
  end
  if others == 0 then
    -- the side chat was all that was left of the tab: keep an empty window
    vim.cmd("botright vnew")
  end
  for win in pairs(ours) do
    pcall(vim.api.nvim_win_close, win, true)
  end
end

return M
