-- Against the real `bb7` binary (no model calls): runs only when BB7_BIN names it, e.g.
-- `BB7_BIN=target/debug/bb7 scripts/test-lua tests/lua/daemon_spec.lua`. HOME and XDG_* are
-- the runner's temporary ones, so the daemon's global files stay inside the test.
local t = require("helpers.assert")
local env = require("helpers.env")

local bin = vim.env.BB7_BIN
if not bin or bin == "" then
  io.stdout:write("skip daemon_spec.lua (set BB7_BIN to the bb7 binary to run it)\n")
  return
end
bin = vim.fn.fnamemodify(bin, ":p")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- A fresh project and plugin using the real daemon.
local function real()
  env.reset({ setup = { cmd = bin } })
  require("bb7.session").transport = nil
end

describe("with the real daemon", function()
  before_each(real)

  it("goes from not initialized to a chat with context", function()
    env.cmd("BB7")
    t.eq({}, env.messages())
    t.truthy(require("bb7.state").data.global_only, "no .bb7/ here: global chats only")
    vim.cmd("tabfirst")
    env.cmd("BB7Init")
    t.eq({ "INFO BB-7: Initialized in " .. env.dir }, env.messages())
    env.notes = {}
    env.cmd("BB7Init")
    t.eq({ "INFO BB-7: Already initialized" }, env.messages())

    env.notes = {}
    env.cmd("BB7")
    t.truthy(require("bb7.ui").is_open())
    env.write("math.cs", { "int Add(int a, int b) { return a + b; }" })
    env.write("utils.cs", { "line 1", "line 2", "line 3", "line 4" })
    vim.cmd("edit math.cs")
    env.cmd("BB7Add")
    t.eq({ "WARN BB-7: No active chat" }, env.messages())

    vim.ui.input = function(_, cb)
      cb("physics")
    end
    require("bb7.ui").handlers.chats.new()
    env.settle()
    t.eq("▶  physics", lines(require("bb7.ui.chats").buf())[1])

    env.notes = {}
    vim.cmd("buffer " .. vim.fn.bufnr(env.dir .. "/math.cs"))
    env.cmd("BB7Add")
    env.cmd("BB7Add")
    env.cmd("BB7AddReadonly utils.cs")
    env.cmd("BB7Add utils.cs:2:3")
    t.eq({
      "INFO BB-7: Added math.cs",
      "WARN BB-7: File already in context",
      "INFO BB-7: Added utils.cs",
      "INFO BB-7: Added utils.cs:2-3",
    }, env.messages())
    env.settle()
    local files = lines(require("bb7.ui.files").buf())
    t.matches("^    math%.cs", files[1])
    t.matches("^R   utils%.cs", files[2])
    t.matches("^S   utils%.cs:2%-3", files[3])

    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "int Add(ref int a) { }" })
    require("bb7.actions").recompute_statuses()
    t.matches("^~   math%.cs", lines(require("bb7.ui.files").buf())[1])

    env.notes = {}
    env.cmd("BB7Remove utils.cs:2:3")
    env.cmd("BB7Remove utils.cs:2:3")
    t.eq({ "INFO BB-7: Removed utils.cs:2-3", "WARN BB-7: File not in context" }, env.messages())

    local chat = require("bb7.state").data.chat
    t.eq("physics", chat.name)
    t.truthy(#chat.messages >= 3, "context events are in the history")
    local preview = table.concat(lines(require("bb7.ui.preview").buf()), "\n")
    t.matches("● added math%.cs", preview)
    t.matches("● added utils%.cs %(read%-only%)", preview)
  end)

  it("saves and restores drafts, searches and pins chats", function()
    env.cmd("BB7Init")
    require("bb7.actions").new_chat("alpha")
    env.settle()
    require("bb7.actions").save_draft("draft for alpha")
    env.settle()
    require("bb7.actions").new_chat("beta")
    env.settle()
    env.cmd("BB7")
    t.eq("", require("bb7.ui.input").text())
    local alpha
    for _, c in ipairs(require("bb7.state").data.chats) do
      if c.name == "alpha" then
        alpha = c.id
      end
    end
    require("bb7.actions").select_chat(alpha)
    env.settle()
    t.eq("draft for alpha", require("bb7.ui.input").text())
    require("bb7.actions").toggle_pin(alpha)
    env.settle()
    t.eq({ "▶★ alpha", "   beta" }, lines(require("bb7.ui.chats").buf()))
    local offered
    vim.ui.select = function(items, opts, cb)
      offered = vim.tbl_map(opts.format_item, items)
      cb(nil)
    end
    env.cmd("BB7Search BETA")
    t.eq({ "beta" }, offered)
  end)

  it("reports the version in :checkhealth", function()
    vim.cmd("silent checkhealth bb7")
    local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    t.matches("OK daemon " .. vim.pesc(bin) .. ": bb7 %d+%.%d+%.%d+", report)
  end)

  it("offers a restart when the daemon is killed", function()
    env.cmd("BB7Init")
    env.cmd("BB7")
    local offered
    vim.ui.select = function(items, _, cb)
      offered = items
      cb(items[1])
    end
    local client = require("bb7.session").client
    vim.uv.kill(client.handle.pid, "sigkill")
    t.wait(function()
      return offered ~= nil
    end, "restart offer")
    local exited = vim.tbl_filter(function(m)
      return m:find("^ERROR BB%-7: Daemon exited %(code ") ~= nil
    end, env.messages())
    t.eq(1, #exited, vim.inspect(env.messages()))
    t.wait(function()
      return require("bb7.state").data.ready
    end, "restarted and initialized")
  end)
end)
