local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- Active chat "c" with a UI open.
local function setup()
  local fake = env.reset({ initialized = true })
  env.cmd("BB7Init")
  fake:new_chat("c")
  fake.active = "0000000001"
  require("bb7.state").data.ready = false
  env.cmd("BB7")
  env.notes = {}
  return fake
end

local function focus_row(pane, row)
  local ui = require("bb7.ui")
  ui.focus(pane)
  vim.api.nvim_win_set_cursor(0, { row, 0 })
end

describe("files pane", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("shows M and A after a reply that wrote files, and ~ / ~M / R / S from local state", function()
    env.write("math.cs", { "int Add(int a, int b);" })
    env.write("utils.cs", { "u1", "u2", "u3" })
    env.write("ro.cs", { "r" })
    env.cmd("BB7Add math.cs")
    env.cmd("BB7Add utils.cs")
    env.cmd("BB7AddReadonly ro.cs")
    env.cmd("BB7Add utils.cs:1:2")
    fake.send_script = {
      { type = "chunk", content = "Done." },
      { type = "done", output_files = { "math.cs", "new.cs" }, usage = {}, write = {
        ["math.cs"] = "int Add(ref int a, ref int b);\n",
        ["new.cs"] = "class New {}\n",
      } },
    }
    require("bb7.actions").send("refactor")
    env.settle()
    local shown = lines(require("bb7.ui.files").buf())
    t.eq({
      "M   math.cs  6",
      "    utils.cs  3",
      "R   ro.cs  1",
      "S   utils.cs:1-2  2",
      "A   new.cs  4",
    }, shown)
    env.write("utils.cs", { "changed" })
    vim.cmd("edit math.cs")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "local edit" })
    require("bb7.actions").recompute_statuses()
    shown = lines(require("bb7.ui.files").buf())
    t.eq("~M  math.cs  6", shown[1])
    t.eq("~   utils.cs  3", shown[2])
    t.eq("S   utils.cs:1-2  2", shown[4], "sections never go out of sync")
    vim.cmd("bwipeout!")
  end)

  it("apply one, apply all, and their messages", function()
    env.write("a.cs", { "a" })
    env.write("b.cs", { "b" })
    env.cmd("BB7Add a.cs")
    env.cmd("BB7Add b.cs")
    fake.send_script = {
      { type = "done", output_files = {}, usage = {}, write = { ["a.cs"] = "A\n", ["b.cs"] = "B\n", ["c.cs"] = "C\n" } },
    }
    require("bb7.actions").send("go")
    env.settle()
    env.notes = {}
    focus_row("files", 1)
    require("bb7.ui").handlers.files.apply()
    env.settle()
    t.eq({ "INFO BB-7: Applied a.cs" }, env.messages())
    t.eq({ "A" }, vim.fn.readfile(env.dir .. "/a.cs"))
    env.notes = {}
    require("bb7.ui").handlers.files.apply_all()
    env.settle()
    t.eq({ "INFO BB-7: Applied 2 files" }, env.messages())
    t.eq({ "B" }, vim.fn.readfile(env.dir .. "/b.cs"))
    t.eq({ "C" }, vim.fn.readfile(env.dir .. "/c.cs"))
    env.notes = {}
    require("bb7.actions").apply_all()
    t.eq({ "WARN BB-7: No output to apply" }, env.messages())
    env.notes = {}
    require("bb7.actions").apply("a.cs")
    t.eq({ "WARN BB-7: No output to apply" }, env.messages())
  end)

  it("update, remove and read-only from the pane", function()
    env.write("a.cs", { "a" })
    env.cmd("BB7Add a.cs")
    env.write("a.cs", { "a2" })
    require("bb7.actions").recompute_statuses()
    t.eq("~   a.cs  1", lines(require("bb7.ui.files").buf())[1])
    focus_row("files", 1)
    env.notes = {}
    require("bb7.ui").handlers.files.update()
    env.settle()
    t.eq({ "INFO BB-7: Updated a.cs" }, env.messages())
    t.eq("a2\n", fake:sent("context_update")[1].content)
    t.eq("    a.cs  1", lines(require("bb7.ui.files").buf())[1])
    env.notes = {}
    focus_row("files", 1)
    require("bb7.ui").handlers.files.readonly()
    env.settle()
    t.eq({ "INFO BB-7: Set read-only a.cs" }, env.messages())
    t.eq("R   a.cs  1", lines(require("bb7.ui.files").buf())[1])
    env.notes = {}
    focus_row("files", 1)
    require("bb7.ui").handlers.files.remove()
    env.settle()
    t.eq({ "INFO BB-7: Removed a.cs" }, env.messages())
    t.eq({ "  No files: :BB7Add" }, lines(require("bb7.ui.files").buf()))
  end)

  it("shows the context-to-output unified diff in the preview", function()
    env.write("a.cs", { "one", "two" })
    env.cmd("BB7Add a.cs")
    fake.send_script = { { type = "done", output_files = {}, usage = {}, write = { ["a.cs"] = "one\nTWO\n" } } }
    require("bb7.actions").send("go")
    env.settle()
    focus_row("files", 1)
    require("bb7.ui").handlers.files.diff()
    t.eq({ "diff a.cs  (hunks)  M", "--- context/a.cs", "+++ output/a.cs", "@@ -1,2 +1,2 @@", " one", "-two", "+TWO" }, lines(require("bb7.ui.preview").buf()))
    local during
    require("bb7.state").on("stream", function()
      during = during or lines(require("bb7.ui.preview").buf())
    end)
    fake.send_script = nil
    require("bb7.actions").send("next")
    env.settle()
    t.falsy(vim.tbl_contains(during, "diff a.cs"), "a reply streams into the chat, not after the diff")
    t.eq("Hello ", during[#during])
  end)

  it(":BB7DiffLocal opens local and output side by side in diff mode", function()
    env.write("a.cs", { "one" })
    env.cmd("BB7Add a.cs")
    fake.send_script = { { type = "done", output_files = {}, usage = {}, write = { ["a.cs"] = "uno\n" } } }
    require("bb7.actions").send("go")
    env.settle()
    env.cmd("BB7DiffLocal a.cs")
    local wins = vim.api.nvim_tabpage_list_wins(0)
    t.eq(2, #wins)
    local names = {}
    for _, win in ipairs(wins) do
      t.truthy(vim.wo[win].diff, "diff mode")
      table.insert(names, vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)))
    end
    t.eq(env.dir .. "/a.cs", names[1])
    t.matches("/output/a%.cs$", names[2])
    t.eq("a.cs", vim.fn.bufname(vim.api.nvim_win_get_buf(wins[1])), "relative, as the tab line shows a file you open")
    vim.cmd("tabclose")
    env.settle()
    t.eq("a.cs", fake:sent("diff_local_done")[1].path)
    env.notes = {}
    env.cmd("BB7DiffLocal nothing.cs")
    t.eq({ "WARN BB-7: No output to apply" }, env.messages())
  end)
end)

