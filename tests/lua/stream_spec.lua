local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- line_hl_group of each extmark of the stream namespace, by row.
local function line_groups(buf, ns)
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    out[mark[2]] = mark[4].line_hl_group
  end
  return out
end

describe("stream appender", function()
  local Stream, buf
  before_each(function()
    env.reset()
    Stream = require("bb7.ui.stream")
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "▌Assistant", "" })
    vim.bo[buf].modifiable = false
  end)

  it("appends pieces to the last line and opens new lines on newlines", function()
    local s = Stream.new(buf, true)
    s:write("text", "Hel")
    s:write("text", "lo\nwor")
    s:write("text", "ld\n\nbye")
    t.eq({ "▌Assistant", "Hello", "world", "", "bye" }, lines(buf))
    t.falsy(vim.bo[buf].modifiable, "stays read-only between writes")
  end)

  it("only touches the end: earlier lines keep their identity", function()
    local s = Stream.new(buf, true)
    local changes = {}
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function(_, _, _, first, last_old, last_new)
        table.insert(changes, { first, last_old, last_new })
      end,
    })
    s:write("text", "a")
    s:write("text", "b\nc")
    t.eq({ { 1, 2, 2 }, { 1, 2, 3 } }, changes)
  end)

  it("starts a new line when the kind changes and highlights reasoning per line", function()
    local s = Stream.new(buf, true)
    s:write("thinking", "Let me")
    s:write("thinking", " think\nmore")
    s:write("text", "Answer")
    t.eq({ "▌Assistant", "▸ Thinking…", "Let me think", "more", "Answer" }, lines(buf))
    local groups = line_groups(buf, Stream.ns)
    t.eq("BB7ThinkingHeader", groups[1])
    t.eq("BB7Thinking", groups[2])
    t.eq("BB7Thinking", groups[3])
    t.eq(nil, groups[4])
  end)

  it("folds a finished reasoning block in windows showing the buffer", function()
    vim.api.nvim_win_set_buf(0, buf)
    local s = Stream.new(buf, true)
    s:write("thinking", "a\nb\nc")
    s:write("text", "done")
    -- the fold starts at the header, so the closed block shows "▸ Thinking…"
    t.eq(2, vim.fn.foldclosed(3))
    t.eq(5, vim.fn.foldclosedend(2))
    t.eq(-1, vim.fn.foldclosed(6))
  end)

  it("keeps the block open with fold = false", function()
    vim.api.nvim_win_set_buf(0, buf)
    local s = Stream.new(buf, false)
    s:write("thinking", "a\nb")
    s:finish()
    t.eq(-1, vim.fn.foldclosed(2))
    t.eq(2, vim.fn.foldlevel(2) > 0 and 2 or 0)
  end)

  it("follows the end when the cursor was on the last line", function()
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    local s = Stream.new(buf, true)
    s:write("text", "1\n2\n3")
    t.eq(4, vim.api.nvim_win_get_cursor(0)[1])
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    s:write("text", "\n4")
    t.eq(1, vim.api.nvim_win_get_cursor(0)[1], "a cursor moved up stays")
  end)
end)

