-- Writes an applied output into the project (the daemon never writes project files): through
-- the file's buffer when one is loaded, so Neovim does not warn that the file changed on disk
-- and the change can be undone; otherwise atomically on disk (temp file next to the target,
-- then rename), keeping the file's permission bits and following symlinks.
local M = {}

local uv = vim.uv or vim.loop

--- The loaded buffer of the file `abs`, or nil.
function M.buffer(abs)
  local want = vim.fn.resolve(vim.fn.fnamemodify(abs, ":p"))
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" and vim.fn.resolve(vim.fn.fnamemodify(name, ":p")) == want then
        return buf
      end
    end
  end
end

--- Whether `abs` has a loaded buffer with unsaved changes.
function M.unsaved(abs)
  local buf = M.buffer(abs)
  return buf ~= nil and vim.bo[buf].modified
end

--- Where a write to `abs` really lands when that is outside the project `root` (a link, or a
--- directory on the way that is a link), else nil. Without a project nothing is outside.
function M.outside(abs, root)
  if not root or root == "" then
    return nil
  end
  local real_root = vim.fn.resolve(vim.fn.fnamemodify(root, ":p")):gsub("/$", "")
  local target = vim.fn.resolve(vim.fn.fnamemodify(abs, ":p"))
  if target == real_root or vim.startswith(target, real_root .. "/") then
    return nil
  end
  return target
end

--- Why `abs` cannot be written (nil when it can): an existing file must be writable, a new
--- file needs its nearest existing parent to be a writable directory.
function M.unwritable(abs)
  local stat = uv.fs_stat(abs)
  if stat then
    if stat.type == "directory" then
      return "is a directory"
    end
    if vim.fn.filewritable(abs) ~= 1 then
      return "permission denied"
    end
    return nil
  end
  local dir = vim.fn.fnamemodify(abs, ":h")
  while vim.fn.isdirectory(dir) == 0 do
    if uv.fs_stat(dir) then
      return dir .. " is not a directory"
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  if vim.fn.filewritable(dir) ~= 2 then
    return "permission denied"
  end
end

local function lines_of(content)
  local lines = vim.split(content, "\n", { plain = true })
  local eol = lines[#lines] == ""
  if eol and #lines > 1 then
    table.remove(lines)
  end
  return lines, eol
end

local function through_buffer(buf, content)
  local lines, eol = lines_of(content)
  vim.api.nvim_buf_call(buf, function()
    -- its own undo step: `u` brings back the text the apply replaced
    vim.o.undolevels = vim.o.undolevels
  end)
  local modifiable = vim.bo[buf].modifiable
  vim.bo[buf].modifiable = true
  local set, serr = pcall(vim.api.nvim_buf_set_lines, buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = modifiable
  if not set then
    return false, tostring(serr)
  end
  vim.bo[buf].eol = eol
  vim.bo[buf].fixeol = eol
  -- noautocmd: format-on-save hooks must not change what the daemon recorded as applied
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt noautocmd write!")
  end)
  if not ok then
    return false, tostring(err):gsub("^Vim[^:]*:", "")
  end
  return true
end

local function on_disk(abs, content)
  local target = vim.fn.resolve(abs)
  local stat = uv.fs_stat(target)
  local dir = vim.fn.fnamemodify(target, ":h")
  if vim.fn.isdirectory(dir) == 0 and vim.fn.mkdir(dir, "p") == 0 then
    return false, "cannot create " .. dir
  end
  local tmp = string.format("%s/.%s.bb7-%d-%d", dir, vim.fn.fnamemodify(target, ":t"), uv.os_getpid(), uv.hrtime())
  if vim.fn.writefile(vim.split(content, "\n", { plain = true }), tmp, "bs") ~= 0 then
    uv.fs_unlink(tmp)
    return false, "cannot write " .. tmp
  end
  if stat then
    local ok, err = uv.fs_chmod(tmp, bit.band(stat.mode, 4095))
    if not ok then
      uv.fs_unlink(tmp)
      return false, err
    end
  end
  local ok, err = uv.fs_rename(tmp, target)
  if not ok then
    uv.fs_unlink(tmp)
    return false, err
  end
  return true
end

--- Writes `content` to `abs`. Returns true, or false and the reason. Callers ask about unsaved
--- changes first (see M.unsaved): this replaces the buffer's text.
function M.write(abs, content)
  local buf = M.buffer(abs)
  if buf then
    return through_buffer(buf, content)
  end
  return on_disk(abs, content)
end

return M
