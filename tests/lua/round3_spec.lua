-- The plugin's third round of bugs, each with a test that failed before its fix. The ones that
-- involve the daemon run against the real `bb7` with fake-llm (helpers.real) when BB7_BIN and
-- FAKE_LLM are set.
local t = require("helpers.assert")
local env = require("helpers.env")
local real = require("helpers.real")

local function new_chat(name)
  require("bb7.actions").new_chat(name)
  env.settle()
  return require("bb7.state").data.active_id
end

local function daemon_chat()
  local chat
  require("bb7.session").request("chat_get", {}, function(reply)
    chat = reply
  end)
  t.wait(function()
    return chat ~= nil
  end, "chat_get")
  return chat
end

local function user_texts(chat)
  local out = {}
  for _, message in ipairs(chat.messages or {}) do
    if message.role == "user" then
      table.insert(out, require("bb7.failed").text_of(message))
    end
  end
  return out
end

if real.available() then
  describe("with the real daemon", function()
    it("a message typed after moving another chat goes to the chat shown", function()
      real.run(function()
        real.start({ { text = { "answer" } } })
        env.cmd("BB7")
        local other = new_chat("other")
        local shown = new_chat("shown")
        require("bb7.actions").move_chat(other)
        env.settle()
        t.eq(shown, require("bb7.state").data.chat.id, "the UI still shows the chat it showed")
        require("bb7.ui.input").set_text("for the shown chat")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        local chat = daemon_chat()
        t.eq(shown, chat.id, "the daemon's active chat is the one shown")
        t.eq({ "for the shown chat" }, user_texts(chat))
        t.eq(shown, require("bb7.state").data.chat.id)
      end)
    end)

    it("moving the open chat to global follows it there with its pin", function()
      real.run(function()
        real.start({})
        env.cmd("BB7")
        local id = new_chat("pinned")
        require("bb7.actions").toggle_pin(id)
        env.settle()
        require("bb7.actions").move_chat(id)
        env.settle()
        local state = require("bb7.state")
        t.eq("global", state.data.scope)
        t.eq(id, state.data.chat.id)
        t.eq(true, state.data.chat.global)
        t.eq(id, state.data.chats[1] and state.data.chats[1].id)
        t.eq(true, state.data.chats[1].pinned)
        t.eq({}, require("bb7.pins").ids(env.dir))
      end)
    end)

    it("watch = true does not re-sync a saved edit of a file with a pending output", function()
      real.run(function()
        real.start({ { text = { "rewrite" }, tool_calls = { { id = "c1", name = "write_file", arguments = { path = "a.txt", content = "model\n" } } } } }, { watch = true })
        local abs = env.write("a.txt", { "original" })
        env.cmd("BB7")
        new_chat("watched")
        env.cmd("BB7Add a.txt")
        require("bb7.ui.input").set_text("change it")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        t.eq("M", require("bb7.actions.common").file_entry("a.txt").display_status)
        vim.cmd("tabnew " .. vim.fn.fnameescape(abs))
        vim.api.nvim_buf_set_lines(0, 0, -1, false, { "my saved edit" })
        env.notes = {}
        vim.cmd("silent write")
        env.settle()
        vim.wait(400, function()
          return false
        end)
        env.settle()
        t.eq("~M", require("bb7.actions.common").file_entry("a.txt").display_status)
        t.matches("Not re%-synced a%.txt: it has a pending output", env.messages()[1] or "")
        vim.ui.select = function(items, _, cb)
          cb(items[#items])
        end
        require("bb7.actions").apply_all()
        env.settle()
        t.eq({ "my saved edit" }, vim.fn.readfile(abs), "the saved edit is still on disk")
      end)
    end)

    it("the composer keeps text sent during a reply, and says it was not sent", function()
      real.run(function()
        real.start({ { text = { "slow ", "reply" }, delay_ms = 300 }, { text = { "two" } } })
        env.cmd("BB7")
        new_chat("composer")
        require("bb7.ui.input").set_text("first")
        require("bb7.ui").handlers.input.send()
        t.truthy(require("bb7.state").data.stream, "a reply runs")
        vim.cmd("BB7Split!") -- no settling: that would wait for the end of the reply
        local split = require("bb7.ui.split")
        t.truthy(split.win and vim.api.nvim_win_is_valid(split.win), "the composer opened")
        vim.api.nvim_buf_set_lines(split.buf, 0, -1, false, { "typed during the reply" })
        env.notes = {}
        split.send()
        t.truthy(require("bb7.state").data.stream, "still during the reply")
        t.eq({ "WARN BB-7: Not sent: a reply is running. Your text stays here; send it when the reply ends" }, env.messages())
        t.eq("typed during the reply", split.text())
        t.truthy(split.win and vim.api.nvim_win_is_valid(split.win), "the composer stays open")
        t.wait(function()
          return require("bb7.state").data.stream == nil
        end, "the end of the reply", 20000)
        env.settle()
        t.eq("typed during the reply", daemon_chat().draft, "kept as the chat's draft")
        t.eq({ "first" }, user_texts(daemon_chat()))
      end)
    end)

    it("the composer's text is the chat's draft, so :qa does not lose it", function()
      real.run(function()
        real.start({})
        env.cmd("BB7")
        new_chat("draft")
        env.cmd("BB7Split!")
        local split = require("bb7.ui.split")
        vim.api.nvim_buf_set_lines(split.buf, 0, -1, false, { "half a thought" })
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = split.buf })
        env.settle()
        t.eq("half a thought", daemon_chat().draft)
        t.eq("half a thought", require("bb7.ui.input").text(), "the input shows the same draft")
      end)
    end)

    it("edit-message over a draft says so and keeps the draft in the unnamed register", function()
      real.run(function()
        real.start({ { text = { "answer" } } })
        env.cmd("BB7")
        new_chat("edit")
        local input = require("bb7.ui.input")
        input.set_text("question")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        input.set_text("my unsent draft\nsecond line")
        vim.fn.setreg('"', "something else")
        local asked
        vim.ui.select = function(items, opts, cb)
          asked = opts.prompt
          cb(items[1])
        end
        require("bb7.ui").focus("preview")
        for row, line in ipairs(vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false)) do
          if line == "question" then
            vim.api.nvim_win_set_cursor(0, { row, 0 })
          end
        end
        env.notes = {}
        require("bb7.ui").handlers.preview.edit()
        env.settle()
        t.matches("Your draft in the input is replaced: it is kept in the unnamed register", asked or "")
        t.eq("question", input.text())
        t.eq("my unsent draft\nsecond line", vim.fn.getreg('"'))
        t.eq({ "INFO BB-7: Your draft is in the unnamed register: p pastes it" }, env.messages())
      end)
    end)

    it("a message starting with / runs only as a known command; a failing one keeps its text", function()
      real.run(function()
        real.start({ { text = { "one" } }, { text = { "two" } } })
        env.cmd("BB7")
        new_chat("slash")
        local input = require("bb7.ui.input")
        local send = require("bb7.ui").handlers.input.send
        input.set_text("/title: why is it slow")
        send()
        real.wait_stream_end()
        input.set_text("/help me with this")
        send()
        real.wait_stream_end()
        t.eq({ "/title: why is it slow", "/help me with this" }, user_texts(daemon_chat()))
        env.notes = {}
        input.set_text("/add tests for greet")
        send()
        env.settle()
        t.eq("/add tests for greet", input.text(), "the text stays")
        t.eq({ "ERROR BB-7: Cannot run /add: no such file or directory: tests for greet"
          .. require("bb7.slash").KEPT }, env.messages())
        t.eq({}, require("bb7.state").data.files)
      end)
    end)

    it("undo in the input does not bring back another chat's draft", function()
      real.run(function()
        real.start({})
        env.cmd("BB7")
        new_chat("first")
        local input = require("bb7.ui.input")
        local buf = input.buf()
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "draft of the first chat" })
        vim.bo[buf].undolevels = vim.bo[buf].undolevels -- an undo step ends, as leaving insert mode does
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = buf })
        env.settle()
        t.eq("draft of the first chat", daemon_chat().draft)
        new_chat("second")
        t.eq("", input.text())
        vim.api.nvim_buf_call(buf, function()
          vim.cmd("silent! undo")
        end)
        vim.api.nvim_exec_autocmds("TextChanged", { buffer = buf })
        env.settle()
        t.eq("", input.text(), "nothing to undo in this chat")
        t.eq("", daemon_chat().draft, "the second chat's draft stays empty")
      end)
    end)

    it(":BB7Init then :BB7NewChat at once makes a project chat", function()
      real.run(function()
        real.start({})
        require("bb7.session").stop()
        local dir = vim.fn.resolve(vim.fn.tempname())
        vim.fn.mkdir(dir, "p")
        vim.cmd("cd " .. vim.fn.fnameescape(dir))
        vim.cmd("BB7Init")
        vim.cmd("BB7NewChat quick")
        t.wait(function()
          return require("bb7.state").data.chat ~= nil
        end, "the new chat", 10000)
        env.settle()
        local state = require("bb7.state")
        t.falsy(state.data.chat.global, "not in the global store")
        t.eq(1, #vim.fn.glob(dir .. "/.bb7/chats/*/chat.json", false, true), "in the project's store")
        t.eq(true, state.data.initialized)
      end)
    end)

    it("a context file deleted locally shows ~ and (missing)", function()
      real.run(function()
        real.start({})
        local abs = env.write("gone.txt", { "here" })
        env.cmd("BB7")
        new_chat("missing")
        env.cmd("BB7Add gone.txt")
        t.eq("", require("bb7.actions.common").file_entry("gone.txt").display_status)
        os.remove(abs)
        require("bb7.actions").refresh_files()
        env.settle()
        t.eq("~", require("bb7.actions.common").file_entry("gone.txt").display_status)
        local shown = vim.api.nvim_buf_get_lines(require("bb7.ui.files").buf(), 0, -1, false)
        t.matches("^~   gone%.txt  %(missing%)", shown[1] or "")
      end)
    end)

    it("many single adds reload the chat once for the burst, not once each", function()
      real.run(function()
        real.start({})
        env.cmd("BB7")
        new_chat("many")
        for i = 1, 40 do
          env.write(string.format("f%02d.txt", i), { "file " .. i })
        end
        local session = require("bb7.session")
        local request, loads = session.request, 0
        session.request = function(action, ...)
          if action == "chat_get" then
            loads = loads + 1
          end
          return request(action, ...)
        end
        for i = 1, 40 do
          vim.cmd(string.format("BB7Add f%02d.txt", i))
        end
        t.wait(function()
          return #require("bb7.state").data.files == 40
        end, "all 40 files listed", 10000)
        env.settle()
        session.request = request
        t.truthy(loads <= 2, "chat reloads: " .. loads)
        t.eq(40, #vim.tbl_filter(function(line)
          return line:match("f%d%d%.txt") ~= nil
        end, vim.api.nvim_buf_get_lines(require("bb7.ui.files").buf(), 0, -1, false)))
      end)
    end)

    it("hunks rejected in a review finished early stay rejected: apply all skips, the next review keeps them", function()
      real.run(function()
        real.start({ { text = { "edit" }, tool_calls = { { id = "c1", name = "write_file", arguments = { path = "h.txt", content = "A\nb\nC\nd\nE\n" } } } } })
        env.write("h.txt", { "a", "b", "c", "d", "e" })
        env.cmd("BB7")
        new_chat("early")
        env.cmd("BB7Add h.txt")
        require("bb7.ui.input").set_text("capitalise")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        local review = require("bb7.review")
        env.cmd("BB7Review h.txt")
        t.eq(3, #review.active.hunks)
        review.reject() -- a stays
        review.accept() -- C taken
        t.eq(1, #review.active.hunks, "E undecided")
        env.notes = {}
        review.finish()
        env.settle()
        t.eq({ "a", "b", "C", "d", "e" }, vim.fn.readfile(env.dir .. "/h.txt"))
        t.truthy(vim.tbl_contains(env.messages(), "WARN BB-7: The hunks of h.txt you rejected are remembered: apply all"
          .. " skips the file, and its next review starts with them rejected"), vim.inspect(env.messages()))
        env.notes = {}
        require("bb7.actions").apply_all()
        env.settle()
        t.eq({ "a", "b", "C", "d", "e" }, vim.fn.readfile(env.dir .. "/h.txt"), "the rejected hunk is not written")
        t.matches("^WARN BB%-7: Skipped 1 file with hunks you rejected in a review: h%.txt", env.messages()[1] or "")
        local asked
        vim.ui.select = function(items, opts, cb)
          asked = opts.prompt
          cb(items[#items]) -- Cancel
        end
        require("bb7.actions").apply("h.txt")
        env.settle()
        t.matches("you rejected hunks of h%.txt in a review", asked or "")
        t.eq({ "a", "b", "C", "d", "e" }, vim.fn.readfile(env.dir .. "/h.txt"))
        -- the next review: only E is open
        env.cmd("BB7Review h.txt")
        t.eq(1, #review.active.hunks)
        review.accept()
        env.settle()
        t.eq(nil, review.active)
        t.eq({ "a", "b", "C", "d", "E" }, vim.fn.readfile(env.dir .. "/h.txt"))
        t.falsy(require("bb7.actions.common").file_entry("h.txt").has_output, "every hunk decided: the output is done")
      end)
    end)

    it("a review started from the files pane shows its sign column, names the way out, and closes its tab", function()
      real.run(function()
        real.start({ { text = { "edit" }, tool_calls = { { id = "c1", name = "write_file", arguments = { path = "r.txt", content = "A\nb\nC\n" } } } } })
        env.write("r.txt", { "a", "b", "c" })
        env.cmd("BB7")
        new_chat("review")
        env.cmd("BB7Add r.txt")
        require("bb7.ui.input").set_text("capitalise")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        local ui = require("bb7.ui")
        local function review_from_files()
          ui.focus("files")
          for row, file in pairs(require("bb7.ui.files").rows) do
            if file.path == "r.txt" then
              vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
            end
          end
          ui.handlers.files.review()
          env.settle()
        end
        local tabs = #vim.api.nvim_list_tabpages()
        review_from_files()
        local review = require("bb7.review")
        t.truthy(review.active, "review running")
        local win = vim.api.nvim_get_current_win()
        t.eq("yes", vim.wo[win].signcolumn)
        t.eq(vim.go.number, vim.wo[win].number, "the user's own 'number'")
        t.matches("finish ends it", vim.wo[win].winbar)
        -- :q in the review's window finishes it, so the next review can start
        review.accept()
        t.truthy(review.active, "one hunk left")
        vim.cmd("quit")
        vim.wait(200, function()
          return review.active == nil
        end)
        env.settle()
        t.eq(nil, review.active)
        t.eq({ "A", "b", "c" }, vim.fn.readfile(env.dir .. "/r.txt"), "what was accepted is written")
        t.eq(tabs, #vim.api.nvim_list_tabpages())
        -- the hunk left: rejected, the review ends and its tab closes
        review_from_files()
        t.truthy(review.active, "reviewing again")
        review.reject()
        env.settle()
        t.eq(nil, review.active)
        t.eq(tabs, #vim.api.nvim_list_tabpages(), "the review's tab closed")
        t.eq({ "A", "b", "c" }, vim.fn.readfile(env.dir .. "/r.txt"))
      end)
    end)

    it("the preview says the model modified a file or added a new one", function()
      real.run(function()
        real.start({ { text = { "done" }, tool_calls = {
          { id = "c1", name = "write_file", arguments = { path = "old.txt", content = "changed\n" } },
          { id = "c2", name = "write_file", arguments = { path = "new.txt", content = "fresh\n" } },
        } } })
        env.write("old.txt", { "old" })
        env.cmd("BB7")
        new_chat("events")
        env.cmd("BB7Add old.txt")
        require("bb7.ui.input").set_text("edit")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        local shown = vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false)
        t.truthy(vim.tbl_contains(shown, "● modified old.txt"), vim.inspect(shown))
        t.truthy(vim.tbl_contains(shown, "● added new.txt (new file)"), vim.inspect(shown))
      end)
    end)

    it("deleting the active chat clears its token estimate", function()
      real.run(function()
        real.start({ { text = { "an answer" } } })
        env.write("big.txt", { string.rep("word ", 400) })
        env.cmd("BB7")
        local id = new_chat("estimate")
        env.cmd("BB7Add big.txt")
        t.truthy(require("bb7.state").data.estimate, "an estimate")
        require("bb7.actions").delete_chat(id)
        env.settle()
        t.eq(nil, require("bb7.state").data.estimate)
        t.truthy(vim.tbl_contains(vim.api.nvim_buf_get_lines(require("bb7.ui.info").buf(), 0, -1, false), "Context -"))
      end)
    end)

    it(":qa during a reply keeps the text typed in the composer meanwhile", function()
      real.run(function()
        real.start({ { text = { "slow ", "reply" }, delay_ms = 500 } })
        env.cmd("BB7")
        local id = new_chat("quit")
        require("bb7.ui.input").set_text("first")
        require("bb7.ui").handlers.input.send()
        vim.cmd("BB7Split!")
        local split = require("bb7.ui.split")
        vim.api.nvim_buf_set_lines(split.buf, 0, -1, false, { "typed before :qa" })
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = split.buf })
        t.truthy(require("bb7.state").data.stream, "the reply still runs")
        vim.api.nvim_exec_autocmds("VimLeavePre", {})
        t.falsy(require("bb7.session").client, "the daemon stopped")
        local draft
        require("bb7.session").ensure(function()
          require("bb7.session").request("chat_select", { id = id }, function()
            require("bb7.session").request("chat_get", {}, function(reply)
              draft = reply.draft
            end)
          end)
        end)
        t.wait(function()
          return draft ~= nil
        end, "the chat from a new daemon", 10000)
        t.eq("typed before :qa", draft)
      end)
    end)

    it("a draft over 1 MiB is kept and comes back with its chat", function()
      real.run(function()
        real.start({})
        env.cmd("BB7")
        local id = new_chat("long")
        local input = require("bb7.ui.input")
        local big = {}
        for i = 1, 20000 do
          big[i] = string.format("%05d %s", i, string.rep("x", 60))
        end
        vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, big)
        env.notes = {}
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
        env.settle()
        t.eq({ "WARN BB-7: The draft is over the daemon's 1 MiB: kept in " .. require("bb7.bigdraft").path(id)
          .. " (shorten it to send it)" }, env.messages())
        -- Neovim restarted: a new daemon, the chat loaded again
        require("bb7.session").stop()
        input.set_text("")
        require("bb7.session").ensure(function()
          require("bb7.actions").select_chat(id)
        end)
        t.wait(function()
          return #vim.api.nvim_buf_get_lines(input.buf(), 0, -1, false) == 20000
        end, "the long draft back in the input", 10000)
        t.eq(table.concat(big, "\n"), input.text())
        -- shortened: the daemon has it again, the file is gone
        vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "short now" })
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
        env.settle()
        t.eq("short now", daemon_chat().draft)
        t.eq(0, vim.fn.filereadable(require("bb7.bigdraft").path(id)))
      end)
    end)

    it("the notice of a reply lost with the daemon stays after the restart", function()
      real.run(function()
        real.start({ { text = { "slow ", "reply ", "that ", "does ", "not ", "end" }, delay_ms = 400 }, { text = { "after" } } })
        env.cmd("BB7")
        new_chat("killed")
        require("bb7.ui.input").set_text("the question")
        require("bb7.ui").handlers.input.send()
        local offered
        vim.ui.select = function(items, _, cb)
          offered = items
          cb("Leave it stopped")
        end
        vim.uv.kill(require("bb7.session").client.handle.pid, "sigkill")
        t.wait(function()
          return offered ~= nil
        end, "restart offer", 10000)
        env.settle()
        env.cmd("BB7")
        env.cmd("BB7")
        t.wait(function()
          return require("bb7.state").data.ready and require("bb7.state").data.chat ~= nil
        end, "restarted")
        env.settle()
        local shown = table.concat(vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false), "\n")
        t.matches("The bb7 daemon stopped during the reply: what arrived is not saved%.$", shown)
        -- the next send starts over
        require("bb7.ui.input").set_text("again")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        shown = table.concat(vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false), "\n")
        t.falsy(shown:find("daemon stopped", 1, true), "gone after the next reply")
      end)
    end)
  end)
end
