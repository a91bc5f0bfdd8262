-- The info pane: spend from ~/.bb7/usage.csv (today across projects, this session for this
-- project), balance, project, instruction files and the context estimate while typing.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

describe("usage.csv", function()
  before_each(function()
    env.reset()
  end)

  it("sums today's cost across projects and this session's for this project", function()
    local usage = require("bb7.usage")
    local csv = table.concat({
      "2026-11-22T23:59:59,/p,m,10,5,0,1.5",
      "2026-11-23T08:00:00,/p,m,10,5,0,0.25",
      "2026-11-23T09:30:00,/other,m,10,5,0,0.125",
      "2026-11-23T10:00:00,/p,anthropic/claude,1200,40,0,0.002",
      "2026-11-23T10:00:01,/with,comma,m,1,1,0,0.5",
      "garbage line",
      "",
    }, "\n")
    local spend = usage.spend(csv, "2026-11-23", "2026-11-23T09:00:00", "/p")
    t.eq(0.25 + 0.125 + 0.002 + 0.5, spend.today)
    t.eq(0.002, spend.session)
    t.eq("/with,comma", usage.parse_line("2026-11-23T10:00:01,/with,comma,m,1,1,0,0.5").root)
    t.eq(nil, usage.parse_line("2026-11-23,/p,m,1,1,0,0.5"))
    -- the daemon quotes a field holding a comma or a quote (RFC 4180)
    local quoted = usage.parse_line('2026-11-23T10:00:02,"/with,comma","m,""x""",1,1,0,0.25')
    t.eq("/with,comma", quoted.root)
    t.eq(0.25, quoted.cost)
    t.eq(nil, usage.parse_line('2026-11-23T10:00:02,"/open,m,1,1,0,0.25'))
  end)

  it("reads only the end of a long file, back to the oldest row that counts", function()
    local usage = require("bb7.usage")
    local path = vim.fn.tempname()
    local rows = {}
    for i = 1, 3000 do
      rows[i] = string.format("2026-01-01T00:00:%02d,/p,m,1,1,0,1", i % 60)
    end
    vim.list_extend(rows, { "2026-11-23T08:00:00,/p,m,1,1,0,0.25", "2026-11-23T09:00:00,/q,m,1,1,0,0.5" })
    vim.fn.writefile(rows, path)
    usage.BLOCK = 4096
    local size = vim.uv.fs_stat(path).size
    local tail = usage.tail(path, size, "2026-11-23")
    t.truthy(#tail < 3 * 4096, "stopped after the block with older rows (" .. #tail .. " bytes)")
    t.eq({ today = 0.75, session = 0.25 }, usage.spend(tail, "2026-11-23", "2026-11-23T07:00:00", "/p"))
    t.eq(size, #usage.tail(path, size, "2025-01-01"), "everything when every row counts")
    usage.BLOCK = 65536
  end)

  it("the info pane shows balance, spend, project, instructions and the estimate", function()
    local fake = env.reset({ initialized = true })
    local today = os.date("%Y-%m-%d")
    vim.fn.mkdir(vim.env.HOME .. "/.bb7", "p")
    local csv = vim.env.HOME .. "/.bb7/usage.csv"
    vim.fn.writefile({
      today .. "T00:00:01,/elsewhere,m,1,1,0,0.5",
      os.date("%Y-%m-%dT%H:%M:%S", os.time() + 5) .. "," .. env.dir .. ",m,1,1,0,0.0125",
    }, csv)
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    fake.customization = { global_instructions = true, project_instructions = false, project_instructions_error = "line 3: unknown directive" }
    env.cmd("BB7")
    local shown = lines(require("bb7.ui.info").buf())
    t.eq({
      "Balance $6.55 left",
      "Today $0.51 · session $0.0125",
      env.dir,
      "Instructions: project error: line 3: unknown directive",
      "Context ~4.2k / 200k (2%)",
    }, shown)
    vim.fn.delete(csv)
  end)
end)

describe("context estimate", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
  end)

  it("warns near and over the limit", function()
    local info = require("bb7.ui.info")
    t.eq({ "Context ~80k / 100k (80%)", "⚠ near the model's context limit", "DiagnosticWarn" }, { info.context_text(80000, 100000) })
    t.eq({ "Context ~120k / 100k (120%)", "⚠ over the model's context limit", "DiagnosticError" }, { info.context_text(120000, 100000) })
    t.eq({ "Context ~10k / 100k (10%)" }, { info.context_text(10000, 100000) })
    local st = require("bb7.state").data
    st.estimate = { total = 190000 }
    info.render()
    t.eq({ "Context ~190k / 200k (95%)", "⚠ near the model's context limit" }, vim.list_slice(lines(info.buf()), 5, 6))
  end)

  it("is re-estimated with the draft once typing pauses (debounced)", function()
    local before = #fake:sent("estimate_tokens")
    local input = require("bb7.ui.input")
    local buf = input.buf()
    for i = 1, 5 do
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { string.rep("word ", i * 100) })
      vim.api.nvim_exec_autocmds("TextChanged", { buffer = buf })
    end
    t.eq(before, #fake:sent("estimate_tokens"), "nothing while typing")
    t.wait(function()
      return #fake:sent("estimate_tokens") == before + 1
    end, "one estimate after the pause", 2000)
    env.settle()
    local req = fake:sent("estimate_tokens")[before + 1]
    t.eq(string.rep("word ", 500), req.input_text)
    t.eq("Context ~4.8k / 200k (2%)", lines(require("bb7.ui.info").buf())[5])
  end)

  it("global-only mode says so in the project line", function()
    env.reset()
    env.cmd("BB7")
    t.eq("Global chats only (no .bb7/ here)", lines(require("bb7.ui.info").buf())[3])
  end)
end)
