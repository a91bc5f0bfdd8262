-- The files pane: context and output files with their statuses, as a tree. Directories can be
-- collapsed (<CR> or `za` on one); a directory with only one directory in it shares its row
-- ("src/lua/"); files outside the project show under their absolute directory, with `~` for
-- the home directory. Files keep the order the daemon lists them in within a directory.
local buffers = require("bb7.ui.buffers")
local format = require("bb7.format")
local safepath = require("bb7.safepath")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-files")
M.rows = {} -- row (1-based) -> file entry
M.dirs = {} -- row (1-based) -> directory key (its shown path, "src/lua/")
M.collapsed = {} -- directory key -> true

local GROUPS = {
  M = "BB7StatusM",
  A = "BB7StatusA",
  ["!A"] = "BB7StatusConflict",
  ["~M"] = "BB7StatusConflict",
  ["~"] = "BB7StatusSync",
  S = "BB7StatusS",
  R = "BB7StatusR",
}

function M.buf()
  return buffers.get("files")
end

--- `path` as shown: an absolute path under the home directory starts with `~`; control
--- characters are written out (a model's file name with a newline is one row, not a throw).
function M.display_path(path)
  local home = vim.env.HOME
  if home and home ~= "" and home ~= "/" and path:sub(1, 1) == "/" then
    home = home:gsub("/+$", "")
    if path:sub(1, #home + 1) == home .. "/" then
      return safepath.inert("~" .. path:sub(#home + 1))
    end
  end
  return safepath.inert(path)
end

-- The directory parts and the file name of a shown path ("/tmp/a/b.c" -> {"/tmp", "a"}, "b.c").
local function split(shown)
  local parts = vim.split(shown, "/", { plain = true, trimempty = false })
  if parts[1] == "" and #parts > 1 then
    -- absolute: the first directory keeps its slash
    table.remove(parts, 1)
    parts[1] = "/" .. parts[1]
  end
  local name = table.remove(parts)
  return parts, name
end

--- The tree of `files`: nodes `{ name, key, children = {...}, files = {entries} }` in first
--- appearance order (pure).
function M.tree(files)
  local root = { key = "", children = {}, order = {} }
  for _, file in ipairs(files) do
    local dirs = split(M.display_path(file.path))
    local node = root
    for _, dir in ipairs(dirs) do
      local key = node.key .. dir .. "/"
      if not node.children[key] then
        node.children[key] = { name = dir, key = key, children = {}, order = {} }
        table.insert(node.order, { dir = node.children[key] })
      end
      node = node.children[key]
    end
    table.insert(node.order, { file = file })
  end
  -- a directory holding only one directory shares its row with it
  local function compress(node)
    for _, item in ipairs(node.order) do
      if item.dir then
        local dir = item.dir
        while #dir.order == 1 and dir.order[1].dir do
          local child = dir.order[1].dir
          child.name = dir.name .. "/" .. child.name
          dir = child
        end
        item.dir = dir
        compress(dir)
      end
    end
  end
  compress(root)
  return root
end

--- One file line: status (3 wide), indent, name with the section's lines, tokens.
function M.line(file, indent, name)
  name = name or M.display_path(file.path)
  if file.start_line then
    name = string.format("%s:%d-%d", name, file.start_line, file.end_line)
  end
  local tokens = file.tokens and ("  " .. format.tokens(file.tokens)) or ""
  local missing = file.missing and "  (missing)" or ""
  return string.format("%-3s %s%s%s%s", file.display_status or file.status or "", indent or "", name, missing, tokens)
end

-- How many files are under `node`.
local function count(node)
  local n = 0
  for _, item in ipairs(node.order) do
    n = n + (item.dir and count(item.dir) or 1)
  end
  return n
end

--- The lines of `files` with the collapsed directories of `collapsed` (pure): returns the
--- lines, row -> file and row -> directory key.
function M.lines(files, collapsed)
  local lines, rows, dirs = {}, {}, {}
  local function walk(node, depth)
    local indent = string.rep("  ", depth)
    for _, item in ipairs(node.order) do
      if item.dir then
        local dir = item.dir
        local closed = collapsed[dir.key]
        local tail = closed and string.format("  (%d)", count(dir)) or ""
        table.insert(lines, string.format("    %s%s %s/%s", indent, closed and "▸" or "▾", dir.name, tail))
        dirs[#lines] = dir.key
        if not closed then
          walk(dir, depth + 1)
        end
      else
        local file = item.file
        local _, name = split(M.display_path(file.path))
        table.insert(lines, M.line(file, indent, name))
        rows[#lines] = file
      end
    end
  end
  walk(M.tree(files), 0)
  return lines, rows, dirs
end

function M.render(files)
  M.files = files
  local buf = M.buf()
  local lines, rows, dirs = M.lines(files, M.collapsed)
  if #lines == 0 then
    lines = { "  No files: :BB7Add" }
  end
  buffers.set_lines(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  M.rows, M.dirs = rows, dirs
  for row, file in pairs(rows) do
    local group = GROUPS[file.display_status or file.status or ""]
    if group then
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { end_col = 3, hl_group = group })
    end
  end
  for row in pairs(dirs) do
    vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 4, { end_col = #lines[row], hl_group = "BB7Directory" })
  end
end

function M.current(win)
  local row = vim.api.nvim_win_get_cursor(win or 0)[1]
  return M.rows[row]
end

--- The directory key of the row under the cursor of `win`, or nil.
function M.current_dir(win)
  local row = vim.api.nvim_win_get_cursor(win or 0)[1]
  return M.dirs[row]
end

--- Collapses or expands the directory under the cursor of `win`; the cursor stays on it.
--- Returns false when the row is not a directory.
function M.toggle(win)
  local key = M.current_dir(win)
  if not key then
    return false
  end
  M.collapsed[key] = not M.collapsed[key] or nil
  M.render(M.files or {})
  for row, dir in pairs(M.dirs) do
    if dir == key and win and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { row, 0 })
    end
  end
  return true
end

return M
