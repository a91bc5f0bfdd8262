-- One test per bug the plugin's review found, each failing before its fix. The ones
-- that involve the daemon run against the real `bb7` with fake-llm (helpers.real) when
-- BB7_BIN and FAKE_LLM are set; the rest use the fake daemon, which refuses state changes
-- while a send streams as the real one does.
local t = require("helpers.assert")
local env = require("helpers.env")
local real = require("helpers.real")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function daemon_draft()
  local draft
  require("bb7.session").request("chat_get", {}, function(reply)
    draft = reply.draft
  end)
  t.wait(function()
    return draft ~= nil
  end, "chat_get")
  return draft
end

local function leave_insert()
  vim.api.nvim_exec_autocmds("InsertLeave", { buffer = require("bb7.ui.input").buf() })
  env.settle()
end

local function new_chat()
  env.cmd("BB7")
  require("bb7.actions").new_chat("bugs")
  env.settle()
end

if real.available() then
  describe("with the real daemon", function()
    it("1: the sent message does not come back, and text typed during the reply is kept", function()
      real.run(function()
        real.start({ { text = { "one" } }, { text = { "slow ", "reply ", "two" }, delay_ms = 150 } })
        new_chat()
        local input = require("bb7.ui.input")
        input.set_text("first message")
        input.saved = ""
        leave_insert() -- the draft is saved while nothing streams
        t.eq("first message", daemon_draft())
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        t.eq("", input.text(), "the sent text does not reappear")
        t.eq("", daemon_draft())

        input.set_text("second")
        require("bb7.ui").handlers.input.send()
        t.truthy(require("bb7.state").data.stream)
        vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "typed during the reply" }) -- as typing does
        -- leaving insert mode saves the draft; the daemon refuses save_draft now
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
        real.wait_stream_end()
        t.eq("typed during the reply", input.text())
        t.eq("typed during the reply", daemon_draft())
        t.eq({}, vim.tbl_filter(function(m)
          return m:find("ERROR", 1, true) ~= nil
        end, env.messages()))
      end)
    end)

    it("4: forking a global chat inside a project, and <C-r> with the other store shown", function()
      real.run(function()
        real.start({ { text = { "answer" } } })
        env.cmd("BB7")
        require("bb7.actions").switch_scope()
        env.settle()
        require("bb7.actions").new_chat("global one")
        env.settle()
        t.eq(true, require("bb7.state").data.chat.global)
        require("bb7.ui.input").set_text("a question")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        local original = require("bb7.state").data.active_id
        env.notes = {}
        require("bb7.actions").fork(0)
        env.settle()
        t.eq("INFO BB-7: Forked chat", env.messages()[1], vim.inspect(env.messages()))
        t.neq(original, require("bb7.state").data.active_id)
        t.eq(true, require("bb7.state").data.chat.global)
        -- the project's chats shown, the active chat global: <C-r> still finds it
        require("bb7.actions").switch_scope()
        env.settle()
        env.notes = {}
        require("bb7.ui.nav").new_with_context()
        env.settle()
        t.eq({ "INFO BB-7: New chat with the context files of the last one" }, env.messages())
        t.eq(true, require("bb7.state").data.chat.global)
      end)
    end)

    it("6: apply asks before overwriting saved local edits of a ~M file", function()
      real.run(function()
        real.start({ { text = { "rewrite" }, tool_calls = { { id = "c1", name = "write_file", arguments = { path = "a.txt", content = "model\n" } } } } })
        env.write("a.txt", { "original" })
        new_chat()
        env.cmd("BB7Add a.txt")
        require("bb7.ui.input").set_text("change it")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        env.write("a.txt", { "my saved edit" })
        require("bb7.actions").refresh_files()
        env.settle()
        t.eq("~M", require("bb7.actions.common").file_entry("a.txt").display_status)
        local asked
        vim.ui.select = function(items, opts, cb)
          asked = opts.prompt
          cb(items[#items]) -- Cancel
        end
        env.notes = {}
        require("bb7.actions").apply("a.txt")
        env.settle()
        t.matches("a%.txt changed locally", asked or "")
        t.eq({ "my saved edit" }, vim.fn.readfile(env.dir .. "/a.txt"))
        t.eq({ "INFO BB-7: Apply cancelled" }, env.messages())
        -- apply all skips it and says so
        env.notes = {}
        require("bb7.actions").apply_all()
        env.settle()
        t.eq({ "my saved edit" }, vim.fn.readfile(env.dir .. "/a.txt"))
        t.matches("changed locally", env.messages()[1])
      end)
    end)

    it("13: :BB7DiffLocal keeps the output read-only, saves the local side and reports the outcome", function()
      real.run(function()
        real.start({ { text = { "rewrite" }, tool_calls = { { id = "c1", name = "write_file", arguments = { path = "a.txt", content = "one\ntwo\n" } } } } })
        env.write("a.txt", { "one" })
        new_chat()
        env.cmd("BB7Add a.txt")
        require("bb7.ui.input").set_text("add a line")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        env.notes = {}
        require("bb7.actions").diff_local("a.txt")
        env.settle()
        local wins = vim.api.nvim_tabpage_list_wins(0)
        t.eq(2, #wins)
        local local_buf, output_buf
        for _, win in ipairs(wins) do
          local buf = vim.api.nvim_win_get_buf(win)
          if vim.api.nvim_buf_get_name(buf) == env.dir .. "/a.txt" then
            local_buf = buf
          else
            output_buf = buf
          end
        end
        t.falsy(vim.bo[output_buf].modifiable, "the output side is read-only")
        -- take the whole output into the local buffer, leave it unsaved, close the tab
        vim.api.nvim_buf_set_lines(local_buf, 0, -1, false, { "one", "two" })
        vim.cmd("tabclose")
        env.settle()
        t.eq({ "one", "two" }, vim.fn.readfile(env.dir .. "/a.txt"), "saved on close")
        t.eq({ "INFO BB-7: Applied a.txt in full" }, env.messages())
      end)
    end)
  end)
end

describe("with the fake daemon", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it("1: the fake refuses save_draft while a send streams, like bb7", function()
    fake.send_script = { { type = "chunk", content = "Hi" }, { hold = true } }
    new_chat()
    require("bb7.ui.input").set_text("q")
    require("bb7.ui").handlers.input.send()
    env.settle()
    local replied
    require("bb7.session").request("save_draft", { draft = "x" }, function(reply)
      replied = reply
    end)
    t.wait(function()
      return replied ~= nil
    end)
    t.eq("Another request is already in progress", replied.message)
    require("bb7.actions").cancel()
    env.settle()
  end)

  it("2 and 9: the defaults leave <C-e>, e, ge, gm and insert <C-c> to Vim", function()
    new_chat()
    local function mapped(buf, mode, lhs)
      for _, map in ipairs(vim.api.nvim_buf_get_keymap(buf, mode)) do
        if map.lhs == lhs then
          return true
        end
      end
      return false
    end
    local preview, input = require("bb7.ui.preview").buf(), require("bb7.ui.input").buf()
    t.falsy(mapped(preview, "n", "<C-E>"))
    t.falsy(mapped(preview, "n", "e"))
    t.falsy(mapped(input, "n", "ge"))
    t.falsy(mapped(input, "n", "gm"))
    t.falsy(mapped(input, "i", "<C-C>"))
  end)

  it("2: edit asks before cutting the chat", function()
    fake.send_script = { { type = "chunk", content = "Hi" }, { type = "done", output_files = {}, usage = {} } }
    new_chat()
    require("bb7.ui.input").set_text("question")
    require("bb7.ui").handlers.input.send()
    env.settle()
    local asked
    vim.ui.select = function(items, opts, cb)
      asked = opts.prompt
      cb(items[2])
    end
    require("bb7.ui").focus("preview")
    for row, line in ipairs(lines(require("bb7.ui.preview").buf())) do
      if line == "question" then
        vim.api.nvim_win_set_cursor(0, { row, 0 })
      end
    end
    require("bb7.ui").handlers.preview.edit()
    env.settle()
    t.truthy(asked, "asked")
    t.eq(0, #fake:sent("chat_edit"))
  end)

  it("3: :BB7Add a.c adds a.c, not the loaded a.cpp", function()
    new_chat()
    env.write("a.c", { "c file" })
    env.write("a.cpp", { "cpp file" })
    vim.cmd("tabnew " .. vim.fn.fnameescape(env.dir .. "/a.cpp"))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "cpp buffer" })
    env.cmd("BB7Add a.c")
    local req = fake:sent("context_add")[1]
    t.eq("a.c", req.path)
    t.eq("c file\n", req.content)
  end)

  it("5: a window-local directory does not switch the project", function()
    new_chat()
    local active = require("bb7.state").data.active_id
    vim.fn.mkdir(env.dir .. "/src", "p")
    env.write("src/x.c", { "x" })
    vim.cmd("lcd src")
    env.cmd("BB7Add x.c")
    t.eq(env.dir, require("bb7.state").data.root)
    t.eq(active, require("bb7.state").data.active_id)
    t.eq(1, #fake:sent("init"), "no second init")
    vim.cmd("cd " .. vim.fn.fnameescape(env.dir))
  end)

  it("8: the first plugin's statusline API in bb7.status", function()
    local status = require("bb7.status")
    t.eq("", status.status())
    t.eq(nil, status.status_hl())
    require("bb7").setup({ status = { streaming = { highlight = "#50fa7b" } } })
    fake.send_script = { { type = "chunk", content = "Hi" }, { hold = true } }
    new_chat()
    require("bb7.ui.input").set_text("q")
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq("streaming", status.raw_status())
    t.eq("BB7StatusStreaming", status.status_hl())
    t.eq(tonumber("50fa7b", 16), vim.api.nvim_get_hl(0, { name = "BB7StatusStreaming" }).fg)
    require("bb7.actions").cancel()
    env.settle()
  end)

  it("10: edits of buffers outside the context do not recompute statuses; the autocmd goes with the UI", function()
    new_chat()
    local calls = 0
    local status = require("bb7.status")
    local real_compute = status.compute_all
    status.compute_all = function(...)
      calls = calls + 1
      return real_compute(...)
    end
    vim.cmd("tabnew " .. vim.fn.fnameescape(env.write("other.txt", { "x" })))
    for _ = 1, 5 do
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { "y" })
      vim.api.nvim_exec_autocmds("TextChanged", { buffer = 0 })
    end
    vim.wait(300, function()
      return false
    end)
    t.eq(0, calls)
    require("bb7.ui").close()
    t.eq(0, #vim.api.nvim_get_autocmds({ event = "TextChanged", group = nil, pattern = nil }) - #vim.tbl_filter(function(a)
      return a.group_name ~= "bb7-local-files"
    end, vim.api.nvim_get_autocmds({ event = "TextChanged" })))
  end)

  it("11: a failed cancel does not leave the send lock set", function()
    fake.send_script = { { type = "chunk", content = "Hi" }, { hold = true } }
    new_chat()
    require("bb7.ui.input").set_text("q")
    require("bb7.ui").handlers.input.send()
    env.settle()
    fake.streaming = nil -- the daemon lost the stream (its end never comes)
    require("bb7.actions").cancel()
    env.settle()
    t.falsy(require("bb7.state").data.stream)
    fake.send_script = nil
    require("bb7.ui.input").set_text("again")
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq(2, #fake:sent("send"))
  end)

  it("12: the preview follows a :BB7Split reply when the tab opens only later", function()
    fake.send_script = { { type = "chunk", content = "Hello from split" }, { hold = true } }
    -- the tab never opened before this send
    require("bb7.session").ensure(function()
      require("bb7.actions").new_chat("split")
    end)
    env.settle()
    t.falsy(require("bb7.ui").is_open())
    env.cmd("BB7Split!")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "hi" })
    require("bb7.ui.split").send()
    env.settle()
    env.cmd("BB7")
    local shown = table.concat(lines(require("bb7.ui.preview").buf()), "\n")
    t.matches("Hello from split", shown)
    require("bb7.actions").cancel()
    env.settle()
  end)
end)
