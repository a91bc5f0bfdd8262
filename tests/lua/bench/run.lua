-- Entry for `scripts/test-lua --bench`: sets the runtime path like the runner, then runs the
-- data benchmark (usage.csv, applied-file writes, directory listing) and the stream benchmark.
local root = assert(_G.arg[1], "usage: run.lua <plugin-root>")
vim.opt.rtp:prepend(root)
package.path = root .. "/tests/lua/?.lua;" .. package.path
vim.o.swapfile = false
vim.cmd("runtime plugin/bb7.lua")
dofile(root .. "/tests/lua/bench/data_bench.lua")
dofile(root .. "/tests/lua/bench/stream_bench.lua")
