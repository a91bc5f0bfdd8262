-- The advisory lock the daemon holds while it changes `~/.bb7/state.json` (`flock` on
-- `state.json.lock`). The plugin takes the same lock around its own read-change-write of that
-- file, so a favorite toggled here and a model recorded by the daemon never overwrite each
-- other. `flock` is reached through LuaJIT's FFI; a Neovim built without LuaJIT has no way to
-- take it, and changes the file without the lock (as the first bb7's plugin always did).
local M = {}

local uv = vim.uv or vim.loop

-- How long to wait for the lock before giving up, in milliseconds.
M.timeout_ms = 2000

local LOCK_EX, LOCK_NB, LOCK_UN = 2, 4, 8

local flock = (function()
  local ok, ffi = pcall(require, "ffi")
  if not ok then
    return nil
  end
  -- Another plugin may have declared it already.
  pcall(ffi.cdef, "int flock(int fd, int operation);")
  local found, fn = pcall(function()
    return ffi.C.flock
  end)
  if not found then
    return nil
  end
  return function(fd, operation)
    return fn(fd, operation) == 0
  end
end)()

--- Whether the lock can be taken on this Neovim.
function M.available()
  return flock ~= nil
end

--- Runs `fn()` holding the lock on `lock_path` and returns what it returns. When the lock
--- cannot be had within `M.timeout_ms`, `fn` is not run and this returns nil and a message.
function M.with_lock(lock_path, fn)
  if not flock then
    return fn()
  end
  vim.fn.mkdir(vim.fn.fnamemodify(lock_path, ":h"), "p")
  local fd, err = uv.fs_open(lock_path, "a", 384)
  if not fd then
    return nil, "cannot open " .. lock_path .. ": " .. tostring(err)
  end
  local deadline = uv.hrtime() + M.timeout_ms * 1e6
  while not flock(fd, LOCK_EX + LOCK_NB) do
    if uv.hrtime() >= deadline then
      uv.fs_close(fd)
      return nil, lock_path .. " is held by another process; try again"
    end
    uv.sleep(10)
  end
  local results = { pcall(fn) }
  flock(fd, LOCK_UN)
  uv.fs_close(fd)
  if not results[1] then
    error(results[2], 0)
  end
  return unpack(results, 2, table.maxn(results))
end

return M
