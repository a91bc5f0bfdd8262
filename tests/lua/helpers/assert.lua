-- Assertions for the runner: each raises with both values shown.
local M = {}

local function show(v)
  return vim.inspect(v)
end

function M.eq(expected, actual, msg)
  if not vim.deep_equal(expected, actual) then
    error(string.format("%sexpected %s\n     got      %s", msg and (msg .. ": ") or "", show(expected), show(actual)), 2)
  end
end

function M.neq(unexpected, actual, msg)
  if vim.deep_equal(unexpected, actual) then
    error(string.format("%sdid not expect %s", msg and (msg .. ": ") or "", show(actual)), 2)
  end
end

function M.truthy(value, msg)
  if not value then
    error((msg or "expected a truthy value") .. ", got " .. show(value), 2)
  end
end

function M.falsy(value, msg)
  if value then
    error((msg or "expected a falsy value") .. ", got " .. show(value), 2)
  end
end

function M.matches(pattern, text, msg)
  if type(text) ~= "string" or not text:find(pattern) then
    error(string.format("%s%s does not match %s", msg and (msg .. ": ") or "", show(text), show(pattern)), 2)
  end
end

--- Waits (running the event loop) until `fn()` is truthy; fails after `ms`.
function M.wait(fn, msg, ms)
  local ok = vim.wait(ms or 2000, fn, 5)
  if not ok then
    error("timed out waiting for " .. (msg or "condition"), 2)
  end
end

return M
