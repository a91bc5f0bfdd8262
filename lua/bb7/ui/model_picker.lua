-- The model picker: a floating list with each model's context length and price per million
-- tokens, favorites first, and beside it a detail pane for the model under the cursor (context,
-- prices in, out, cache and reasoning, max output, tools). `/` opens a filter prompt (words
-- matched in the id, narrowing as you type), `t` shows or hides the models that cannot call
-- tools (hidden at first, as in the first plugin: bb7 edits files through tools). <CR> picks,
-- f toggles a favorite in place, q or <Esc> closes.
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

--- The models of `models` matching every word of `text` (in the id, any case) and, with
--- `tools_only`, able to call tools (unknown counts as able). Pure.
function M.filter(models, text, tools_only)
  local words = vim.split(vim.trim((text or ""):lower()), "%s+", { trimempty = true })
  local out = {}
  for _, model in ipairs(models or {}) do
    local ok = not (tools_only and model.supports_tools == false)
    local id = (model.id or ""):lower()
    for _, word in ipairs(words) do
      ok = ok and id:find(word, 1, true) ~= nil
    end
    if ok then
      table.insert(out, model)
    end
  end
  return out
end

--- The detail pane's lines for `model` (pure): name and id, prices per million tokens (in,
--- out, cache read and write, reasoning when the backend gives them), context, max output,
--- reasoning and tools.
function M.detail(model)
  if not model then
    return { "", "  No model matches" }
  end
  local pricing = model.pricing or {}
  local lines = { "", "  " .. (model.name or model.id) }
  if model.name and model.name ~= model.id then
    table.insert(lines, "  " .. model.id)
  end
  table.insert(lines, "")
  local function row(label, value)
    table.insert(lines, string.format("  %-12s %s", label, value))
  end
  local function price_row(label, value)
    if tonumber(value) and tonumber(value) > 0 then
      row(label, M.price(value) .. " / 1M")
    end
  end
  row("Price in", M.price(pricing.prompt) .. (tonumber(pricing.prompt) and tonumber(pricing.prompt) > 0 and " / 1M" or ""))
  row("Price out", M.price(pricing.completion) .. (tonumber(pricing.completion) and tonumber(pricing.completion) > 0 and " / 1M" or ""))
  price_row("Cache read", pricing.input_cache_read)
  price_row("Cache write", pricing.input_cache_write)
  price_row("Reasoning", pricing.internal_reasoning)
  table.insert(lines, "")
  row("Context", tonumber(model.context_length) and format.tokens(model.context_length) or "-")
  local max_out = tonumber(model.max_completion_tokens)
  row("Max output", max_out and max_out > 0 and format.tokens(max_out) or "-")
  table.insert(lines, "")
  local function yes(value)
    return value == true and "yes" or value == false and "no" or "?"
  end
  row("Reasoning", yes(model.supports_reasoning))
  row("Tools", yes(model.supports_tools))
  return lines
end

M.state = nil -- { buf, win, detail_buf, detail_win, models, current, on_pick, filter, tools_only }

local function shown_models(s)
  return M.filter(s.models, s.filter, s.tools_only)
end

