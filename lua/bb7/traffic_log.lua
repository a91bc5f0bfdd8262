-- The raw daemon traffic, one line per message, appended to a file when `opts.debug` is set.
local M = {}

function M.default_path()
  return vim.fn.stdpath("log") .. "/bb7-traffic.log"
end

--- Opens the log for appending; returns a writer `function(direction, line)` or nil.
function M.open(path)
  path = path or M.default_path()
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local file = io.open(path, "a")
  if not file then
    return nil
  end
  return function(direction, line)
    file:write(os.date("!%Y-%m-%dT%H:%M:%SZ"), " ", direction, " ", line, "\n")
    file:flush()
  end, function()
    file:close()
  end
end

return M
