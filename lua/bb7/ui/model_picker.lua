-- The model picker: a floating list with each model's context length and price per million
-- tokens, favorites first. <CR> picks, f toggles a favorite in place, q or <Esc> closes.
local favorites = require("bb7.favorites")
local format = require("bb7.format")
local notify = require("bb7.notify")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-model-picker")

--- "$3.00" for a per-token price string ("0.000003"), "free" for zero, "-" when unknown.
function M.price(per_token)
  local value = tonumber(per_token)
  if not value or value < 0 then
    return "-"
  end
  if value == 0 then
    return "free"
  end
  return string.format("$%.2f", value * 1e6)
end

--- The rows for `models` (get_models entries): favorites first, then the rest, each group in
--- the daemon's order. Returns `{lines, rows}` where rows[i] is the model of line i. Pure.
function M.lines(models, favorite_ids, current)
  local fav = {}
  for _, id in ipairs(favorite_ids or {}) do
    fav[id] = true
  end
  local ordered = {}
  for _, pass in ipairs({ true, false }) do
    for _, model in ipairs(models or {}) do
      if (fav[model.id] == true) == pass then
        table.insert(ordered, model)
      end
    end
  end
  local width = 10
  for _, model in ipairs(ordered) do
    width = math.max(width, vim.fn.strdisplaywidth(model.id))
  end
  local lines, rows = {}, {}
  for _, model in ipairs(ordered) do
    local pricing = model.pricing or {}
    local ctx = tonumber(model.context_length) and (format.tokens(model.context_length) .. " ctx") or "- ctx"
    local line = string.format("%s%s %s  %9s  in %-7s out %-7s%s",
      model.id == current and "▶" or " ",
      fav[model.id] and "★" or " ",
      model.id .. string.rep(" ", width - vim.fn.strdisplaywidth(model.id)),
      ctx,
      M.price(pricing.prompt),
      M.price(pricing.completion),
      (model.supports_reasoning and "  reasoning" or ""))
    table.insert(lines, (line:gsub("%s+$", "")))
    table.insert(rows, model)
  end
  return lines, rows
end

M.state = nil -- { buf, win, models, current, on_pick }

local function redraw(keep_id)
  local s = M.state
  local lines, rows = M.lines(s.models, favorites.list(), s.current)
  s.rows = rows
  vim.bo[s.buf].modifiable = true
  vim.api.nvim_buf_set_lines(s.buf, 0, -1, false, lines)
  vim.bo[s.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(s.buf, ns, 0, -1)
  for i, model in ipairs(rows) do
    vim.api.nvim_buf_set_extmark(s.buf, ns, i - 1, 0, { end_col = #lines[i] >= 4 and 4 or #lines[i], hl_group = "BB7Pinned" })
    if keep_id and model.id == keep_id and vim.api.nvim_win_is_valid(s.win) then
      vim.api.nvim_win_set_cursor(s.win, { i, 0 })
    end
  end
end

function M.close()
  local s = M.state
  M.state = nil
  if s and vim.api.nvim_win_is_valid(s.win) then
    vim.api.nvim_win_close(s.win, true)
  end
end

--- The model on the cursor line.
function M.current()
  local s = M.state
  if not s then
    return nil
  end
  return s.rows[vim.api.nvim_win_get_cursor(s.win)[1]]
end

--- Toggles the favorite of the model under the cursor and redraws.
function M.toggle_favorite()
  local model = M.current()
  if not model then
    return
  end
  local now, err = favorites.toggle(model.id)
  if now == nil then
    notify.error("Cannot write file " .. favorites.path() .. ": " .. tostring(err))
    return
  end
  notify.info((now and "Added favorite " or "Removed favorite ") .. model.id)
  redraw(model.id)
end

function M.pick()
  local model = M.current()
  local on_pick = M.state and M.state.on_pick
  M.close()
  if model and on_pick then
    on_pick(model.id)
  end
end

--- Opens the picker over `models`; `on_pick(id)` gets the chosen model.
function M.open(models, current, on_pick)
  M.close()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "bb7-models"
  local longest = 50
  for _, line in ipairs((M.lines(models, favorites.list(), current))) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line) + 2)
  end
  local width = math.min(vim.o.columns - 4, longest)
  local height = math.max(1, math.min(#models, vim.o.lines - 6, 20))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " BB-7 models  <CR> pick · f favorite · q close ",
    title_pos = "center",
  })
  vim.wo[win].cursorline = true
  M.state = { buf = buf, win = win, models = models, current = current, on_pick = on_pick }
  redraw(current)
  local function map(lhs, fn)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map("<CR>", M.pick)
  map("f", M.toggle_favorite)
  map("q", M.close)
  map("<Esc>", M.close)
  vim.api.nvim_create_autocmd("WinLeave", { buffer = buf, once = true, callback = function()
    vim.schedule(M.close)
  end })
end

return M