local function title(s, count)
  local parts = { string.format("%d of %d", count, #s.models) }
  if s.tools_only then
    table.insert(parts, "tools only")
  end
  if s.filter ~= "" then
    table.insert(parts, "/" .. s.filter)
  end
  return " BB-7 models (" .. table.concat(parts, ", ") .. ") "
end

local FOOTER = " <CR> pick · / filter · t tools · f favorite · q close "

local function show_detail()
  local s = M.state
  if not s or not vim.api.nvim_buf_is_valid(s.detail_buf) then
    return
  end
  local lines = M.detail(M.current())
  vim.bo[s.detail_buf].modifiable = true
  vim.api.nvim_buf_set_lines(s.detail_buf, 0, -1, false, lines)
  vim.bo[s.detail_buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(s.detail_buf, ns, 0, -1)
  for i, line in ipairs(lines) do
    local label = line:match("^  (%u[%a ]-)  +%S")
    if label then
      vim.api.nvim_buf_set_extmark(s.detail_buf, ns, i - 1, 2, { end_col = 2 + #label, hl_group = "Comment" })
    elseif i == 2 then
      vim.api.nvim_buf_set_extmark(s.detail_buf, ns, i - 1, 0, { end_col = #line, hl_group = "Title" })
    end
  end
end

local function redraw(keep_id)
  local s = M.state
  local models = shown_models(s)
  local lines, rows = M.lines(models, favorites.list(), s.current)
  s.rows = rows
  if #lines == 0 then
    lines = { "  No model matches" .. (s.tools_only and " (t shows the models without tools)" or "") }
  end
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
  if vim.api.nvim_win_is_valid(s.win) then
    vim.api.nvim_win_set_config(s.win, { title = title(s, #rows), title_pos = "center", footer = FOOTER, footer_pos = "center" })
  end
  show_detail()
end

function M.close()
  local s = M.state
  M.state = nil
  if not s then
    return
  end
  local here = vim.api.nvim_get_current_win()
  local inside = here == s.win or here == s.prompt_win or here == s.detail_win
  -- not ipairs over the three: without a filter prompt the first is nil and ipairs stopped
  -- there, leaving the picker on screen after a pick
  for _, key in ipairs({ "prompt_win", "detail_win", "win" }) do
    local win = s[key]
    if win and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  -- closed from inside: back where the picker was opened from (after the filter prompt, Vim's
  -- previous window was the closed prompt and the cursor landed in the tab's first window, the
  -- chats pane); closed by going elsewhere: the cursor stays there
  if inside and s.origin and vim.api.nvim_win_is_valid(s.origin) and vim.api.nvim_get_current_win() ~= s.origin then
    pcall(vim.api.nvim_set_current_win, s.origin)
  end
end

--- The model on the cursor line.
function M.current()
  local s = M.state
  if not s or not vim.api.nvim_win_is_valid(s.win) then
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

--- Shows or hides the models that cannot call tools.
function M.toggle_tools()
  local s = M.state
  if not s then
    return
  end
  local model = M.current()
  s.tools_only = not s.tools_only
  redraw(model and model.id)
end

--- Filters the list by `text` (as typed in the prompt).
function M.set_filter(text)
  local s = M.state
  if not s then
    return
  end
  s.filter = text or ""
  redraw(s.current)
  if vim.api.nvim_win_is_valid(s.win) and #s.rows > 0 then
    local keep = false
    for i, model in ipairs(s.rows) do
      if model.id == s.current then
        keep = i
      end
    end
    vim.api.nvim_win_set_cursor(s.win, { keep or 1, 0 })
  end
  show_detail()
end

function M.pick()
  local model = M.current()
  local on_pick = M.state and M.state.on_pick
  M.close()
  if model and on_pick then
    on_pick(model.id)
  end
end

-- Moves the list's cursor by `delta` (from the prompt).
local function move(delta)
  local s = M.state
  if not s or #s.rows == 0 then
    return
  end
  local row = vim.api.nvim_win_get_cursor(s.win)[1]
  row = math.max(1, math.min(#s.rows, row + delta))
  vim.api.nvim_win_set_cursor(s.win, { row, 0 })
  show_detail()
end

--- Opens the filter prompt: a line above the list; what is typed filters the list at once.
--- <CR> or <Esc> go back to the list (keeping the filter), <C-n>/<C-p> move in the list.
function M.prompt()
  local s = M.state
  if not s then
    return
  end
  if s.prompt_win and vim.api.nvim_win_is_valid(s.prompt_win) then
    vim.api.nvim_set_current_win(s.prompt_win)
    vim.cmd("startinsert!")
    return
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { s.filter })
  local list = vim.api.nvim_win_get_config(s.win)
  local row = type(list.row) == "table" and list.row[false] or list.row
  local col = type(list.col) == "table" and list.col[false] or list.col
  s.prompt_buf = buf
  s.prompt_win = vim.api.nvim_open_win(buf, true, {
    relative = "editor", row = math.max(0, row - 3), col = col, width = list.width, height = 1,
    style = "minimal", border = "rounded", title = " Filter ", title_pos = "left",
  })
  vim.api.nvim_create_autocmd("WinLeave", { buffer = buf, callback = function()
    vim.schedule(function()
      local st = M.state
      local now = vim.api.nvim_get_current_win()
      if st and st.prompt_buf == buf and now ~= st.win and now ~= st.prompt_win then
        M.close()
      end
    end)
  end })
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChanged" }, { buffer = buf, callback = function()
    M.set_filter(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or "")
  end })
  local function back()
    vim.cmd("stopinsert")
    local st = M.state
    if st and st.prompt_win and vim.api.nvim_win_is_valid(st.prompt_win) then
      vim.api.nvim_win_close(st.prompt_win, true)
      st.prompt_win = nil
    end
    if st and vim.api.nvim_win_is_valid(st.win) then
      vim.api.nvim_set_current_win(st.win)
    end
  end
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set({ "i", "n" }, "<CR>", back, opts)
  vim.keymap.set({ "i", "n" }, "<Esc>", back, opts)
  vim.keymap.set("i", "<C-n>", function() move(1) end, opts)
  vim.keymap.set("i", "<Down>", function() move(1) end, opts)
  vim.keymap.set("i", "<C-p>", function() move(-1) end, opts)
  vim.keymap.set("i", "<Up>", function() move(-1) end, opts)
  vim.cmd("startinsert!")
end

--- Opens the picker over `models`; `on_pick(id)` gets the chosen model.
function M.open(models, current, on_pick)
  M.close()
  local origin = vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "bb7-models"
  -- named for the tab line (an unnamed one shows as "[Scratch]")
  pcall(vim.api.nvim_buf_set_name, buf, require("bb7.ui.buffers").name("models"))
  local longest = 50
  for _, line in ipairs((M.lines(models, favorites.list(), current))) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line) + 2)
  end
  local detail_width = 34
  local width = math.min(vim.o.columns - 4 - detail_width - 2, longest)
  local height = math.max(12, math.min(#models, vim.o.lines - 8, 20))
  local row = math.floor((vim.o.lines - height) / 2)
  local col = math.max(0, math.floor((vim.o.columns - width - detail_width - 2) / 2))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "editor", row = row, col = col, width = math.max(20, width), height = height,
    style = "minimal", border = "rounded", title = " BB-7 models ", title_pos = "center",
  })
  vim.wo[win].cursorline = true
  local detail_buf = vim.api.nvim_create_buf(false, true)
  vim.bo[detail_buf].bufhidden = "wipe"
  local detail_win = vim.api.nvim_open_win(detail_buf, false, {
    relative = "editor", row = row, col = col + math.max(20, width) + 2, width = detail_width, height = height,
    style = "minimal", border = "rounded", title = " Details ", title_pos = "center", focusable = false,
  })
  M.state = {
    buf = buf, win = win, detail_buf = detail_buf, detail_win = detail_win, models = models or {},
    current = current, on_pick = on_pick, filter = "", tools_only = true, rows = {}, origin = origin,
  }
  redraw(current)
  local function map(lhs, fn)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map("<CR>", M.pick)
  map("f", M.toggle_favorite)
  map("t", M.toggle_tools)
  map("/", M.prompt)
  map("q", M.close)
  map("<Esc>", M.close)
  vim.api.nvim_create_autocmd("CursorMoved", { buffer = buf, callback = show_detail })
  vim.api.nvim_create_autocmd("WinLeave", { buffer = buf, callback = function()
    vim.schedule(function()
      local s = M.state
      -- the filter prompt is part of the picker; anywhere else closes it
      if s and s.buf == buf and vim.api.nvim_get_current_win() ~= s.prompt_win and vim.api.nvim_get_current_win() ~= s.win then
        M.close()
      end
    end)
  end })
end

return M
