-- A small test runner for headless Neovim: `nvim --headless -u NONE -i NONE -n -l
-- tests/lua/runner.lua <plugin-root> <spec-file>`. Specs use describe/it/before_each and the
-- assertions in helpers/assert.lua. Prints one line per test and a final `RESULT <passed>
-- <failed>` line; exits non-zero when anything failed.
local root = assert(_G.arg[1], "usage: runner.lua <plugin-root> <spec-file>")
local file = assert(_G.arg[2], "usage: runner.lua <plugin-root> <spec-file>")

vim.opt.rtp:prepend(root)
vim.opt.rtp:prepend(root .. "/tests/lua")
package.path = root .. "/tests/lua/?.lua;" .. package.path
vim.o.swapfile = false
vim.cmd("runtime plugin/bb7.lua")

local stack = {}
local current = { name = "", tests = {}, before = {}, children = {} }
local top = current

function _G.describe(name, fn)
  local suite = { name = name, tests = {}, before = {}, children = {}, parent = current }
  table.insert(current.children, suite)
  table.insert(stack, current)
  current = suite
  fn()
  current = table.remove(stack)
end

function _G.it(name, fn)
  table.insert(current.children, { test = true, name = name, fn = fn })
end

function _G.before_each(fn)
  table.insert(current.before, fn)
end

local chunk, err = loadfile(file)
if not chunk then
  io.stdout:write("FAIL load " .. file .. ": " .. tostring(err) .. "\nRESULT 0 1\n")
  vim.cmd("cquit 1")
end
chunk()

local passed, failed = 0, 0

local function run_suite(suite, names, befores)
  local all_before = vim.list_extend(vim.list_slice(befores, 1), suite.before)
  local path = vim.list_slice(names, 1)
  if suite.name ~= "" then
    table.insert(path, suite.name)
  end
  for _, child in ipairs(suite.children) do
    if child.test then
      local full = table.concat(vim.list_extend(vim.list_slice(path, 1), { child.name }), " > ")
      local ok, e = xpcall(function()
        for _, before in ipairs(all_before) do
          before()
        end
        child.fn()
      end, debug.traceback)
      if ok then
        passed = passed + 1
        io.stdout:write("ok   " .. full .. "\n")
      else
        failed = failed + 1
        io.stdout:write("FAIL " .. full .. "\n     " .. tostring(e):gsub("\n", "\n     ") .. "\n")
      end
    else
      run_suite(child, path, all_before)
    end
  end
end

run_suite(top, {}, {})
io.stdout:write(string.format("RESULT %d %d\n", passed, failed))
io.stdout:flush()
if failed > 0 then
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
