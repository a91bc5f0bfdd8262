-- What `:BB7Add` adds beyond one file: every file of a directory (inside a git work tree the
-- files git does not ignore, found by reading the ignore files, never by running git; else a
-- walk that skips hidden entries), and
-- the entries of an oil.nvim buffer (the one under the cursor or the selected lines). Files
-- that are binary or over `MAX_BYTES` are left out and counted.
local M = {}

M.MAX_BYTES = 1024 * 1024
M.MAX_FILES = 2000

--- Whether `text` looks binary: a NUL byte in its first 8000 bytes (git's test, and the first
--- plugin's).
function M.is_binary(text)
  return text:sub(1, 8000):find("\0", 1, true) ~= nil
end

--- Why `text` cannot be a context file ("binary file", "1.1 MiB, over the 1 MiB limit"), or nil.
function M.refusal(text)
  if M.is_binary(text) then
    return "binary file"
  end
  if #text > M.MAX_BYTES then
    return string.format("%.1f MiB, over the 1 MiB limit", #text / (1024 * 1024))
  end
end

local uv = vim.uv or vim.loop
local bit = require("bit")

--- The content of the regular file `path` when it is at most `cap` bytes, else nil. Opened
--- without following a link at its name and without blocking, and checked on the open file:
--- a FIFO or a device swapped in after a listing neither hangs Neovim nor feeds it forever.
local function read_regular(path, cap)
  local c = uv.constants or {}
  local flags = bit.bor(c.O_RDONLY or 0, c.O_NONBLOCK or 0, c.O_NOFOLLOW or 0)
  local fd = uv.fs_open(path, flags, 0)
  if not fd then
    return nil
  end
  local stat = uv.fs_fstat(fd)
  local text
  if stat and stat.type == "file" and stat.size <= cap then
    text = stat.size == 0 and "" or uv.fs_read(fd, stat.size, 0)
  end
  uv.fs_close(fd)
  return text
end

-- Listing a directory never runs git: a cloned repository controls the configuration git
-- would read there (a `docs/` laid out as a bare repository with `core.fsmonitor` set makes
-- any git command run a program). The walk reads the ignore files itself instead.

local MAX_IGNORE_BYTES = 1024 * 1024
--- Entries looked at before a listing stops (a huge tree must not freeze Neovim).
local MAX_VISITED = 50000
local MAX_DEPTH = 20

--- Lua patterns for one gitignore glob (`**/`, `/**/` and `/**` need two forms each).
local function glob_patterns(glob)
  local forms = { "" }
  local i = 1
  local function add(piece)
    for k, form in ipairs(forms) do
      forms[k] = form .. piece
    end
  end
  while i <= #glob do
    local ch = glob:sub(i, i)
    if glob:sub(i, i + 2) == "**/" then
      -- zero or more directories
      local with = {}
      for _, form in ipairs(forms) do
        table.insert(with, form)
        table.insert(with, form .. ".*/")
      end
      forms = with
      i = i + 3
    elseif glob:sub(i, i + 1) == "**" then
      add(".*")
      i = i + 2
    elseif ch == "*" then
      add("[^/]*")
      i = i + 1
    elseif ch == "?" then
      add("[^/]")
      i = i + 1
    elseif ch == "[" and glob:find("]", i + 2, true) then
      local close = glob:find("]", i + 2, true)
      local body = glob:sub(i + 1, close - 1):gsub("^!", "^"):gsub("%%", "%%%%")
      add("[" .. body .. "]")
      i = close + 1
    elseif ch == "\\" and i < #glob then
      add((glob:sub(i + 1, i + 1):gsub("%W", "%%%0")))
      i = i + 2
    else
      add((ch:gsub("%W", "%%%0")))
      i = i + 1
    end
  end
  for k, form in ipairs(forms) do
    forms[k] = "^" .. form .. "$"
  end
  return forms
end

--- The rules of one ignore file's text; `base` is the directory they apply below, relative
--- to the walk's top ("" for the top itself).
local function parse_rules(text, base)
  local rules = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("\r$", ""):gsub("([^\\])%s+$", "%1")
    if line ~= "" and not line:match("^#") then
      local negate = line:sub(1, 1) == "!"
      if negate then
        line = line:sub(2)
      end
      line = line:gsub("^\\([#!])", "%1")
      local dir_only = line:sub(-1) == "/"
      line = line:gsub("/+$", "")
      local anchored = line:find("/", 1, true) ~= nil
      line = line:gsub("^/", "")
      if line ~= "" then
        table.insert(rules, {
          base = base,
          negate = negate,
          dir_only = dir_only,
          anchored = anchored,
          patterns = glob_patterns(line),
        })
      end
    end
  end
  return rules
end

--- Whether `rel` (relative to the top, a directory when `is_dir`) is ignored by `rules`:
--- the last rule that matches decides, as in git.
local function is_ignored(rules, rel, is_dir)
  local ignored = false
  for _, rule in ipairs(rules) do
    local below = rule.base == "" and rel or (rel:sub(1, #rule.base + 1) == rule.base .. "/" and rel:sub(#rule.base + 2))
    if below and (is_dir or not rule.dir_only) then
      local subject = rule.anchored and below or below:match("[^/]+$")
      for _, pattern in ipairs(rule.patterns) do
        if subject:match(pattern) then
          ignored = not rule.negate
          break
        end
      end
    end
  end
  return ignored
end

--- The directory holding `.git` at or above `dir` (the work tree's top), or nil.
local function work_tree_top(dir)
  local current = dir
  while current and current ~= "" do
    if uv.fs_lstat(current .. "/.git") then
      return current
    end
    local parent = vim.fs.dirname(current)
    if parent == current then
      return nil
    end
    current = parent
  end
  return nil
end

--- The user's own global ignore file (git's default location).
local function global_ignore_file()
  local config = vim.env.XDG_CONFIG_HOME
  if not config or config == "" then
    config = (vim.env.HOME or "") .. "/.config"
  end
  return config .. "/git/ignore"
end

--- The files under `dir` that git would list as tracked or untracked-but-not-ignored,
--- found by reading the ignore files (`.gitignore` at every level from the work tree's top,
--- `.git/info/exclude`, the user's global ignore file) rather than by running git. Outside
--- a work tree hidden entries are left out too. Links are not followed, `.git` and `.bb7`
--- never entered.
local function walk(dir)
  local top = work_tree_top(dir)
  local in_tree = top ~= nil
  top = top or dir
  local rules = {}
  local function load(path, base)
    local text = read_regular(path, MAX_IGNORE_BYTES)
    if text then
      vim.list_extend(rules, parse_rules(text, base))
    end
  end
  if in_tree then
    load(global_ignore_file(), "")
    load(top .. "/.git/info/exclude", "")
  end
  -- the ignore files of the directories from the top down to `dir`
  local rel_dir = dir == top and "" or dir:sub(#top + 2)
  local base = ""
  load(top .. "/.gitignore", "")
  for part in rel_dir:gmatch("[^/]+") do
    base = base == "" and part or (base .. "/" .. part)
    if is_ignored(rules, base, true) then
      return {}
    end
    load(top .. "/" .. base .. "/.gitignore", base)
  end
  local out, visited = {}, 0
  local function visit(rel, depth)
    local abs = rel == "" and top or (top .. "/" .. rel)
    local handle = uv.fs_scandir(abs)
    if not handle or depth > MAX_DEPTH then
      return
    end
    local entries = {}
    while true do
      local name, kind = uv.fs_scandir_next(handle)
      if not name then
        break
      end
      table.insert(entries, { name = name, kind = kind })
    end
    table.sort(entries, function(x, y)
      return x.name < y.name
    end)
    for _, entry in ipairs(entries) do
      visited = visited + 1
      if visited > MAX_VISITED then
        return
      end
      local name, kind = entry.name, entry.kind
      local lower = name:lower()
      local child = rel == "" and name or (rel .. "/" .. name)
      local hidden = name:sub(1, 1) == "."
      if lower ~= ".git" and lower ~= ".bb7" and not (hidden and not in_tree) then
        if kind == "directory" and not is_ignored(rules, child, true) then
          local before = #rules
          load(top .. "/" .. child .. "/.gitignore", child)
          visit(child, depth + 1)
          -- a directory's rules apply below it only
          for k = #rules, before + 1, -1 do
            rules[k] = nil
          end
        elseif kind == "file" and not is_ignored(rules, child, false) then
          table.insert(out, top .. "/" .. child)
        end
      end
    end
  end
  visit(rel_dir, 0)
  return out
end

--- The absolute paths of the files under `dir` (absolute, without a trailing slash): what
--- git would list as tracked or untracked-but-not-ignored inside a work tree, else the
--- files of a walk skipping hidden entries (both found without running git). Never bb7's
--- own store (`.bb7/`: chats, snapshots, outputs). Sorted.
function M.files_under(dir)
  local paths = vim.tbl_filter(function(path)
    return not path:find("/.bb7/", 1, true)
  end, walk(dir))
  table.sort(paths)
  return paths
end

--- The readable text files under `dir` (absolute): `{files = {{abs, content}}, skipped = n}`.
function M.directory(dir)
  dir = vim.fn.fnamemodify(dir, ":p"):gsub("/$", "")
  local paths = M.files_under(dir)
  local files, skipped = {}, 0
  for _, abs in ipairs(paths) do
    local text = read_regular(abs, M.MAX_BYTES)
    if text and not M.is_binary(text) and #files < M.MAX_FILES then
      table.insert(files, { abs = abs, content = text })
    else
      skipped = skipped + 1
    end
  end
  return { files = files, skipped = skipped }
end

--- Estimated tokens of every file of a listing.
function M.tokens(files, chars_per_token)
  local total = 0
  for _, file in ipairs(files) do
    total = total + math.ceil(#file.content / (chars_per_token or 3.5))
  end
  return total
end

-- The entry of line `lnum` of an oil buffer read from its text ("/12 name", "name/"), for when
-- oil.nvim itself does not answer.
local function line_entry(lnum)
  local text = vim.fn.getline(lnum):gsub("^/%d+%s+", ""):gsub("/$", "")
  if text == "" then
    return nil
  end
  return { name = text }
end

--- The absolute paths an oil.nvim buffer points at: the entries of lines `first`..`last`
--- (the cursor line without a range), or its directory when no entry is there. nil when the
--- current buffer is not an oil buffer (filetype `oil` or a name `oil:///dir/`; remote
--- `oil-ssh://` buffers are not local files).
function M.oil(first, last)
  local name = vim.api.nvim_buf_get_name(0)
  if vim.bo.filetype ~= "oil" and not name:match("^oil://") then
    return nil
  end
  local ok, oil = pcall(require, "oil")
  if not ok or type(oil.get_current_dir) ~= "function" then
    oil = nil
  end
  local dir = oil and oil.get_current_dir() or name:match("^oil://(/.*)$")
  if not dir then
    return nil
  end
  if not dir:match("/$") then
    dir = dir .. "/"
  end
  local paths = {}
  first = first or vim.fn.line(".")
  last = last or first
  for lnum = first, last do
    local entry = oil and oil.get_entry_on_line(0, lnum) or (not oil and line_entry(lnum))
    if entry and entry.name and entry.name ~= ".." then
      table.insert(paths, dir .. entry.name)
    end
  end
  if #paths == 0 then
    table.insert(paths, dir)
  end
  return vim.tbl_map(function(p)
    return (p:gsub("/$", ""))
  end, paths)
end

return M
