-- Focus modes of the preview: chat, file, diff; hunks and whole files; stepping through files;
-- :BB7Chat, :BB7File, :BB7Diff.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function shown()
  return lines(require("bb7.ui.preview").buf())
end

-- Chat "c" with a.lua (output M), b.txt (no output) and c.lua (output), UI open.
local function setup()
  local fake = env.reset({ initialized = true })
  env.cmd("BB7Init")
  fake:new_chat("c")
  fake.active = "0000000001"
  require("bb7.state").data.ready = false
  env.write("a.lua", { "local a = 1", "return a" })
  env.write("b.txt", { "plain" })
  env.write("c.lua", { "x" })
  local chat = fake.chats["0000000001"]
  chat.context = {
    { path = "a.lua", content = "local a = 1\nreturn a\n" },
    { path = "b.txt", content = "plain\n" },
    { path = "c.lua", content = "x\n" },
  }
  chat.outputs = { ["a.lua"] = "local a = 2\nreturn a\n", ["c.lua"] = "y\n" }
  chat.messages = { { role = "user", parts = { { type = "text", content = "hello" } } } }
  env.cmd("BB7")
  env.settle()
  env.notes = {}
  return fake
end

local function focus_row(pane, row)
  require("bb7.ui").focus(pane)
  vim.api.nvim_win_set_cursor(0, { row, 0 })
end

local views
describe("focus modes", function()
  local fake
  before_each(function()
    fake = setup()
    views = require("bb7.ui.views").handlers
  end)

  it("gf shows the file under the cursor: its output, highlighted by file type", function()
    focus_row("files", 1)
    views.view_file()
    t.eq({ "a.lua  [output]  M", "", "local a = 2", "return a" }, shown())
    local preview = require("bb7.ui.preview")
    t.eq("file", preview.mode)
    local groups = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(preview.buf(), preview.ns, { 2, 0 }, { 2, -1 }, { details = true })) do
      groups[m[4].hl_group or m[4].line_hl_group] = true
    end
    t.truthy(groups["@keyword.lua"], "lua highlighting of the file")
    focus_row("files", 2)
    views.view_file()
    t.eq({ "b.txt  [context]", "", "plain" }, shown(), "no output: the context snapshot")
  end)

  it("warns for ~ and ~M in the file view", function()
    env.write("a.lua", { "local a = 9", "return a" })
    env.write("b.txt", { "edited" })
    require("bb7.actions").recompute_statuses()
    focus_row("files", 1)
    views.view_file()
    t.matches("^~M Both you and the model changed this file", shown()[2])
    t.eq("a.lua  [output]  ~M", shown()[1])
    focus_row("files", 2)
    views.view_file()
    t.matches("^~  Your local file differs from the snapshot", shown()[2])
  end)

  it("gd shows context -> output, and local -> output for ~M", function()
    focus_row("files", 1)
    views.view_diff()
    t.eq({ "diff a.lua  (hunks)  M", "--- context/a.lua", "+++ output/a.lua", "@@ -1,2 +1,2 @@", "-local a = 1", "+local a = 2", " return a" }, shown())
    env.write("a.lua", { "local a = 9", "return a" })
    require("bb7.actions").recompute_statuses()
    env.settle()
    local all = shown()
    t.eq("diff a.lua  (hunks)  ~M", all[1], "the view follows the status change")
    t.truthy(vim.tbl_contains(all, "--- local/a.lua"), "second diff: " .. vim.inspect(all))
    t.truthy(vim.tbl_contains(all, "-local a = 9"))
  end)

  it("zd switches between hunks and whole files", function()
    local long = {}
    for i = 1, 20 do
      long[i] = "line " .. i
    end
    local chat = fake.chats["0000000001"]
    chat.context[1].content = table.concat(long, "\n") .. "\n"
    env.write("a.lua", vim.deepcopy(long))
    long[10] = "changed"
    chat.outputs["a.lua"] = table.concat(long, "\n") .. "\n"
    require("bb7.actions").refresh_files()
    env.settle()
    focus_row("files", 1)
    views.view_diff()
    local hunks = #shown()
    t.falsy(vim.tbl_contains(shown(), " line 1"), "hunks leave far lines out")
    views.toggle_full_diff()
    t.truthy(vim.tbl_contains(shown(), " line 1") and vim.tbl_contains(shown(), " line 20"), "whole file")
    t.truthy(#shown() > hunks)
    t.eq("diff a.lua  (full file)  M", shown()[1])
    views.toggle_full_diff()
    t.eq(hunks, #shown())
  end)

  it("<C-n>/<C-p> step through files (the diff: files with output) and move the files cursor", function()
    focus_row("files", 1)
    views.view_diff()
    views.next_file()
    t.eq("diff c.lua  (hunks)  M", shown()[1], "b.txt has no output")
    t.eq(3, vim.api.nvim_win_get_cursor(require("bb7.ui").wins.files)[1])
    views.next_file()
    t.eq("diff a.lua  (hunks)  M", shown()[1], "wraps around")
    views.view_file()
    views.next_file()
    t.eq("b.txt  [context]", shown()[1])
    views.prev_file()
    t.eq("a.lua  [output]  M", shown()[1])
    require("bb7.ui").focus("preview")
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-n>", true, false, true), "x", false)
    t.eq("b.txt  [context]", shown()[1], "<C-n> is mapped in the preview")
  end)

  it("gc goes back to the chat; a file view survives a chat reload but not a send", function()
    focus_row("files", 1)
    views.view_file()
    require("bb7.actions").load_chat()
    env.settle()
    t.eq("a.lua  [output]  M", shown()[1], "still the file after a reload")
    views.view_chat()
    t.eq({ "▌You", "hello" }, shown())
    views.view_diff()
    require("bb7.actions").send("more")
    env.settle()
    t.eq("▌You", shown()[1], "the chat is back for the reply")
    t.truthy(vim.tbl_contains(shown(), "Hello world"))
  end)

  it("another chat goes back to the chat view", function()
    focus_row("files", 1)
    views.view_diff()
    fake:new_chat("other")
    require("bb7.actions").select_chat("0000000002")
    env.settle()
    t.eq("chat", require("bb7.ui.preview").mode)
  end)
end)

describe("view commands", function()
  it(":BB7File, :BB7Diff and :BB7Chat open the tab and switch the preview", function()
    local fake = setup()
    require("bb7.ui").close()
    env.cmd("BB7Diff c.lua")
    env.settle()
    t.truthy(require("bb7.ui").is_open())
    t.eq("diff c.lua  (hunks)  M", shown()[1])
    env.cmd("BB7File " .. env.dir .. "/b.txt")
    t.eq("b.txt  [context]", shown()[1])
    env.cmd("BB7Chat")
    t.eq({ "▌You", "hello" }, shown())
    env.notes = {}
    env.cmd("BB7File nope.txt")
    t.eq({ "WARN BB-7: File not in context" }, env.messages())
    fake.chats["0000000001"].outputs = {}
    require("bb7.actions").refresh_files()
    env.settle()
    env.notes = {}
    env.cmd("BB7Diff")
    t.eq({ "WARN BB-7: No output to show" }, env.messages())
  end)
end)
