-- Small JSON files the plugin owns (pinned chats, favorite models): read leniently, written
-- atomically (temp file in the same directory, fsync, rename).
local M = {}

-- The bytes of `path`, or nil and why. A project's `.bb7/pinned_chats.json` comes with the
-- repository: a link to `/dev/zero` or a FIFO must not be read (it would never end).
local function slurp(path)
  return require("bb7.safepath").read(path, { follow = true })
end

--- The decoded file, or `default` when it is missing or unreadable.
function M.read(path, default)
  local text = slurp(path)
  if not text then
    return default
  end
  local ok, value = pcall(vim.json.decode, text)
  if not ok or value == nil or value == vim.NIL then
    return default
  end
  return value
end

--- The decoded JSON object of a file that other programs share: `{}` when it is missing or
--- blank, nil and a message when it holds something else (so that it is never replaced).
function M.read_object(path)
  local text, why = slurp(path)
  if text == nil and why ~= "missing" then
    return nil, path .. " cannot be read (" .. why .. "); fix or remove it"
  end
  if not text or not text:find("%S") then
    return {}
  end
  local ok, value = pcall(vim.json.decode, text)
  if not ok or type(value) ~= "table" or (next(value) ~= nil and vim.islist(value)) then
    return nil, path .. " is not a JSON object; fix or remove it"
  end
  return value
end

--- Writes `value` as JSON atomically, keeping the mode of the file it replaces. Returns true,
--- or false and a message.
function M.write(path, value)
  local uv = vim.uv or vim.loop
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local tmp = string.format("%s.tmp.%d.%d", path, uv.os_getpid(), uv.hrtime())
  local existing = uv.fs_stat(path)
  local mode = existing and existing.mode % 512 or 420
  local fd, err = uv.fs_open(tmp, "w", mode)
  if not fd then
    return false, err
  end
  -- The umask applied to `mode` on creation; the file takes the old one exactly.
  uv.fs_fchmod(fd, mode)
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