describe("chats pane", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("lists chats with the active one marked, pinned first", function()
    fake:new_chat("other")
    require("bb7.actions").refresh_chats()
    env.settle()
    t.eq({ "   other", "▶  c" }, lines(require("bb7.ui.chats").buf()))
    focus_row("chats", 2)
    require("bb7.ui").handlers.chats.pin()
    env.settle()
    t.eq({ "▶★ c", "   other" }, lines(require("bb7.ui.chats").buf()))
    t.eq({ chats = { "0000000001" } }, vim.json.decode(table.concat(vim.fn.readfile(env.dir .. "/.bb7/pinned_chats.json"), "")))
    focus_row("chats", 2)
    require("bb7.ui").handlers.chats.select()
    env.settle()
    t.eq("0000000002", fake.active)
    t.eq({ " ★ c", "▶  other" }, lines(require("bb7.ui.chats").buf()))
  end)

  it("new, rename, delete", function()
    vim.ui.input = function(_, cb)
      cb("fresh")
    end
    require("bb7.ui").handlers.chats.new()
    env.settle()
    t.eq("fresh", fake.chats[fake.active].name)
    t.eq("▶  fresh", lines(require("bb7.ui.chats").buf())[1])
    vim.ui.input = function(opts, cb)
      t.eq("fresh", opts.default)
      cb("renamed")
    end
    focus_row("chats", 1)
    require("bb7.ui").handlers.chats.rename()
    env.settle()
    t.eq("▶  renamed", lines(require("bb7.ui.chats").buf())[1])
    vim.ui.select = function(items, _, cb)
      cb(items[1])
    end
    focus_row("chats", 1)
    require("bb7.ui").handlers.chats.delete()
    env.settle()
    t.eq({ "   c" }, lines(require("bb7.ui.chats").buf()))
    t.eq(nil, require("bb7.state").data.active_id)
    t.eq("No chat selected.", lines(require("bb7.ui.preview").buf())[1])
  end)

  it("regenerating a title shows the title_updated event", function()
    require("bb7.actions").send("hello there")
    env.settle()
    focus_row("chats", 1)
    require("bb7.ui").handlers.chats.title()
    env.settle()
    t.eq("hello there", fake:sent("generate_title")[1].content)
    t.eq({ "▶  Generated title" }, lines(require("bb7.ui.chats").buf()))
    t.matches("^ Generated title │", vim.wo[require("bb7.ui").wins.preview].winbar)
  end)
end)

