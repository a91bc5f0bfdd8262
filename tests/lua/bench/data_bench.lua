-- Times the data side of the plugin (not part of the test suite; `scripts/test-lua --bench`):
-- summing a large ~/.bb7/usage.csv (all of it, and the info pane's way: read from the end back
-- to today's rows), writing an
-- applied 1 MiB file on disk and through a loaded buffer, and listing a directory for :BB7Add.
local ROWS = tonumber(vim.env.BB7_BENCH_ROWS) or 100000
local root = assert(_G.arg[1])

local function ms(fn, runs)
  runs = runs or 5
  local best = math.huge
  for _ = 1, runs do
    local start = vim.uv.hrtime()
    fn()
    best = math.min(best, (vim.uv.hrtime() - start) / 1e6)
  end
  return best
end

local rows = {}
for i = 1, ROWS do
  rows[i] = string.format("2026-%02d-%02dT%02d:%02d:%02d,/home/u/project%d,anthropic/claude-sonnet-4,%d,%d,0,%.6f",
    i % 12 + 1, i % 28 + 1, i % 24, i % 60, i % 60, i % 7, 1000 + i, 100 + i % 500, (i % 100) / 10000)
end
local csv = table.concat(rows, "\n")
local usage = require("bb7.usage")
io.stdout:write(string.format("usage.csv, %d rows (%.1f MiB): %.1f ms (best of 5)\n", ROWS, #csv / 1048576, ms(function()
  usage.spend(csv, "2026-06-15", "2026-06-15T10:00:00", "/home/u/project3")
end)))

local csv_path = vim.fn.tempname()
local f = assert(io.open(csv_path, "wb"))
f:write(csv, "\n", os.date("%Y-%m-%dT%H:%M:%S"), ",/p,m,1,1,0,0.5\n")
f:close()
vim.env.HOME = vim.fn.fnamemodify(csv_path, ":h")
io.stdout:write(string.format("usage.csv on disk, %d rows, today's read from the end: %.2f ms (best of 5)\n", ROWS, ms(function()
  local st = vim.uv.fs_stat(csv_path)
  usage.spend(usage.tail(csv_path, st.size, os.date("%Y-%m-%d")), os.date("%Y-%m-%d"), nil, nil)
end)))
os.remove(csv_path)

local writeback = require("bb7.writeback")
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, "p")
local line = string.rep("x", 99) .. "\n"
local content = string.rep(line, 10486)
local path = dir .. "/big.txt"
vim.fn.writefile({ "old" }, path)
io.stdout:write(string.format("apply write on disk, 1 MiB: %.1f ms (best of 5)\n", ms(function()
  assert(writeback.write(path, content))
end)))
vim.cmd("edit " .. vim.fn.fnameescape(path))
io.stdout:write(string.format("apply write through a loaded buffer, 1 MiB: %.1f ms (best of 5)\n", ms(function()
  assert(writeback.write(path, content))
end)))
vim.cmd("bwipeout!")

local targets = require("bb7.add_targets")
local listing
local took = ms(function()
  listing = targets.directory(root .. "/crates")
end, 3)
io.stdout:write(string.format(":BB7Add crates/ listing: %d files, %d left out: %.1f ms (best of 3)\n", #listing.files, listing.skipped, took))
vim.fn.delete(dir, "rf")
