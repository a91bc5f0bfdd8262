-- The real transport: the daemon as a child process via `vim.system` with stdin. Callbacks are
-- moved to the main loop, so the client never runs in a fast (luv) context.
--
-- A transport is `function(cmd, handlers) -> handle`, where handlers are
-- `on_stdout(data)`, `on_stderr(data)`, `on_exit(code, signal)` and the handle has
-- `write(data)`, `stop()` and `pid`. Tests pass their own function with the same shape.
local M = {}

function M.system(cmd, handlers)
  local ok, obj = pcall(vim.system, cmd, {
    stdin = true,
    text = false,
    stdout = function(_, data)
      if data then
        vim.schedule(function()
          handlers.on_stdout(data)
        end)
      end
    end,
    stderr = function(_, data)
      if data and handlers.on_stderr then
        vim.schedule(function()
          handlers.on_stderr(data)
        end)
      end
    end,
  }, function(result)
    vim.schedule(function()
      handlers.on_exit(result.code, result.signal)
    end)
  end)
  if not ok then
    return nil, tostring(obj)
  end
  return {
    pid = obj.pid,
    write = function(data)
      pcall(obj.write, obj, data)
    end,
    stop = function()
      pcall(obj.write, obj, nil)
      pcall(obj.kill, obj, 15)
    end,
  }
end

return M
