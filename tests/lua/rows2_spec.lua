-- More of the first plugin's workflows: :BB7NewChat, locked chats, the
-- spinner, auto-preview, the files tree, restored panes, the diff-error retry, the
-- instruction-error banner, the model picker.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  env.settle()
end

describe("workflow rows (2)", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7NewChat makes the chat active without opening the UI; the next :BB7 opens it", function()
    require("bb7.state").data.model = "openai/gpt-4o"
    env.cmd("BB7NewChat first")
    t.eq("openai/gpt-4o", fake:sent("chat_new")[1].model, "with the model in use")
    local ui = require("bb7.ui")
    t.falsy(ui.is_open(), "the UI stays closed")
    t.truthy(require("bb7.state").data.active_id)
    t.eq({ "INFO BB-7: Created: first" }, env.messages())
    env.cmd("BB7")
    t.truthy(ui.is_open(), ":BB7 opens the UI (it does not toggle it closed)")
    t.eq("first", require("bb7.state").data.chat.name)
    -- in the bb7 tab, the input gets the focus in insert mode
    ui.focus("chats")
    env.cmd("BB7NewChat second")
    t.truthy(ui.is_open())
    t.eq(ui.wins.input, vim.api.nvim_get_current_win())
    t.eq("second", require("bb7.state").data.chat.name)
    vim.cmd("stopinsert")
    local help = table.concat(require("bb7.ui.help").lines("input"), "\n")
    t.truthy(help:find(":BB7NewChat%s+start a new chat and make it active"), "? lists the command")
  end)

  it("a locked chat is marked in the list; <CR> on it says so, u force-unlocks it after asking", function()
    local id = fake:new_chat("held")
    fake.chats[id].locked = true
    fake:new_chat("free")
    vim.ui.select = function(_, _, cb)
      cb(nil)
    end
    env.cmd("BB7")
    local chats = require("bb7.ui.chats")
    local buf = chats.buf()
    t.eq({ "   free", "   held  ⊘ locked" }, lines(buf))
    local ui = require("bb7.ui")
    ui.focus("chats")
    vim.api.nvim_win_set_cursor(ui.wins.chats, { 2, 0 })
    env.notes = {}
    feed("<CR>")
    t.eq({ "WARN BB-7: Chat is locked by another bb7 process (u force-unlocks it)" }, env.messages())
    t.eq(0, #fake:sent("chat_select"))
    -- u asks; "Cancel" keeps the lock
    local asked
    vim.ui.select = function(items, opts, cb)
      asked = opts.prompt
      cb(items[2])
    end
    feed("u")
    t.truthy(asked and asked:find("force unlock held?", 1, true), "asks first")
    t.eq(0, #fake:sent("chat_force_unlock"))
    vim.ui.select = function(items, _, cb)
      cb(items[1])
    end
    feed("u")
    t.eq(1, #fake:sent("chat_force_unlock"))
    t.eq(id, fake:sent("chat_force_unlock")[1].id)
    t.eq({ "   free", "   held" }, lines(buf))
    -- on a chat that is not locked, u only says so
    env.notes = {}
    feed("u")
    t.eq({ "INFO BB-7: Chat is not locked" }, env.messages())
    t.truthy(table.concat(require("bb7.ui.help").lines("chats"), "\n"):find("Force%-unlock"), "? lists u")
  end)

  it("a spinner with the elapsed time runs under the reply: Waiting…, then Streaming…; gone at the end", function()
    local spinner = require("bb7.ui.spinner")
    fake.send_script = { { hold = true } }
    env.cmd("BB7")
    require("bb7.actions").new_chat("spin")
    env.settle()
    local ui = require("bb7.ui")
    local pbuf = require("bb7.ui.preview").buf()
    local function shown()
      local marks = vim.api.nvim_buf_get_extmarks(pbuf, spinner.ns, 0, -1, { details = true })
      local mark = marks[1]
      return mark and mark[4].virt_lines[2][1][1], mark and mark[2]
    end
    require("bb7.ui.input").set_text("hello")
    ui.handlers.input.send()
    t.wait(function()
      return shown() ~= nil
    end, "spinner")
    t.matches("Waiting… 00:00$", shown())
    -- a minute later (the clock moved on): the spinner and the status line show it
    local base = spinner.now()
    spinner.now = function()
      return base + 65000
    end
    t.wait(function()
      return (shown() or ""):find("01:05", 1, true) ~= nil
    end, "elapsed time in the spinner")
    t.matches("waiting… 01:05", vim.wo[ui.wins.preview].winbar, "the spinner's word: nothing arrived yet")
    require("bb7.actions").cancel()
    env.settle()
    t.eq(nil, shown(), "no spinner after the end")
    spinner.now = vim.uv.now
    -- the first piece of the reply turns it into Streaming…, under the last line
    fake.send_script = { { type = "chunk", content = "Part\nof it" }, { hold = true } }
    require("bb7.ui.input").set_text("again")
    ui.handlers.input.send()
    t.wait(function()
      return (shown() or ""):find("Streaming…", 1, true) ~= nil
    end, "Streaming…")
    local _, row = shown()
    t.eq(vim.api.nvim_buf_line_count(pbuf) - 1, row)
    require("bb7.actions").cancel()
    env.settle()
    t.eq(nil, shown())
    t.falsy(spinner.running())
    t.truthy(table.concat(require("bb7.ui.help").lines("preview"), "\n"):find("A spinner under a running reply", 1, true))
  end)

  it("auto-preview: the file under the cursor in the files pane is shown; the input brings the chat back", function()
    env.cmd("BB7")
    require("bb7.actions").new_chat("auto")
    env.settle()
    env.write("a.txt", { "alpha" })
    env.write("b.txt", { "beta" })
    env.cmd("BB7Add a.txt")
    env.cmd("BB7Add b.txt")
    local ui = require("bb7.ui")
    local preview = require("bb7.ui.preview")
    local files = require("bb7.ui.files")
    ui.focus("files")
    env.settle()
    t.eq("file", preview.mode)
    t.eq(files.current(ui.wins.files).path, preview.path)
    local first = preview.path
    feed("j")
    -- headless Neovim runs no CursorMoved after fed keys (it fires before waiting for a key)
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = files.buf() })
    t.eq("file", preview.mode)
    t.truthy(preview.path ~= first, "follows the cursor")
    t.truthy(vim.tbl_contains(lines(preview.buf()), preview.path == "a.txt" and "alpha" or "beta"))
    ui.focus("input")
    env.settle()
    t.eq("chat", preview.mode, "the input brings the chat back")
    -- a view picked with a key stays
    ui.focus("files")
    env.settle()
    feed("gf")
    ui.focus("input")
    env.settle()
    t.eq("file", preview.mode, "gf's view stays")
    -- a diff picked with gd is followed in the files pane, past a file without output
    require("bb7.ui.autopreview").sticky = nil
    require("bb7.state").data.files[1].has_output = true
    require("bb7.state").data.files[1].output_content = "changed\n"
    local with_output = require("bb7.state").data.files[1].path
    ui.focus("files")
    for row, file in pairs(files.rows) do
      if file.path == with_output then
        vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
      end
    end
    feed("gd")
    t.eq("diff", preview.mode)
    for row, file in pairs(files.rows) do
      if file.path ~= with_output then
        vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
      end
    end
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = files.buf() })
    t.eq("file", preview.mode, "no output: the file")
    for row, file in pairs(files.rows) do
      if file.path == with_output then
        vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
      end
    end
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = files.buf() })
    t.eq("diff", preview.mode, "back on a file with output: its diff again")
    -- off
    fake = env.reset({ initialized = true, setup = { auto_preview = false } })
    env.cmd("BB7")
    require("bb7.actions").new_chat("off")
    env.settle()
    env.write("a.txt", { "alpha" })
    env.cmd("BB7Add a.txt")
    require("bb7.ui").focus("files")
    env.settle()
    t.eq("chat", require("bb7.ui.preview").mode)
    t.truthy(table.concat(require("bb7.ui.help").lines("files"), "\n"):find("Auto-preview", 1, true))
  end)

  it("the files pane is a tree: directories open and close, ~ for home in external paths", function()
    local files = require("bb7.ui.files")
    local home = vim.env.HOME
    local entries = {
      { path = "src/x/a.lua", status = "M", tokens = 5 },
      { path = "top.txt", tokens = 2 },
      { path = "src/x/b.lua", tokens = 3 },
      { path = "src/c.lua", tokens = 1, start_line = 1, end_line = 2, status = "S" },
      { path = home .. "/notes/n.txt", status = "R", tokens = 4 },
      { path = "/opt/lib/z.h", status = "R", tokens = 6 },
    }
    local shown = files.lines(entries, {})
    t.eq({
      "    ▾ src/",
      "      ▾ x/",
      "M       a.lua  5",
      "        b.lua  3",
      "S     c.lua:1-2  1",
      "    top.txt  2",
      "    ▾ ~/notes/",
      "R     n.txt  4",
      "    ▾ /opt/lib/",
      "R     z.h  6",
    }, shown)
    t.eq({ "    ▸ src/  (3)", "    top.txt  2", "    ▾ ~/notes/", "R     n.txt  4", "    ▾ /opt/lib/", "R     z.h  6" },
      (files.lines(entries, { ["src/"] = true })))
    -- a directory with one directory in it shares its row
    t.eq({ "    ▾ src/x/", "      a.lua  1" }, (files.lines({ { path = "src/x/a.lua", tokens = 1 } }, {})))

    -- in the pane: <CR> on a directory closes it, za opens it again; file keys skip directory rows
    env.cmd("BB7")
    require("bb7.actions").new_chat("tree")
    env.settle()
    env.write("src/a.txt", { "a" })
    env.write("src/b.txt", { "b" })
    env.write("top.txt", { "t" })
    env.cmd("BB7Add src/a.txt")
    env.cmd("BB7Add src/b.txt")
    env.cmd("BB7Add top.txt")
    local ui = require("bb7.ui")
    ui.focus("files")
    vim.api.nvim_win_set_cursor(ui.wins.files, { 1, 0 })
    t.eq({ "    ▾ src/", "      a.txt  1", "      b.txt  1", "    top.txt  1" }, lines(files.buf()))
    feed("<CR>")
    t.eq({ "    ▸ src/  (2)", "    top.txt  1" }, lines(files.buf()))
    t.eq(0, #fake:sent("get_diff_paths"), "<CR> on a directory shows no diff")
    feed("d")
    t.eq(0, #fake:sent("context_remove"), "d on a directory removes nothing")
    feed("za")
    t.eq({ "    ▾ src/", "      a.txt  1", "      b.txt  1", "    top.txt  1" }, lines(files.buf()))
    vim.api.nvim_win_set_cursor(ui.wins.files, { 3, 0 })
    t.eq("src/b.txt", files.current(ui.wins.files).path)
    feed("d")
    t.eq("src/b.txt", fake:sent("context_remove")[1].path)
  end)

  it("reopening restores the focused pane, each pane's cursor and the preview's view", function()
    env.cmd("BB7")
    require("bb7.actions").new_chat("back")
    env.settle()
    for i = 1, 3 do
      env.write("f" .. i .. ".txt", { "line one", "line two", "line three" })
      env.cmd("BB7Add f" .. i .. ".txt")
    end
    local ui = require("bb7.ui")
    local preview = require("bb7.ui.preview")
    ui.focus("files")
    vim.api.nvim_win_set_cursor(ui.wins.files, { 2, 0 })
    feed("gf")
    t.eq("f2.txt", preview.path)
    ui.focus("preview")
    vim.api.nvim_win_set_cursor(ui.wins.preview, { 3, 0 })
    feed("q")
    t.falsy(ui.is_open())
    env.cmd("BB7")
    t.truthy(ui.is_open())
    t.eq(ui.wins.preview, vim.api.nvim_get_current_win(), "the preview has the focus again")
    t.eq("file", preview.mode)
    t.eq("f2.txt", preview.path)
    t.eq(3, vim.api.nvim_win_get_cursor(ui.wins.preview)[1])
    t.eq(2, vim.api.nvim_win_get_cursor(ui.wins.files)[1])
    -- the chat view and the input
    feed("gc")
    ui.focus("input")
    feed("q")
    env.cmd("BB7")
    t.eq(ui.wins.input, vim.api.nvim_get_current_win())
    t.eq("chat", preview.mode)
  end)

  it("diff-error retry: the input is prefilled, any send carries the retry context, cancel aborts it", function()
    local errors = { "edit_file edit 0 (a.txt, base=context): old_string not found in file" }
    local calls = { { tool = "edit_file", args = { path = "a.txt" }, path = "a.txt" } }
    local function fail()
      fake.send_script = { { type = "diff_error", errors = errors, tool_calls = calls, usage = {} } }
    end
    env.cmd("BB7")
    require("bb7.actions").new_chat("retry")
    env.settle()
    local ui = require("bb7.ui")
    local input = require("bb7.ui.input")
    local retry_message = require("bb7.config").options.retry_message
    fail()
    input.set_text("edit a.txt")
    ui.handlers.input.send()
    env.settle()
    t.eq(retry_message, input.text(), "the input holds the retry")
    -- what the user sends instead still carries the failed edits
    fake.send_script = nil
    input.set_text("Please try the edit of a.txt again")
    ui.handlers.input.send()
    env.settle()
    local sent = fake:sent("send")[2]
    t.eq("Please try the edit of a.txt again", sent.content)
    t.eq({ errors = errors, tool_calls = calls }, sent.retry_context)
    t.eq(nil, require("bb7.state").data.diff_error)
    -- the next send has none
    input.set_text("thanks")
    ui.handlers.input.send()
    env.settle()
    t.eq(nil, fake:sent("send")[3].retry_context)

    -- cancel (<C-c> in the input) aborts: recorded in the chat, the input emptied, no context sent
    fail()
    input.set_text("edit again")
    ui.handlers.input.send()
    env.settle()
    t.eq(retry_message, input.text())
    ui.focus("input")
    env.notes = {}
    feed("<C-c>")
    t.eq(1, #fake:sent("add_system_message"))
    t.eq("File changes failed to apply.", fake:sent("add_system_message")[1].message)
    t.eq("", input.text())
    t.eq({ "INFO BB-7: Retry aborted" }, env.messages())
    t.truthy(vim.tbl_contains(lines(require("bb7.ui.preview").buf()), "File changes failed to apply."))
    input.set_text("new topic")
    ui.handlers.input.send()
    env.settle()
    t.eq(nil, fake:sent("send")[5].retry_context)
    -- a retry belongs to its chat
    fail()
    input.set_text("edit once more")
    ui.handlers.input.send()
    env.settle()
    require("bb7.actions").new_chat("other")
    env.settle()
    t.eq(nil, require("bb7.actions").retry_context())
  end)

  it("classic: <C-x> in insert mode aborts the retry", function()
    fake = env.reset({ initialized = true, setup = { keymaps = "classic" } })
    fake.send_script = { { type = "diff_error", errors = { "e" }, tool_calls = {}, usage = {} } }
    env.cmd("BB7")
    require("bb7.actions").new_chat("classic")
    env.settle()
    local input = require("bb7.ui.input")
    input.set_text("go")
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq(require("bb7.config").options.retry_message, input.text())
    t.truthy(vim.tbl_contains(lines(require("bb7.ui.preview").buf()), "The retry goes with the next message you send (the input holds one); <C-x> aborts it."))
    require("bb7.ui").focus("input")
    feed("A<C-x><Esc>")
    t.eq(1, #fake:sent("add_system_message"))
    t.eq("", input.text())
  end)

  it("an instruction error shows as a banner and blocks sending until fixed (real daemon)", function()
    local real = require("helpers.real")
    if not real.available() then
      print("skipped: BB7_BIN and FAKE_LLM not set")
      return
    end
    real.run(function()
      real.start({ { text = { "Fine." } } })
      env.cmd("BB7")
      require("bb7.actions").new_chat("instr")
      env.settle()
      env.write(".bb7/instructions", { "Be brief.", "@include missing.md" })
      require("bb7.actions").load_chat()
      env.settle()
      local pbuf = require("bb7.ui.preview").buf()
      local shown = lines(pbuf)
      t.eq("⚠ The project instructions (.bb7/instructions) do not parse:", shown[1])
      t.matches("include file not found: missing.md", shown[2])
      local input = require("bb7.ui.input")
      vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "hello" }) -- typed
      env.notes = {}
      require("bb7.ui").handlers.input.send()
      env.settle()
      t.matches("^WARN BB%-7: Fix the project instructions before sending: .*missing%.md", env.messages()[1])
      t.eq("hello", input.text(), "the text stays in the input")
      t.eq(nil, require("bb7.state").data.stream)
      -- fixed and written from Neovim: the banner goes, the send goes through
      vim.cmd("tabnew " .. vim.fn.fnameescape(env.dir .. "/.bb7/instructions"))
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { "Be brief." })
      vim.cmd("silent write")
      env.settle()
      t.wait(function()
        return lines(pbuf)[1] ~= "⚠ The project instructions (.bb7/instructions) do not parse:"
      end, "banner gone")
      require("bb7.ui").open()
      require("bb7.ui").handlers.input.send()
      real.wait_stream_end()
      t.truthy(vim.tbl_contains(lines(pbuf), "Fine."), vim.inspect(lines(pbuf)))
    end)
  end)

  it("the model picker: detail pane, tool-capable filter (t), filter prompt (/)", function()
    local picker = require("bb7.ui.model_picker")
    local models = {
      { id = "anthropic/claude-sonnet-4", name = "Claude Sonnet 4", context_length = 200000, max_completion_tokens = 64000,
        supports_tools = true, supports_reasoning = true,
        pricing = { prompt = "0.000003", completion = "0.000015", input_cache_read = "0.0000003", input_cache_write = "0.00000375", internal_reasoning = "0.000015" } },
      { id = "openai/gpt-4o", name = "GPT-4o", context_length = 128000, supports_tools = true, pricing = { prompt = "0.0000025", completion = "0.00001" } },
      { id = "some/chat-only", name = "Chat only", context_length = 8000, supports_tools = false, pricing = { prompt = "0", completion = "0" } },
    }
    local picked
    picker.open(models, "openai/gpt-4o", function(id)
      picked = id
    end)
    local s = picker.state
    local function list()
      return vim.api.nvim_buf_get_lines(s.buf, 0, -1, false)
    end
    t.eq(2, #list(), "models without tools are hidden at first")
    t.matches("2 of 3, tools only", vim.api.nvim_win_get_config(s.win).title[1][1])
    vim.api.nvim_win_set_cursor(s.win, { 1, 0 })
    vim.api.nvim_exec_autocmds("CursorMoved", { buffer = s.buf })
    t.eq({
      "",
      "  Claude Sonnet 4",
      "  anthropic/claude-sonnet-4",
      "",
      "  Price in     $3.00 / 1M",
      "  Price out    $15.00 / 1M",
      "  Cache read   $0.30 / 1M",
      "  Cache write  $3.75 / 1M",
      "  Reasoning    $15.00 / 1M",
      "",
      "  Context      200k",
      "  Max output   64k",
      "",
      "  Reasoning    yes",
      "  Tools        yes",
    }, vim.api.nvim_buf_get_lines(s.detail_buf, 0, -1, false))
    feed("t")
    t.eq(3, #list(), "t shows every model")
    -- the filter prompt narrows as you type
    feed("/")
    t.truthy(s.prompt_win and vim.api.nvim_win_is_valid(s.prompt_win))
    vim.api.nvim_buf_set_lines(s.prompt_buf, 0, -1, false, { "CHAT only" })
    vim.api.nvim_exec_autocmds("TextChangedI", { buffer = s.prompt_buf })
    t.eq(1, #list())
    t.matches("some/chat%-only", list()[1])
    t.eq("  Tools        no", vim.api.nvim_buf_get_lines(s.detail_buf, -2, -1, false)[1])
    feed("<Esc>")
    t.eq(s.win, vim.api.nvim_get_current_win(), "back in the list")
    feed("<CR>")
    t.eq("some/chat-only", picked)
    t.eq(nil, picker.state)
  end)

  it("a chat another bb7 process holds is marked locked, and u frees it (real daemons)", function()
    local real = require("helpers.real")
    if not real.available() then
      print("skipped: BB7_BIN and FAKE_LLM not set")
      return
    end
    real.run(function()
      real.start({})
      require("bb7.actions").new_chat("held")
      env.settle()
      local id = require("bb7.state").data.active_id
      require("bb7.actions").new_chat("mine")
      env.settle()
      -- a second daemon (another Neovim) opens "held"
      local out = {}
      local other = vim.system({ vim.fn.fnamemodify(real.bin, ":p") }, {
        stdin = true,
        stdout = function(_, data)
          if data then
            table.insert(out, data)
          end
        end,
      })
      other:write(vim.json.encode({ action = "init", request_id = "1", project_root = env.dir }) .. "\n")
      other:write(vim.json.encode({ action = "chat_select", request_id = "2", id = id }) .. "\n")
      t.wait(function()
        return table.concat(out):find('"request_id":"2"', 1, true) ~= nil
      end, "the other daemon selected the chat", 10000)
      local ok, err = pcall(function()
        env.cmd("BB7")
        local chats = require("bb7.ui.chats")
        local held_row
        for row, chat in pairs(chats.rows) do
          if chat.id == id then
            held_row = row
          end
        end
        t.truthy(held_row and chats.rows[held_row].locked, "the daemon says it is locked")
        t.matches("held  ⊘ locked$", lines(chats.buf())[held_row])
        local ui = require("bb7.ui")
        ui.focus("chats")
        vim.api.nvim_win_set_cursor(ui.wins.chats, { held_row, 0 })
        vim.ui.select = function(items, _, cb)
          cb(items[1])
        end
        env.notes = {}
        feed("u")
        t.eq({ "INFO BB-7: Chat unlocked" }, env.messages())
        t.falsy(chats.rows[held_row].locked)
        feed("<CR>")
        env.settle()
        t.eq(id, require("bb7.state").data.active_id, "it opens now")
      end)
      other:kill(15)
      if not ok then
        error(err, 0)
      end
    end)
  end)
end)
