-- The last of the first plugin's workflows: :BB7Remove from oil.nvim buffers, the float and
-- side layouts, the hunk-by-hunk review in the real buffer, completion in the input, and a
-- refused send.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  env.settle()
end

describe("workflow rows (3)", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7Remove from an oil.nvim buffer (oil:///dir/): the entry under the cursor, a directory after asking", function()
    env.cmd("BB7")
    require("bb7.actions").new_chat("oil")
    env.settle()
    env.write("a.txt", { "a" })
    env.write("src/x.txt", { "x" })
    env.write("src/y.txt", { "y" })
    for _, p in ipairs({ "a.txt", "src/x.txt", "src/y.txt" }) do
      env.cmd("BB7Add " .. p)
    end
    vim.cmd("tabnew")
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_name(buf, "oil://" .. env.dir .. "/")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "/1 src/", "/2 a.txt" })
    vim.bo[buf].buftype = "acwrite"
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    env.notes = {}
    env.cmd("BB7Remove")
    t.eq({ { action = "context_remove", path = "a.txt" } }, vim.tbl_map(function(r)
      return { action = r.action, path = r.path }
    end, fake:sent("context_remove")))
    local asked
    vim.ui.select = function(items, opts, cb)
      asked = opts.prompt
      cb(items[1])
    end
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    env.cmd("BB7Remove")
    t.eq("BB-7: remove 2 files from the context?", asked)
    local removed = vim.tbl_map(function(r)
      return r.path
    end, fake:sent("context_remove"))
    table.sort(removed)
    t.eq({ "a.txt", "src/x.txt", "src/y.txt" }, removed)
    -- a file not in the context says so
    env.write("b.txt", { "b" })
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "b.txt" })
    env.notes = {}
    env.cmd("BB7Remove")
    t.eq({ "WARN BB-7: File not in context" }, env.messages())
  end)

  it('layout = "float": floating panes over the current tab with titles and footers', function()
    fake = env.reset({ initialized = true, setup = { layout = "float" } })
    fake:new_chat("floaty")
    fake.active = nil
    env.write("a.txt", { "alpha" })
    local code = vim.api.nvim_get_current_win()
    vim.ui.select = function(items, _, cb)
      cb(items[1])
    end
    env.cmd("BB7")
    env.cmd("BB7Add a.txt")
    local ui = require("bb7.ui")
    t.eq("float", ui.mode)
    t.eq(1, #vim.api.nvim_list_tabpages(), "no tab of its own")
    for _, pane in ipairs({ "chats", "files", "info", "preview", "input" }) do
      t.truthy(ui.wins[pane] and vim.api.nvim_win_is_valid(ui.wins[pane]), pane)
      t.eq("editor", vim.api.nvim_win_get_config(ui.wins[pane]).relative, pane .. " floats")
    end
    local function deco(pane, key)
      local value = vim.api.nvim_win_get_config(ui.wins[pane])[key]
      return type(value) == "table" and value[1][1] or value
    end
    t.eq(" Preview: floaty ", deco("preview", "title"))
    local function footer(pane)
      return table.concat(vim.tbl_map(function(chunk)
        return chunk[1]
      end, vim.api.nvim_win_get_config(ui.wins[pane]).footer), "")
    end
    -- the key hint first (floats have no status line), then what the footer tells
    t.matches("│ 1 of 1 $", footer("chats"))
    t.matches("│ 1 file · %d+ tokens $", footer("files"))
    t.matches("^ %? keys │", footer("files"), "a narrow pane: as many keys as fit")
    t.matches("^ <C%-c> cancel · ", footer("preview"))
    t.eq("2 files · 300 tokens (save 100)", require("bb7.ui.layouts").files_summary({
      { path = "a", tokens = 200, status = "M", original_tokens = 100 }, { path = "b", tokens = 100 },
    }))
    -- :BB7 closes it again, the code window stays
    vim.api.nvim_set_current_win(ui.wins.input)
    env.cmd("BB7")
    t.falsy(ui.is_open())
    t.truthy(vim.api.nvim_win_is_valid(code))
    t.eq(1, #vim.api.nvim_tabpage_list_wins(0))
    -- as the first plugin's: going to the code closes it, so does :q in one pane; it follows resizes
    env.cmd("BB7")
    t.truthy(ui.is_open())
    vim.api.nvim_set_current_win(code)
    env.settle()
    t.falsy(ui.is_open(), "going to a window that is not a float closes it")
    env.cmd("BB7")
    vim.api.nvim_set_current_win(ui.wins.files)
    vim.cmd("quit")
    env.settle()
    t.falsy(ui.is_open(), ":q in one pane closes them all")
    t.eq({ code }, vim.api.nvim_tabpage_list_wins(0))
    env.cmd("BB7")
    local width = vim.api.nvim_win_get_width(ui.wins.preview)
    local columns = vim.o.columns
    vim.o.columns = columns - 20
    vim.api.nvim_exec_autocmds("VimResized", {})
    t.truthy(vim.api.nvim_win_get_width(ui.wins.preview) < width, "narrower with the editor")
    vim.o.columns = columns
    ui.close()
  end)

  it('layout = "left"/"right" and :BB7Split: a side chat beside the code, with files, preview and input', function()
    for _, side in ipairs({ "left", "right" }) do
      fake = env.reset({ initialized = true, setup = { layout = side } })
      fake:new_chat("side")
      local code_file = env.write("code.lua", { "local x = 1" })
      vim.cmd("edit " .. vim.fn.fnameescape(code_file))
      local code = vim.api.nvim_get_current_win()
      vim.ui.select = function(items, _, cb)
        cb(items[1])
      end
      env.cmd("BB7")
      local ui = require("bb7.ui")
      t.eq(side, ui.mode)
      t.eq(1, #vim.api.nvim_list_tabpages())
      t.truthy(vim.api.nvim_win_is_valid(code), "the code stays visible")
      t.eq(nil, ui.wins.chats)
      for _, pane in ipairs({ "files", "preview", "input" }) do
        t.eq("", vim.api.nvim_win_get_config(ui.wins[pane]).relative, pane .. " is a split")
      end
      local code_col = vim.api.nvim_win_get_position(code)[2]
      local chat_col = vim.api.nvim_win_get_position(ui.wins.preview)[2]
      t.truthy(side == "left" and chat_col < code_col or side == "right" and chat_col > code_col, side)
      t.eq(ui.wins.input, vim.api.nvim_get_current_win())
      feed("q")
      t.falsy(ui.is_open())
      t.eq({ code }, vim.api.nvim_tabpage_list_wins(0))
    end
    -- :BB7Split opens the side chat whatever the layout (here the tab one)
    fake = env.reset({ initialized = true })
    fake:new_chat("split side")
    fake.active = "0000000001"
    local code = vim.api.nvim_get_current_win()
    env.cmd("BB7Split")
    local ui = require("bb7.ui")
    t.eq("right", ui.mode)
    t.truthy(vim.api.nvim_win_is_valid(code))
    t.eq("split side", require("bb7.state").data.chat.name)
    -- :BB7 there closes it (as it closes the UI in any layout); again, it opens the options' layout
    env.cmd("BB7")
    t.falsy(ui.is_open())
    env.cmd("BB7")
    t.eq("tab", ui.mode)
    t.eq(2, #vim.api.nvim_list_tabpages())
  end)

  it("hunk-by-hunk review in the real buffer: accept one, reject one = a partial apply (real daemon)", function()
    local real = require("helpers.real")
    if not real.available() then
      print("skipped: BB7_BIN and FAKE_LLM not set")
      return
    end
    real.run(function()
      real.start({ { text = { "Capitalised." }, tool_calls = {
        { id = "c1", name = "write_file", arguments = { path = "notes.txt", content = "A\nb\nc\nd\nE\n" } },
        { id = "c2", name = "write_file", arguments = { path = "sub/new.txt", content = "fresh\nfile\n" } },
      } } })
      env.write("notes.txt", { "a", "b", "c", "d", "e" })
      env.cmd("BB7")
      require("bb7.actions").new_chat("review")
      env.settle()
      env.cmd("BB7Add notes.txt")
      require("bb7.ui.input").set_text("Capitalise the first and last line")
      require("bb7.ui").handlers.input.send()
      real.wait_stream_end()
      t.eq("M", require("bb7.actions.common").file_entry("notes.txt").status)
      -- from the files pane: <LocalLeader>h
      local ui = require("bb7.ui")
      ui.focus("files")
      for row, file in pairs(require("bb7.ui.files").rows) do
        if file.path == "notes.txt" then
          vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
        end
      end
      vim.g.maplocalleader = ","
      ui.handlers.files.review()
      env.settle()
      local review = require("bb7.review")
      t.truthy(review.active, "review running")
      local buf = vim.api.nvim_get_current_buf()
      t.eq(env.dir .. "/notes.txt", vim.api.nvim_buf_get_name(buf))
      t.eq(2, #review.active.hunks)
      local marks = vim.api.nvim_buf_get_extmarks(buf, review.ns, 0, -1, { details = true })
      local virt = {}
      for _, mark in ipairs(marks) do
        for _, line in ipairs(mark[4].virt_lines or {}) do
          table.insert(virt, line[1][1])
        end
      end
      t.eq({ "+ A", "+ E" }, virt, "the output's lines inline")
      t.eq(1, vim.api.nvim_win_get_cursor(0)[1], "on the first hunk")
      env.notes = {}
      feed(",a") -- accept the first
      t.eq({ "A", "b", "c", "d", "e" }, lines(buf))
      t.eq(5, vim.api.nvim_win_get_cursor(0)[1], "on to the next hunk")
      feed(",r") -- reject the last: the review ends
      env.settle()
      t.eq(nil, review.active)
      t.eq({ "A", "b", "c", "d", "e" }, vim.fn.readfile(env.dir .. "/notes.txt"))
      t.eq({ "INFO BB-7: Reviewed notes.txt: the accepted hunks are in the file, the rejected ones dropped with the output" }, env.messages())
      t.eq(0, #vim.api.nvim_buf_get_extmarks(buf, review.ns, 0, -1, {}), "marks gone")
      t.eq(0, #vim.tbl_filter(function(m)
        return m.lhs == ",a"
      end, vim.api.nvim_buf_get_keymap(buf, "n")), "keys gone")
      t.falsy(require("bb7.actions.common").file_entry("notes.txt").has_output, "the rejected hunk is gone")
      -- a new file (A), in a directory that does not exist yet
      env.notes = {}
      env.cmd("BB7Review sub/new.txt")
      t.eq(1, #review.active.hunks)
      feed(",a")
      env.settle()
      t.eq({ "fresh", "file" }, vim.fn.readfile(env.dir .. "/sub/new.txt"))
      t.eq({ "INFO BB-7: Applied sub/new.txt in full" }, env.messages())
      -- apply-all afterwards does not bring the rejected hunk back
      require("bb7.actions").apply_all()
      env.settle()
      t.eq({ "A", "b", "c", "d", "e" }, vim.fn.readfile(env.dir .. "/notes.txt"))
    end)
  end)

  it("completion in the input: @file (taking one adds it) and /commands, by <C-x><C-o>", function()
    env.write("src/a.lua", { "return 1" })
    env.write("src/b.lua", { "return 2" })
    env.write("README", { "read me" })
    env.write(".bb7/chats/x/context/src/a.lua", { "snapshot" })
    vim.fn.system({ "git", "-C", env.dir, "init", "-q" })
    env.cmd("BB7")
    require("bb7.actions").new_chat("complete")
    env.settle()
    local ui = require("bb7.ui")
    local input = require("bb7.ui.input")
    local complete = require("bb7.complete")
    t.eq("v:lua.require'bb7.complete'.omnifunc", vim.bo[input.buf()].omnifunc)
    ui.focus("input")
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "look at @src/a" })
    vim.api.nvim_win_set_cursor(0, { 1, #"look at @src/a" })
    t.eq(#"look at @", complete.omnifunc(1, ""))
    local words = vim.tbl_map(function(item)
      return item.word
    end, complete.omnifunc(0, "src/a"))
    t.eq({ "src/a.lua" }, words)
    -- <C-x><C-o> and taking the item: the file is added to the context
    feed("A<C-x><C-o><C-y><Esc>")
    env.settle()
    t.eq({ "look at @src/a.lua" }, lines(input.buf()))
    t.eq("src/a.lua", fake:sent("context_add")[1] and fake:sent("context_add")[1].path)
    -- /commands at the start of the message
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "/ef" })
    vim.api.nvim_win_set_cursor(0, { 1, 3 })
    t.eq(1, complete.omnifunc(1, ""))
    t.eq({ "effort " }, vim.tbl_map(function(item)
      return item.word
    end, complete.omnifunc(0, "ef")))
    -- a known /command runs instead of being sent; other text starting with / is sent
    input.set_text("/effort")
    ui.handlers.input.send()
    env.settle()
    t.eq(0, #fake:sent("send"))
    t.eq("low", require("bb7.state").data.reasoning_effort)
    t.eq("", input.text())
    input.set_text("/etc/hosts is wrong")
    ui.handlers.input.send()
    env.settle()
    t.eq("/etc/hosts is wrong", fake:sent("send")[1].content)
    t.truthy(table.concat(require("bb7.ui.help").lines("input"), "\n"):find("@file", 1, true), "? mentions it")
  end)

  it("completion sources for nvim-cmp and blink.cmp register only when those are loaded", function()
    t.falsy(require("bb7.complete.cmp").register(0), "no nvim-cmp: nothing registered")
    t.falsy(require("bb7.complete.blink").register(), "no blink.cmp: nothing registered")
    local cmp_source, cmp_sources, blink_provider
    package.loaded.cmp = {
      register_source = function(name, src)
        cmp_source = { name = name, src = src }
      end,
      setup = { buffer = function(cfg)
        cmp_sources = cfg.sources
      end },
    }
    package.loaded["blink.cmp"] = {
      add_source_provider = function(id, cfg)
        blink_provider = { id = id, cfg = cfg }
      end,
    }
    env.write("lib/x.lua", { "x" })
    env.cmd("BB7")
    require("bb7.actions").new_chat("sources")
    env.settle()
    t.eq("bb7", cmp_source and cmp_source.name)
    t.eq("bb7", cmp_sources[1].name)
    t.eq({ id = "bb7", cfg = { name = "bb7", module = "bb7.complete.blink" } }, blink_provider)
    -- nvim-cmp: items for "@li", and confirming one adds the file
    local got
    cmp_source.src:complete({ context = { cursor_before_line = "see @li", cursor = { row = 1 } } }, function(result)
      got = result.items
    end)
    t.eq("lib/x.lua", got[1].insertText)
    t.eq({ newText = "lib/x.lua", range = { start = { line = 0, character = 5 }, ["end"] = { line = 0, character = 7 } } }, got[1].textEdit)
    cmp_source.src:execute(got[1], function() end)
    env.settle()
    t.eq("lib/x.lua", fake:sent("context_add")[1].path)
    -- blink.cmp: /commands
    local blink = require("bb7.complete.blink").new()
    local items
    blink:get_completions({ line = "/mo", cursor = { 1, 3 } }, function(result)
      items = result.items
    end)
    t.eq("model ", items[1].insertText)
    t.eq({ line = 0, character = 1 }, items[1].textEdit.range.start, "after the /")
    package.loaded.cmp, package.loaded["blink.cmp"] = nil, nil
  end)

  it("a send refused while another reply runs keeps the typed text", function()
    fake.send_script = { { type = "chunk", content = "x" }, { hold = true } }
    env.cmd("BB7")
    require("bb7.actions").new_chat("busy")
    env.settle()
    local input = require("bb7.ui.input")
    local ui = require("bb7.ui")
    input.set_text("first")
    ui.handlers.input.send()
    t.eq("", input.text())
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "second, typed meanwhile" })
    env.notes = {}
    ui.handlers.input.send()
    t.eq({ "WARN BB-7: Another request is already in progress" }, env.messages())
    t.eq("second, typed meanwhile", input.text())
    require("bb7.actions").cancel()
    env.settle()
  end)

  it("a review refuses a buffer with unsaved changes, and a review runs one at a time", function()
    env.write("r.txt", { "one", "two" })
    env.cmd("BB7")
    require("bb7.actions").new_chat("refuse")
    env.settle()
    env.cmd("BB7Add r.txt")
    fake.send_script = {
      { type = "done", output_files = { "r.txt" }, usage = {}, write = { ["r.txt"] = "ONE\ntwo\n" } },
    }
    require("bb7.actions").send("caps")
    env.settle()
    vim.cmd("tabnew " .. vim.fn.fnameescape(env.dir .. "/r.txt"))
    vim.api.nvim_buf_set_lines(0, 0, 1, false, { "edited" })
    local tabs = #vim.api.nvim_list_tabpages()
    env.notes = {}
    env.cmd("BB7Review r.txt")
    t.eq({ "WARN BB-7: Save or undo the changes to r.txt first" }, env.messages())
    t.eq(tabs, #vim.api.nvim_list_tabpages())
    t.eq(nil, require("bb7.review").active)
    vim.cmd("silent write")
    env.cmd("BB7Review r.txt")
    t.truthy(require("bb7.review").active)
    env.notes = {}
    env.cmd("BB7Review r.txt")
    t.eq({ "WARN BB-7: A review is running (of r.txt): finish it first (<LocalLeader>q in its buffer, or :q its window)" }, env.messages())
    require("bb7.review").finish()
    env.settle()
  end)
end)