describe("fork and edit", function()
  local fake
  before_each(function()
    fake = setup()
    require("bb7.actions").send("first question")
    env.settle()
    require("bb7.actions").send("second question")
    env.settle()
    env.notes = {}
  end)

  local function cursor_on(text)
    local ui = require("bb7.ui")
    ui.focus("preview")
    for row, line in ipairs(lines(require("bb7.ui.preview").buf())) do
      if line == text then
        vim.api.nvim_win_set_cursor(0, { row, 0 })
        return
      end
    end
    error("no line " .. text)
  end

  it("<C-f> on a user message forks into a new chat with that message as draft", function()
    cursor_on("second question")
    require("bb7.ui").handlers.preview.fork()
    env.settle()
    t.eq({ "INFO BB-7: Forked chat", "WARN BB-7: math.cs was modified since that message" }, env.messages())
    local req = fake:sent("fork_chat")[1]
    t.eq({ "0000000001", 2 }, { req.chat_id, req.fork_message_index })
    t.eq("0000000002", require("bb7.state").data.active_id)
    t.eq("second question", require("bb7.ui.input").text())
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win(), "the input, to edit it")
    local shown = lines(require("bb7.ui.preview").buf())
    t.truthy(vim.tbl_contains(shown, "first question"))
    t.falsy(vim.tbl_contains(shown, "second question"))
  end)

  it("edit asks, then truncates before the message and puts it in the input", function()
    local prompts = {}
    vim.ui.select = function(items, opts, cb)
      table.insert(prompts, opts.prompt)
      cb(#prompts == 1 and items[2] or items[1])
    end
    cursor_on("Hello world")
    require("bb7.ui").handlers.preview.edit()
    t.eq({ "WARN BB-7: Cursor is not on a user message" }, env.messages())
    cursor_on("first question")
    require("bb7.ui").handlers.preview.edit()
    env.settle()
    t.eq(0, #fake:sent("chat_edit"), "cancelled at the question: nothing cut")
    require("bb7.ui").handlers.preview.edit()
    env.settle()
    t.eq("BB-7: edit this message? The chat is cut here: 3 later messages and the outputs not applied yet are deleted.", prompts[2])
    local req = fake:sent("chat_edit")[1]
    t.eq({ "0000000001", 0, "first question" }, { req.chat_id, req.message_index, req.content })
    t.eq("first question", require("bb7.ui.input").text())
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win(), "the input, to edit it")
    t.eq({ "" }, lines(require("bb7.ui.preview").buf()))
  end)
end)

describe("input and status line", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("saves the draft when leaving insert mode and restores it per chat", function()
    local input = require("bb7.ui.input")
    require("bb7.ui").focus("input")
    input.set_text("")
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "half", "written" })
    vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
    env.settle()
    t.eq("half\nwritten", fake.chats["0000000001"].draft)
    fake:new_chat("two")
    require("bb7.actions").select_chat("0000000002")
    env.settle()
    t.eq("", input.text())
    require("bb7.actions").select_chat("0000000001")
    env.settle()
    t.eq("half\nwritten", input.text())
  end)

  it("a chat reload does not overwrite what is being typed", function()
    local input = require("bb7.ui.input")
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "typing..." })
    require("bb7.actions").load_chat()
    env.settle()
    t.eq("typing...", input.text())
  end)

  it("shows chat, model, token estimate, balance and the counter", function()
    require("bb7.actions").send("q")
    env.settle()
    local win = require("bb7.ui").wins.preview
    t.eq(" c │ anthropic/claude-sonnet-4 │ ~4.2k tokens │ $6.55 left │ 1 / 1%<", vim.wo[win].winbar)
  end)
end)

describe("the bb7 tab", function()
  before_each(function()
    setup()
  end)

  it("closes with q and opens again with :BB7, rebuilding a pane the user closed", function()
    local ui = require("bb7.ui")
    t.eq(2, #vim.api.nvim_list_tabpages())
    ui.focus("chats")
    ui.handlers.chats.close()
    t.eq(1, #vim.api.nvim_list_tabpages())
    t.falsy(ui.is_open())
    env.cmd("BB7")
    t.truthy(ui.is_open())
    vim.api.nvim_win_close(ui.wins.files, true)
    env.cmd("BB7")
    t.eq(5, #vim.api.nvim_tabpage_list_wins(ui.tab), "four panes and the info pane")
    t.eq(2, #vim.api.nvim_list_tabpages())
  end)

  it("closing when it is the only tab leaves an empty tab", function()
    local ui = require("bb7.ui")
    vim.cmd("1tabclose")
    t.eq(1, #vim.api.nvim_list_tabpages())
    ui.close()
    t.eq(1, #vim.api.nvim_list_tabpages())
    t.eq(1, #vim.api.nvim_tabpage_list_wins(0))
    t.falsy(ui.is_open())
  end)
end)
