-- Small JSON files the plugin owns (pinned chats, favorite models): read leniently, written
-- atomically (temp file in the same directory, fsync, rename).
local M = {}

--- The decoded file, or `default` when it is missing or unreadable.
function M.read(path, default)
  local file = io.open(path, "rb")
  if not file then
    return default
  end
  local text = file:read("*a")
  file:close()
  local ok, value = pcall(vim.json.decode, text)
  if not ok or value == nil or value == vim.NIL then
    return default
  end
  return value
end

--- Writes `value` as JSON atomically. Returns true, or false and a message.
function M.write(path, value)
  local uv = vim.uv or vim.loop
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local tmp = string.format("%s.tmp.%d.%d", path, uv.os_getpid(), uv.hrtime())
  local fd, err = uv.fs_open(tmp, "w", 420)
  if not fd then
    return false, err
  end
  local ok = uv.fs_write(fd, vim.json.encode(value))
  uv.fs_fsync(fd)
  uv.fs_close(fd)
  if not ok then
    uv.fs_unlink(tmp)
    return false, "cannot write " .. tmp
  end
  local renamed, rerr = uv.fs_rename(tmp, path)
  if not renamed then
    uv.fs_unlink(tmp)
    return false, rerr
  end
  return true
end

return M
