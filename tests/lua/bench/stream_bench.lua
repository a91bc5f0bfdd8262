-- Times rendering a long streamed reply in headless Neovim (not part of the test suite; run
-- with `scripts/test-lua --bench`). Two numbers: the whole path (fake daemon -> JSON lines ->
-- client -> state -> preview) and the appender alone. Prints the Lua heap before and after.
local env = require("helpers.env")

local CHUNKS = tonumber(vim.env.BB7_BENCH_CHUNKS) or 10000

local function script()
  local msgs = {}
  for i = 1, CHUNKS do
    local text = "word" .. i .. " "
    if i % 8 == 0 then
      text = text .. "\n"
    end
    table.insert(msgs, { type = i % 500 < 20 and "thinking" or "chunk", content = text })
  end
  table.insert(msgs, { type = "done", output_files = {}, usage = { prompt_tokens = 1, completion_tokens = CHUNKS } })
  return msgs
end

local fake = env.reset({ initialized = true })
env.cmd("BB7Init")
fake:new_chat("bench")
fake.active = "0000000001"
require("bb7.state").data.ready = false
env.cmd("BB7")
fake.send_script = script()

local finished
require("bb7.state").on("stream_end", function()
  finished = vim.uv.hrtime()
end)
collectgarbage("collect")
local heap_before = collectgarbage("count")
local start = vim.uv.hrtime()
require("bb7.actions").send("go")
vim.wait(120000, function()
  return finished ~= nil
end, 1)
local whole = (finished - start) / 1e6
local lines = vim.api.nvim_buf_line_count(require("bb7.ui.preview").buf())
collectgarbage("collect")
local heap_after = collectgarbage("count")

-- The appender alone, into a displayed buffer.
local Stream = require("bb7.ui.stream")
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_win_set_buf(0, buf)
local s = Stream.new(buf, true)
local t0 = vim.uv.hrtime()
for _, msg in ipairs(script()) do
  if msg.type ~= "done" then
    s:write(msg.type == "thinking" and "thinking" or "text", msg.content)
  end
end
s:finish()
local appender = (vim.uv.hrtime() - t0) / 1e6

-- A real child process (`cat` of the reply's JSON lines) through vim.system, the line buffer,
-- the client's routing and the preview appender.
local file = vim.fn.tempname()
local out = {}
for _, msg in ipairs(script()) do
  msg.request_id = "1"
  table.insert(out, vim.json.encode(msg))
end
vim.fn.writefile(out, file)
local preview = require("bb7.ui.preview")
vim.api.nvim_win_set_buf(0, preview.buf())
preview.show_empty("")
preview.stream_start("go", "m")
local ended
local client = require("bb7.client").new({ cmd = { "cat", file } })
local t1 = vim.uv.hrtime()
client:start()
client:request("send", {}, function(msg)
  if msg.type == "done" then
    ended = vim.uv.hrtime()
  else
    preview.stream_message(msg)
  end
end, true)
vim.wait(120000, function()
  return ended ~= nil
end, 1)
local piped = (ended - t1) / 1e6

io.stdout:write(string.format(
  "%d chunks through a child process (cat -> vim.system -> client -> preview): %.0f ms (%.1f us/chunk)\n",
  CHUNKS, piped, piped * 1000 / CHUNKS))
io.stdout:write(string.format(
  "%d chunks: whole path %.0f ms (%.1f us/chunk, %d preview lines); appender alone %.0f ms (%.1f us/chunk); Lua heap %.0f KiB -> %.0f KiB\n",
  CHUNKS, whole, whole * 1000 / CHUNKS, lines, appender, appender * 1000 / CHUNKS, heap_before, heap_after))
vim.cmd("qall!")
