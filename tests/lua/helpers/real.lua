-- The real `bb7` daemon and `fake-llm` (crates/testkit) for specs that must see what the daemon
-- really does (it refuses state changes while a send streams, for one). `available()` is false
-- unless BB7_BIN and FAKE_LLM name both binaries.
local env = require("helpers.env")
local t = require("helpers.assert")

local M = {}

M.bin, M.fake_llm = vim.env.BB7_BIN, vim.env.FAKE_LLM

function M.available()
  return M.bin ~= nil and M.bin ~= "" and M.fake_llm ~= nil and M.fake_llm ~= ""
end

local server

--- Stops the fake-llm of the last start().
function M.stop()
  if server then
    server:kill(15)
    server = nil
  end
  pcall(function()
    require("bb7.session").stop()
  end)
end

--- A fresh initialized project using the real daemon, with fake-llm answering `turns` (one
--- entry per chat request, fake-llm's script format). `setup` is merged into the options.
function M.start(turns, setup)
  M.stop()
  local opts = vim.tbl_extend("force", { cmd = vim.fn.fnamemodify(M.bin, ":p") }, setup or {})
  env.reset({ setup = opts })
  require("bb7.session").transport = nil
  local script = env.dir .. "/../fake-llm-" .. vim.fn.fnamemodify(env.dir, ":t") .. ".json"
  vim.fn.writefile({ vim.json.encode({ turns = turns }) }, script)
  local url
  server = vim.system({ vim.fn.fnamemodify(M.fake_llm, ":p"), script }, {
    stdout = function(_, data)
      if data and not url then
        url = data:match("(http://127%.0%.0%.1:%d+)")
      end
    end,
  })
  t.wait(function()
    return url ~= nil
  end, "fake-llm base URL", 10000)
  local dir = (vim.env.XDG_CONFIG_HOME or (vim.env.HOME .. "/.config")) .. "/bb7"
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile({ vim.json.encode({
    api_key = "test-key",
    base_url = url .. "/api/v1",
    default_model = "fake/model",
  }) }, dir .. "/config.json")
  env.cmd("BB7Init")
  env.notes = {}
end

--- Waits for the end of the running reply and lets the reloads after it arrive.
function M.wait_stream_end()
  local ended
  local off = require("bb7.state").on("stream_end", function(msg)
    ended = msg
  end)
  if not vim.wait(20000, function()
    return ended ~= nil
  end, 5) then
    error("no end of the reply; notes: " .. vim.inspect(env.messages()), 2)
  end
  off()
  env.settle()
  return ended
end

--- Runs `fn` and always stops the daemon and fake-llm afterwards.
function M.run(fn)
  local ok, err = xpcall(fn, debug.traceback)
  M.stop()
  if not ok then
    error(err, 0)
  end
end

return M