describe("send into the preview", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.notes = {}
  end)

  local function preview_lines()
    return lines(require("bb7.ui.preview").buf())
  end

  local function type_and_send(text)
    local input = require("bb7.ui.input")
    input.set_text(text)
    require("bb7.ui").handlers.input.send()
  end

  it("shows the streamed text as it arrives, then the stored chat with usage", function()
    local seen = {}
    local state = require("bb7.state")
    state.on("stream", function()
      table.insert(seen, preview_lines()[#preview_lines()])
    end)
    fake.send_script = {
      { type = "thinking", content = "Pondering" },
      { type = "chunk", content = "The answer" },
      { type = "chunk", content = " is\n42" },
      { type = "done", output_files = {}, usage = { prompt_tokens = 1200, completion_tokens = 30, cost = 0.002 } },
    }
    type_and_send("What is it?")
    t.eq({}, vim.api.nvim_buf_get_lines(require("bb7.ui.input").buf(), 1, -1, false))
    t.eq("", require("bb7.ui.input").text(), "input cleared on send")
    env.settle()
    t.eq({ "Pondering", "The answer", "42" }, seen, "each message appended as it arrived")
    t.eq("1.2k in · 30 out · $0.0020", fake.chats["0000000001"].messages[2].usage and require("bb7.format").usage_line(fake.chats["0000000001"].messages[2].usage))
    t.eq({
      "▌You  (anthropic/claude-sonnet-4)",
      "What is it?",
      "",
      "▌Assistant  (anthropic/claude-sonnet-4)",
      "▸ Thinking (1 line)",
      "Pondering",
      "The answer is",
      "42",
      "1.2k in · 30 out · $0.0020",
    }, preview_lines())
    t.eq("What is it?", fake:sent("send")[1].content)
    t.eq("anthropic/claude-sonnet-4", fake:sent("send")[1].model)
    t.eq("", fake.chats["0000000001"].draft, "draft cleared")
  end)

  it("a done that trimmed pairs shows the bracket counter", function()
    fake.send_script = {
      { type = "chunk", content = "ok" },
      { type = "done", output_files = {}, usage = {}, predicted = 3, trimmed = 2, visible = 5 },
    }
    type_and_send("Trim?")
    env.settle()
    local state = require("bb7.state")
    t.eq(2, state.data.trimmed, "trimmed read from done")
    local text = require("bb7.ui.statusline").text(state.data, { included = 1, total = 1 })
    t.matches("%[1%-2%]/1", text)
  end)

  it("cancel mid-stream sends cancel for the stream and shows the abort", function()
    fake.send_script = {
      { type = "chunk", content = "Partial" },
      { hold = true },
    }
    type_and_send("Long one")
    t.wait(function()
      return vim.tbl_contains(preview_lines(), "Partial")
    end, "first chunk")
    require("bb7.ui").handlers.preview.cancel()
    env.settle()
    local cancel = fake:sent("cancel")[1]
    t.eq(fake:sent("send")[1].request_id, cancel.target_request_id)
    local shown = preview_lines()
    t.eq("Partial", shown[5])
    t.eq("▌System", shown[7])
    t.eq("Response aborted by user.", shown[8])
    t.eq(nil, require("bb7.state").data.stream)
    env.notes = {}
    require("bb7.actions").cancel()
    t.eq({ "WARN BB-7: Nothing to cancel" }, env.messages())
  end)

  it("a second send while streaming warns and sends nothing", function()
    fake.send_script = { { type = "chunk", content = "x" }, { hold = true } }
    type_and_send("one")
    require("bb7.actions").send("two")
    t.eq({ "WARN BB-7: Another request is already in progress" }, env.messages())
    t.eq(1, #fake:sent("send"))
    require("bb7.actions").cancel()
    env.settle()
  end)

  it("a diff_error shows the errors and r retries with retry_context", function()
    local errors = { "edit_file edit 0 (math.cs, base=context): old_string not found in file" }
    local calls = { { tool = "edit_file", args = { path = "math.cs" }, path = "math.cs" } }
    fake.send_script = {
      { type = "chunk", content = "Editing." },
      { type = "diff_error", errors = errors, tool_calls = calls, usage = { prompt_tokens = 10, completion_tokens = 5 } },
    }
    type_and_send("Fix math")
    env.settle()
    -- the stream's lines before the chat reload replaced them
    local pending = require("bb7.state").data.diff_error
    t.eq({ errors = errors, tool_calls = calls }, { errors = pending.errors, tool_calls = pending.tool_calls })
    fake.send_script = nil
    require("bb7.ui").handlers.preview.retry()
    env.settle()
    local retry = fake:sent("send")[2]
    t.eq(require("bb7.config").options.retry_message, retry.content)
    t.eq({ errors = errors, tool_calls = calls }, retry.retry_context)
    t.eq(nil, require("bb7.state").data.diff_error)
    env.notes = {}
    require("bb7.actions").retry()
    t.eq({ "WARN BB-7: Nothing to retry" }, env.messages())
  end)

  it("diff_error lines are shown in the stream with the retry hint", function()
    local shown
    require("bb7.state").on("stream_end", function()
      shown = preview_lines()
    end)
    fake.send_script = {
      { type = "diff_error", errors = { "edit_file edit 0 (a, base=output): all edits are no-ops" }, tool_calls = {}, usage = {} },
    }
    type_and_send("x")
    env.settle()
    t.eq({
      "File edits failed to apply:",
      "  edit_file edit 0 (a, base=output): all edits are no-ops",
      "The retry goes with the next message you send (the input holds one); <C-c> aborts it.",
      "Press r here to retry.",
    }, vim.list_slice(shown, #shown - 3))
  end)

  it("an error ends the stream with an error notification", function()
    fake.send_script = { { type = "error", message = "API key not set in config" } }
    type_and_send("x")
    env.settle()
    t.eq({ "ERROR BB-7: Failed to send: API key not set in config" }, env.messages())
    t.eq(nil, require("bb7.state").data.stream)
  end)

  it("output cut in 3-byte pieces streams the same", function()
    fake.split = 3
    fake.send_script = {
      { type = "chunk", content = "é ü\r\n" },
      { type = "chunk", content = "ok" },
      { type = "done", output_files = {}, usage = {} },
    }
    type_and_send("unicode")
    env.settle()
    t.eq({ "é ü\r", "ok" }, vim.list_slice(preview_lines(), 5, 6))
  end)
end)
