-- Times drawing a long stored chat into the preview (markdown spans, treesitter-highlighted
-- code blocks, thinking folds, usage lines): render.chat alone and the whole preview.show.
-- Not part of the suite; run with
--   nvim --headless -u NONE -i NONE -n -l tests/lua/bench/render_bench.lua "$PWD"
-- BB7_BENCH_PAIRS sets the number of user/assistant pairs (default 200).
local root = assert(_G.arg[1], "usage: render_bench.lua <plugin-root>")
vim.opt.rtp:prepend(root)
package.path = root .. "/tests/lua/?.lua;" .. package.path
vim.o.swapfile = false

local PAIRS = tonumber(vim.env.BB7_BENCH_PAIRS) or 200
local reply = table.concat({
  "## Step",
  "Use **bold**, *italic* and `inline code` here, twice: **again** and `more`.",
  "- first point with `code`",
  "- second point",
  "```lua",
  "local function sum(t)",
  "  local s = 0",
  "  for _, v in ipairs(t) do s = s + v end",
  "  return s",
  "end",
  "```",
  "Done.",
}, "\n")
local messages = {}
for i = 1, PAIRS do
  table.insert(messages, { role = "user", parts = { { type = "text", content = "question " .. i } } })
  table.insert(messages, {
    role = "assistant",
    parts = { { type = "thinking", content = "thinking\nabout it" }, { type = "text", content = reply } },
    usage = { prompt_tokens = 1200, completion_tokens = 300, cost = 0.004, duration = 2.5 },
  })
end
local chat = { messages = messages }

require("bb7").setup({})
local render = require("bb7.render")
local preview = require("bb7.ui.preview")
vim.api.nvim_win_set_buf(0, preview.buf())
preview.render_chat(chat) -- warm up (parsers and queries load once)

local function time(fn, n)
  local t0 = vim.uv.hrtime()
  for _ = 1, n do
    fn()
  end
  return (vim.uv.hrtime() - t0) / 1e6 / n
end
local pure = time(function()
  render.chat(chat)
end, 5)
local shown = time(function()
  preview.render_chat(chat)
end, 5)
local lines = vim.api.nvim_buf_line_count(preview.buf())
local marks = #vim.api.nvim_buf_get_extmarks(preview.buf(), preview.ns, 0, -1, {})
io.stdout:write(string.format(
  "%d pairs (%d lines, %d extmarks): render.chat %.1f ms; preview.render_chat (buffer, extmarks, treesitter, folds) %.1f ms\n",
  PAIRS, lines, marks, pure, shown))
vim.cmd("qall!")
