-- Completion in the input: `@file` offers the project's files (taking one adds it to the
-- chat's context) and `/` at the start of the message the input's commands (bb7.slash).
-- `omnifunc` serves <C-x><C-o>; bb7.complete.cmp and bb7.complete.blink adapt the same items
-- for nvim-cmp and blink.cmp, registered only when those plugins are loaded.
local M = {}

M.MAX_FILES = 5000
local cache = { root = nil, at = 0, files = {} }

--- The project's files, relative to its root: git's tracked and untracked-not-ignored files
--- inside a work tree, else a walk skipping hidden entries. Cached for ten seconds.
function M.project_files()
  local state = require("bb7.state")
  local root = state.data.root
  if not root or state.data.global_only then
    return {}
  end
  if cache.root == root and os.time() - cache.at < 10 then
    return cache.files
  end
  local files = {}
  local prefix = #root + 2 -- after "root/"
  for _, abs in ipairs(require("bb7.add_targets").files_under(root)) do
    -- (bb7's own store is left out there)
    table.insert(files, abs:sub(prefix))
  end
  if #files > M.MAX_FILES then
    files = vim.list_slice(files, 1, M.MAX_FILES)
  end
  cache = { root = root, at = os.time(), files = files }
  return files
end

--- What is being completed in `before` (the line up to the cursor; `row` its 0-based line):
--- `{ kind = "file"|"command", start = byte column where the completed word starts, base }`,
--- or nil.
function M.context(before, row)
  local at = before:match("()@[^%s@]*$")
  if at and (at == 1 or before:sub(at - 1, at - 1):match("%s")) then
    return { kind = "file", start = at, base = before:sub(at + 1) }
  end
  if (row or 0) == 0 and before:match("^/%a*$") then
    return { kind = "command", start = 1, base = before:sub(2) }
  end
  return nil
end

--- The items for `ctx` (M.context): `{ word, abbr, menu, kind, path }` (pure but for the files).
function M.items(ctx)
  local out = {}
  if not ctx then
    return out
  end
  local base = ctx.base:lower()
  if ctx.kind == "file" then
    local in_context = {}
    for _, file in ipairs(require("bb7.state").data.files or {}) do
      in_context[file.path] = true
    end
    for _, path in ipairs(M.project_files()) do
      if path:lower():find(base, 1, true) then
        table.insert(out, { word = path, abbr = path, menu = in_context[path] and "[in context]" or "[file]", kind = "file", path = path })
      end
    end
  else
    for _, cmd in ipairs(require("bb7.slash").COMMANDS) do
      if cmd.name:find(base, 1, true) == 1 then
        table.insert(out, { word = cmd.name .. " ", abbr = "/" .. cmd.name .. (cmd.args ~= "" and (" " .. cmd.args) or ""), menu = cmd.desc, kind = "command" })
      end
    end
  end
  return out
end

--- Taking a file item adds the file to the chat's context (unless it is there already).
function M.accept(item)
  if not item or item.kind ~= "file" or not item.path then
    return
  end
  for _, file in ipairs(require("bb7.state").data.files or {}) do
    if file.path == item.path and not file.start_line then
      return
    end
  end
  require("bb7.commands").add({ args = item.path, range = 0 })
end

--- 'omnifunc' of the input (<C-x><C-o>).
function M.omnifunc(findstart, base)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local before = vim.api.nvim_get_current_line():sub(1, col)
  local ctx = M.context(before, row - 1)
  if findstart == 1 then
    if not ctx then
      return -3 -- cancel silently
    end
    return ctx.start -- 0-based column after the "@" or "/"
  end
  if not ctx then
    return {}
  end
  ctx.base = base
  local out = {}
  for _, item in ipairs(M.items(ctx)) do
    table.insert(out, { word = item.word, abbr = item.abbr, menu = item.menu, user_data = { bb7 = item.kind, path = item.path } })
  end
  return out
end

--- Sets up completion in the input buffer `buf`: the omnifunc and the CompleteDone hook that
--- adds a taken file (the nvim-cmp and blink.cmp sources register themselves).
local hint_ns = vim.api.nvim_create_namespace("bb7-complete-hint")
M.HINT = "<C-x><C-o> completes"

--- Shows M.HINT after the cursor line of `buf` while an `@file` or `/command` is being typed
--- and no completion plugin offers the items as you type (without one the omnifunc must be
--- asked, which nothing said).
function M.hint(buf)
  vim.api.nvim_buf_clear_namespace(buf, hint_ns, 0, -1)
  if package.loaded["cmp"] or package.loaded["blink.cmp"] or vim.fn.pumvisible() == 1 then
    return
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(win)
  local line = vim.api.nvim_buf_get_lines(buf, cursor[1] - 1, cursor[1], false)[1] or ""
  if M.context(line:sub(1, cursor[2]), cursor[1] - 1) then
    vim.api.nvim_buf_set_extmark(buf, hint_ns, cursor[1] - 1, 0, { virt_text = { { M.HINT, "BB7Dim" } }, virt_text_pos = "eol" })
  end
end

function M.attach(buf)
  vim.bo[buf].omnifunc = "v:lua.require'bb7.complete'.omnifunc"
  local group = vim.api.nvim_create_augroup("bb7-complete", { clear = true })
  vim.api.nvim_create_autocmd({ "TextChangedI", "CursorMovedI" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.hint(buf)
    end,
  })
  vim.api.nvim_create_autocmd("InsertLeave", {
    group = group,
    buffer = buf,
    callback = function()
      vim.api.nvim_buf_clear_namespace(buf, hint_ns, 0, -1)
    end,
  })
  vim.api.nvim_create_autocmd("CompleteDone", {
    group = group,
    buffer = buf,
    callback = function()
      local item = vim.v.completed_item
      local data = type(item) == "table" and item.user_data
      if type(data) == "table" and data.bb7 == "file" then
        M.accept({ kind = "file", path = data.path })
      end
    end,
  })
end

return M
