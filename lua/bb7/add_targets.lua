-- What `:BB7Add` adds beyond one file: every file of a directory (git-tracked and untracked
-- but not ignored files inside a git work tree, else a walk that skips hidden entries), and
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

local function read(abs)
  local file = io.open(abs, "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

local function git_files(dir)
  if vim.fn.executable("git") == 0 then
    return nil
  end
  local result = vim.system({ "git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard" }, { text = true }):wait()
  if result.code ~= 0 then
    return nil
  end
  local out = {}
  for _, rel in ipairs(vim.split(result.stdout or "", "\0", { plain = true, trimempty = true })) do
    table.insert(out, dir .. "/" .. rel)
  end
  return out
end

local function walk(dir)
  local out = {}
  for name, kind in vim.fs.dir(dir, {
    depth = 20,
    skip = function(sub)
      return not vim.fs.basename(sub):match("^%.")
    end,
  }) do
    if kind == "file" and not vim.fs.basename(name):match("^%.") then
      table.insert(out, dir .. "/" .. name)
    end
  end
  return out
end

--- The absolute paths of the files under `dir` (absolute, without a trailing slash): git's
--- tracked and untracked-not-ignored files inside a work tree, else a walk skipping hidden
--- entries. Never bb7's own store (`.bb7/`: chats, snapshots, outputs), which git lists
--- among the untracked files unless it is ignored. Sorted.
function M.files_under(dir)
  local paths = vim.tbl_filter(function(path)
    return not path:find("/.bb7/", 1, true)
  end, git_files(dir) or walk(dir))
  table.sort(paths)
  return paths
end

--- The readable text files under `dir` (absolute): `{files = {{abs, content}}, skipped = n}`.
function M.directory(dir)
  dir = vim.fn.fnamemodify(dir, ":p"):gsub("/$", "")
  local paths = M.files_under(dir)
  local files, skipped = {}, 0
  for _, abs in ipairs(paths) do
    local stat = (vim.uv or vim.loop).fs_stat(abs)
    local text = stat and stat.type == "file" and stat.size <= M.MAX_BYTES and read(abs) or nil
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
