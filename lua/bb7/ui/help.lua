-- Discoverability: `?` opens a float listing the keys of the current pane and of every pane,
-- and each pane's status line hints at its first keys. Both are built from the keymap
-- options, so a remapped or disabled key shows as it is.
local config = require("bb7.config")

local M = {}

-- What a pane shows that no key says, one line each, under "Notes" in its help.
M.notes = {
  global = { 'Layouts: layout = "tab", "float", "left" or "right"; :BB7Split opens the side chat beside the code' },
  chats = { "⊘ locked: another bb7 process holds the chat; <CR> refuses it, unlock asks, then frees it" },
  files = { "Auto-preview: the preview shows the file under the cursor (its diff in a diff view); the input or chats bring the chat back" },
  input = {
    "Completion (<C-x><C-o>, nvim-cmp, blink.cmp): @file offers project files (taking one adds it), / the commands",
    "/add /remove /model /effort /new /title /help: a one-line message naming one runs it instead of sending",
    "The model picker (model key, :BB7Model): / filters, t shows models without tools, f favorite, a detail pane beside",
    "After failed file edits the input holds a retry: any send carries the errors; cancel aborts it",
  },
  preview = {
    "A spinner under a running reply: Waiting… (nothing yet) or Streaming…, with the time since the send",
    "⚠ banner at the top: the project instructions do not parse; sending waits until the file is fixed and written",
    "Closed and reopened, the tab keeps the focused pane, the cursors and this view (file, diff or chat)",
  },
}

local TITLES = { chats = "Chats", files = "Files", info = "Info", preview = "Preview", input = "Input", split = "Split", global = "Every pane" }

local function modes(mode)
  if type(mode) == "table" then
    return table.concat(mode, ",")
  end
  return mode
end

--- The help lines for `pane`: its keys, then the keys of every pane. Returns `lines` and the
--- key columns to highlight (`{row, end_col}`, 0-based).
function M.lines(pane)
  local keymaps = config.options.keymaps
  local lines, keys = {}, {}
  local function section(name, entries)
    if not entries or #entries == 0 then
      return
    end
    if #lines > 0 then
      table.insert(lines, "")
    end
    table.insert(lines, TITLES[name] or name)
    for _, entry in ipairs(entries) do
      local lhs = entry[2]
      local mode = modes(entry[1])
      local desc = entry[4] or tostring(entry[3])
      if mode ~= "n" then
        desc = desc .. " (" .. mode .. ")"
      end
      table.insert(lines, string.format("  %-9s %s", lhs, desc))
      table.insert(keys, { #lines - 1, 2 + math.max(9, #lhs) })
    end
  end
  section(pane, keymaps[pane])
  if M.notes[pane] then
    table.insert(lines, "")
    table.insert(lines, "Notes")
    for _, note in ipairs(M.notes[pane]) do
      table.insert(lines, "  " .. note)
    end
  end
  if pane ~= "split" and pane ~= "review" then
    section("global", keymaps.global)
    if pane ~= "global" then
      for _, note in ipairs(M.notes.global) do
        table.insert(lines, "  " .. note)
      end
    end
    M.commands(lines)
  end
  return lines, keys
end

--- Appends the `:BB7*` commands with their descriptions (from their definitions) to `lines`.
function M.commands(lines)
  local cmds = {}
  for name, cmd in pairs(vim.api.nvim_get_commands({})) do
    if name:match("^BB7") then
      table.insert(cmds, { name, (cmd.definition or ""):gsub("^bb7: ", "") })
    end
  end
  if #cmds == 0 then
    return
  end
  table.sort(cmds, function(a, b)
    return a[1] < b[1]
  end)
  table.insert(lines, "")
  table.insert(lines, "Commands")
  for _, cmd in ipairs(cmds) do
    table.insert(lines, string.format("  :%-20s %s", cmd[1], cmd[2]))
  end
end

local ns = vim.api.nvim_create_namespace("bb7-help")

--- Opens the overlay for `pane` (the pane of the current buffer when nil); `q`, `?` or <Esc>
--- close it, as does leaving it.
function M.show(pane)
  pane = pane or require("bb7.ui.buffers").pane_of() or "global"
  local lines, keys = M.lines(pane)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  for _, key in ipairs(keys) do
    vim.api.nvim_buf_set_extmark(buf, ns, key[1], 2, { end_col = math.min(key[2], #lines[key[1] + 1]), hl_group = "BB7HintKey" })
  end
  for row, line in ipairs(lines) do
    if line ~= "" and not line:match("^ ") then
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { end_col = #line, hl_group = "Title" })
    end
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "bb7-help"
  pcall(vim.api.nvim_buf_set_name, buf, require("bb7.ui.buffers").name("keys"))
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 2)
  end
  width = math.min(width, vim.o.columns - 4)
  local height = math.min(#lines, vim.o.lines - 4)
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " BB-7 keys: " .. (TITLES[pane] or pane) .. " ",
    title_pos = "center",
  })
  local function close()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  for _, lhs in ipairs({ "q", "?", "<Esc>" }) do
    vim.keymap.set("n", lhs, close, { buffer = buf, nowait = true, silent = true })
  end
  vim.api.nvim_create_autocmd("WinLeave", { buffer = buf, once = true, callback = close })
  return win, buf
end

local function escape(text)
  return (text:gsub("%%", "%%%%"))
end

-- The actions a narrow hint shows first (the rest follow in the keymaps' order): the files
-- pane is as narrow as the sidebar, and its apply keys came after five others.
local FIRST = {
  files = { "apply", "apply_all", "diff", "reject" },
}

-- What the preview's hint shows while it holds a file or a diff (its chat keys do nothing
-- there): the keys of the views.
local FILE_VIEW = { "view_chat", "next_file", "prev_file", "toggle_full_diff", "view_diff", "view_file" }

-- The keymap entries a hint of `pane` offers, in the order it shows them.
local function hint_entries(pane)
  local entries = config.options.keymaps[pane] or {}
  local preview_mode = pane == "preview" and package.loaded["bb7.ui.preview"] and require("bb7.ui.preview").mode
  if preview_mode == "file" or preview_mode == "diff" then
    local out = {}
    for _, action in ipairs(FILE_VIEW) do
      for _, entry in ipairs(config.options.keymaps.global or {}) do
        if entry[3] == action and (action ~= "toggle_full_diff" or preview_mode == "diff") then
          table.insert(out, entry)
        end
      end
    end
    return out
  end
  local first = FIRST[pane]
  if not first then
    return entries
  end
  local rank = {}
  for i, action in ipairs(first) do
    rank[action] = i
  end
  local out = vim.list_slice(entries, 1)
  -- a stable sort: the ranked actions first, the others in their own order
  local index = {}
  for i, entry in ipairs(out) do
    index[entry] = i
  end
  table.sort(out, function(a, b)
    local ra, rb = rank[a[3]] or (#first + 1), rank[b[3]] or (#first + 1)
    if ra ~= rb then
      return ra < rb
    end
    return index[a] < index[b]
  end)
  return out
end

--- The hint of `pane` as `{ key, name }` pairs: as many of its normal-mode keys as fit in
--- `width` columns (each action once), then the help key.
function M.hint_pairs(pane, width)
  width = width or 80
  local help_key
  for _, entry in ipairs(config.options.keymaps.global or {}) do
    if entry[3] == "help" then
      help_key = entry[2]
    end
  end
  local tail = help_key and (help_key .. " keys") or ""
  local used = 1 + #tail
  local found, seen = {}, {}
  for _, entry in ipairs(hint_entries(pane)) do
    local mode = entry[1]
    local normal = mode == "n" or (type(mode) == "table" and vim.tbl_contains(mode, "n"))
    if normal and not seen[entry[3]] then
      seen[entry[3]] = true
      local name = tostring(entry[3]):gsub("_", " ")
      local cost = vim.fn.strdisplaywidth(entry[2] .. " " .. name .. " · ")
      if used + cost > width then
        break
      end
      used = used + cost
      table.insert(found, { entry[2], name })
    end
  end
  if help_key then
    table.insert(found, { help_key, "keys" })
  end
  return found
end

--- The hint of `pane` as a 'statusline' value, e.g. "<CR> send · gm model · ? keys".
function M.hint(pane, width)
  local parts = {}
  for _, pair in ipairs(M.hint_pairs(pane, width)) do
    table.insert(parts, "%#BB7HintKey#" .. escape(pair[1]) .. "%#BB7HintText# " .. escape(pair[2]))
  end
  -- a window made narrower later cuts the hint at its end, not its start
  return " " .. table.concat(parts, "%#BB7HintText# · ") .. "%<"
end

--- The hint of `pane` as chunks of a float's footer (`{ text, group }`), `width` columns.
function M.hint_chunks(pane, width)
  local chunks = { { " ", "BB7HintText" } }
  for i, pair in ipairs(M.hint_pairs(pane, width)) do
    if i > 1 then
      table.insert(chunks, { " · ", "BB7HintText" })
    end
    table.insert(chunks, { pair[1], "BB7HintKey" })
    table.insert(chunks, { " " .. pair[2], "BB7HintText" })
  end
  table.insert(chunks, { " ", "BB7HintText" })
  return chunks
end

--- Puts each pane's hint in its window's status line.
function M.decorate(wins)
  for pane, win in pairs(wins) do
    if vim.api.nvim_win_is_valid(win) then
      vim.wo[win].statusline = M.hint(pane, vim.api.nvim_win_get_width(win))
    end
  end
end

return M
