-- Found by trying the plugin in a terminal as a user would (a fresh HOME, a git project, the
-- real daemon and fake-llm): each test failed before its fix.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- Active chat "c" with the bb7 tab open.
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

describe("the tab line", function()
  it("shows the pane's buffer name whole (it showed b//chats)", function()
    setup()
    local ui = require("bb7.ui")
    for _, pane in ipairs({ "chats", "files", "info", "preview", "input" }) do
      local name = vim.fn.bufname(vim.api.nvim_win_get_buf(ui.wins[pane]))
      t.eq("bb7:" .. pane, name)
      -- the default tab line shortens a name as pathshorten() does
      t.eq(name, vim.fn.pathshorten(name), pane)
    end
    -- the floats over the tab are named too (else "[Scratch]")
    local _, help_buf = require("bb7.ui.help").show("input")
    t.eq("bb7:keys", vim.fn.bufname(help_buf))
  end)
end)

describe("the model picker", function()
  it("closes its windows on <CR> and on q (they stayed on screen)", function()
    setup()
    local picker = require("bb7.ui.model_picker")
    local before = #vim.api.nvim_tabpage_list_wins(0)
    for _, key in ipairs({ "<CR>", "q" }) do
      env.cmd("BB7Model")
      t.truthy(picker.state, "open")
      t.eq(before + 2, #vim.api.nvim_tabpage_list_wins(0), "the list and the details")
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(key, true, false, true), "x", false)
      env.settle()
      t.eq(nil, picker.state)
      t.eq(before, #vim.api.nvim_tabpage_list_wins(0), key .. " closes both windows")
    end
  end)
end)

describe("n in the chats pane", function()
  it("creates the chat, says so and puts you in the input in insert mode", function()
    setup()
    local ui = require("bb7.ui")
    ui.focus("chats")
    vim.ui.input = function(_, cb)
      cb("fresh")
    end
    ui.handlers.chats.new()
    env.settle()
    t.eq("fresh", require("bb7.state").data.chat.name)
    t.eq({ "INFO BB-7: Created: fresh" }, env.messages())
    t.eq(ui.wins.input, vim.api.nvim_get_current_win(), "the input has the focus")
    vim.cmd("stopinsert")
  end)

  it("the new chat shows no usage line of the chat before it", function()
    local fake = setup()
    fake.send_script = {
      { type = "chunk", content = "Answer." },
      { type = "done", usage = { prompt_tokens = 1200, completion_tokens = 40, cost = 0.002 } },
    }
    require("bb7.actions").send("question")
    env.settle()
    local preview = require("bb7.ui.preview")
    t.truthy(vim.tbl_contains(lines(preview.buf()), "1.2k in · 40 out · $0.0020"), vim.inspect(lines(preview.buf())))
    require("bb7.actions").new_chat("empty")
    env.settle()
    t.eq("empty", require("bb7.state").data.chat.name)
    for _, line in ipairs(lines(preview.buf())) do
      t.falsy(line:find("1.2k in", 1, true), "stale usage: " .. line)
    end
  end)
end)

describe(":BB7Add of a file bb7 cannot take", function()
  local function write_bytes(rel, bytes)
    local abs = env.dir .. "/" .. rel
    local file = assert(io.open(abs, "wb"))
    file:write(bytes)
    file:close()
  end

  it("refuses a binary file (it was added as mojibake and showed ~ for ever)", function()
    local fake = setup()
    write_bytes("blob.bin", "PK\3\4\0\0\255\254 binary")
    env.cmd("BB7Add blob.bin")
    t.eq({ "ERROR BB-7: Cannot add blob.bin: binary file" }, env.messages())
    t.eq(0, #fake:sent("context_add"))
  end)

  it("refuses a file over 1 MiB with its size (the daemon's error answered no request)", function()
    local fake = setup()
    write_bytes("big.txt", string.rep(string.rep("x", 99) .. "\n", 12000))
    env.cmd("BB7Add big.txt")
    t.eq({ "ERROR BB-7: Cannot add big.txt: 1.1 MiB, over the 1 MiB limit" }, env.messages())
    t.eq(0, #fake:sent("context_add"))
  end)

  it("a request over the daemon's 1 MiB line limit is refused before it is written", function()
    local fake = setup()
    local n = #fake.requests
    local reply
    local id = require("bb7.session").request("context_update", { path = "a.txt", content = string.rep("\"", 600 * 1024) }, function(msg)
      reply = msg
    end)
    t.eq(nil, id)
    t.eq("error", reply.type)
    t.matches("^Request too large", reply.message)
    t.eq(n, #fake.requests, "nothing written")
    t.eq(nil, next(require("bb7.session").client.pending), "nothing left waiting")
  end)

  it("a message over the limit is not sent and stays in the input", function()
    setup()
    local input = require("bb7.ui.input")
    local text = string.rep("long message ", 90000)
    input.set_text(text)
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq(text, input.text())
    t.eq(nil, require("bb7.state").data.stream)
    t.truthy(vim.tbl_contains(env.messages(), "ERROR BB-7: Failed to send: Request too large (max 1 MiB). Reduce context size or split the request."), vim.inspect(env.messages()))
  end)
end)

describe("the preview of a long chat", function()
  local function long_chat(fake, name)
    local id = fake:new_chat(name)
    for i = 1, 30 do
      table.insert(fake.chats[id].messages, { role = "user", parts = { { type = "text", content = "question " .. i } } })
      table.insert(fake.chats[id].messages, { role = "assistant", parts = { { type = "text", content = "answer " .. i } } })
    end
    return id
  end

  local function bottom_shown(win)
    local buf = vim.api.nvim_win_get_buf(win)
    return vim.api.nvim_win_call(win, function()
      return vim.fn.line("w$")
    end) == vim.api.nvim_buf_line_count(buf)
  end

  it("opens on its newest messages, and a send shows itself wherever the preview was scrolled", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake.active = long_chat(fake, "long")
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    local ui = require("bb7.ui")
    local win = ui.wins.preview
    t.truthy(bottom_shown(win), "the chat opens at its end")
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    fake.send_script = { { type = "chunk", content = "the reply" }, { type = "done", usage = {} } }
    require("bb7.ui.input").set_text("new question")
    ui.handlers.input.send()
    env.settle()
    t.truthy(bottom_shown(win), "the reply is in view")
    local last = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
    t.truthy(vim.tbl_contains(last, "the reply"), vim.inspect(last))

    -- another chat opens at its end too; the same chat keeps the place you scrolled to
    ui.focus("preview")
    vim.api.nvim_win_set_cursor(win, { 3, 0 })
    require("bb7.actions").load_chat()
    env.settle()
    t.eq(3, vim.api.nvim_win_get_cursor(win)[1], "a reload of the same chat leaves the cursor")
    local other = long_chat(fake, "other")
    require("bb7.actions").select_chat(other)
    env.settle()
    t.truthy(bottom_shown(win), "the other chat opens at its end")
  end)
end)

describe("resizing Neovim", function()
  it("gives the input and files panes their heights back and fits the key hints", function()
    setup()
    local ui = require("bb7.ui")
    local layout = require("bb7.config").options.layout
    local lines, columns = vim.o.lines, vim.o.columns
    vim.o.lines, vim.o.columns = 24, 90
    vim.api.nvim_exec_autocmds("VimResized", {})
    vim.o.lines, vim.o.columns = 60, 180
    vim.api.nvim_exec_autocmds("VimResized", {})
    t.eq(layout.input_height, vim.api.nvim_win_get_height(ui.wins.input))
    t.eq(layout.files_height, vim.api.nvim_win_get_height(ui.wins.files))
    t.eq(layout.sidebar_width, vim.api.nvim_win_get_width(ui.wins.chats))
    local hint = vim.wo[ui.wins.preview].statusline
    t.eq(require("bb7.ui.help").hint("preview", vim.api.nvim_win_get_width(ui.wins.preview)), hint, "made for the new width")
    local shown = vim.api.nvim_eval_statusline(hint, { winid = ui.wins.preview }).str
    t.matches("%? keys$", shown, "the hint is whole")
    vim.o.lines, vim.o.columns = lines, columns
  end)
end)

describe(":BB7Init with the bb7 tab open", function()
  it("shows the project at once (the panes kept saying \"Global chats only\")", function()
    local fake = env.reset()
    fake:new_chat("a global chat", true)
    vim.ui.select = function(_, _, cb)
      cb(nil) -- no chat picked: the tab opens without one
    end
    env.cmd("BB7")
    local info = require("bb7.ui.info")
    t.truthy(vim.tbl_contains(lines(info.buf()), "Global chats only (no .bb7/ here)"), vim.inspect(lines(info.buf())))
    env.cmd("BB7Init")
    env.settle()
    t.falsy(vim.tbl_contains(lines(info.buf()), "Global chats only (no .bb7/ here)"), vim.inspect(lines(info.buf())))
    t.eq({ "  No chats yet: press n" }, lines(require("bb7.ui.chats").buf()), "the project's chats")
  end)
end)

local real = require("helpers.real")
if real.available() then
  describe("a failed send (real daemon)", function()
    it("keeps the keys to re-ask or delete it under it after the chat is loaded again", function()
      real.run(function()
        real.start({ { text = { "x" }, fault = { kind = "status", status = 401 } } })
        env.cmd("BB7")
        require("bb7.actions").new_chat("failing")
        env.settle()
        require("bb7.ui.input").set_text("a question")
        require("bb7.ui").handlers.input.send()
        real.wait_stream_end()
        env.settle()
        local shown = lines(require("bb7.ui.preview").buf())
        t.matches("^%[error: auth%]", shown[#shown - 1], vim.inspect(shown))
        t.eq("Press <LocalLeader>a on it to re-ask, d to delete it.", shown[#shown])
      end)
    end)
  end)

  describe("the daemon killed during a reply (real daemon)", function()
    it("keeps the text typed meanwhile, says it once and offers the restart", function()
      real.run(function()
        real.start({ { text = { "slow ", "reply ", "that ", "does ", "not ", "end" }, delay_ms = 400 }, { text = { "after" } } })
        env.cmd("BB7")
        require("bb7.actions").new_chat("killed")
        env.settle()
        local ui = require("bb7.ui")
        local input = require("bb7.ui.input")
        input.set_text("the question")
        ui.handlers.input.send()
        t.truthy(require("bb7.state").data.stream, "streaming")
        vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "typed during the reply" })
        local offered
        vim.ui.select = function(items, _, cb)
          offered = items
          cb("Leave it stopped")
        end
        vim.uv.kill(require("bb7.session").client.handle.pid, "sigkill")
        t.wait(function()
          return offered ~= nil
        end, "restart offer", 10000)
        -- leaving the input saves the draft: the daemon is gone, so it waits
        vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
        env.settle()
        t.eq({ "ERROR BB-7: Daemon exited (code 0, signal 9)" }, vim.tbl_filter(function(m)
          return m:find("^ERROR") ~= nil
        end, env.messages()), "one error, not one per failed step")
        local shown = table.concat(lines(require("bb7.ui.preview").buf()), "\n")
        t.matches("The bb7 daemon stopped during the reply", shown)
        t.falsy(shown:find("re%-ask"), "no re-ask of a message the daemon never marked failed")

        -- the tab opened again starts the daemon again: the typed text is still there
        env.cmd("BB7")
        env.cmd("BB7")
        t.wait(function()
          return require("bb7.state").data.ready and require("bb7.state").data.chat ~= nil
        end, "restarted")
        env.settle()
        t.eq("typed during the reply", input.text())
        local draft
        require("bb7.session").request("chat_get", {}, function(reply)
          draft = reply.draft
        end)
        t.wait(function()
          return draft ~= nil
        end, "chat_get")
        t.eq("typed during the reply", draft, "and saved with the chat")
      end)
    end)
  end)
end

describe("the input's draft", function()
  it("is saved after a change in normal mode (a :qa right after it lost the change)", function()
    local fake = setup()
    local input = require("bb7.ui.input")
    require("bb7.ui").focus("input")
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "pasted in normal mode" })
    vim.api.nvim_exec_autocmds("TextChanged", { buffer = input.buf() })
    env.settle()
    local saves = fake:sent("save_draft")
    t.eq("pasted in normal mode", saves[#saves] and saves[#saves].draft)
  end)
end)

describe(":BB7 without any chat", function()
  it("asks for the balance (the info pane said \"Balance -\" until the first reply)", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7")
    t.eq(1, #fake:sent("get_balance"))
    t.matches("^Balance %$", lines(require("bb7.ui.info").buf())[1])
  end)
end)

describe(":BB7Add of a directory in a git work tree", function()
  it("leaves out bb7's own store, which git lists as untracked", function()
    setup()
    vim.system({ "git", "init", "-q", env.dir }):wait()
    env.write("a.txt", { "a" })
    env.write(".bb7/chats/0000000001/chat.json", { "{}" })
    local prompt
    vim.ui.select = function(_, opts, cb)
      prompt = opts.prompt
      cb(nil)
    end
    env.cmd("BB7Add .")
    t.matches("^BB%-7: add 1 file ", prompt)
    local paths = require("bb7.add_targets").files_under(env.dir)
    t.eq({ env.dir .. "/a.txt" }, paths)
  end)
end)

describe("text typed in the input before any chat exists", function()
  it("stays when the first chat is created, and is saved as its draft", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7")
    local input = require("bb7.ui.input")
    local ui = require("bb7.ui")
    ui.focus("input")
    vim.api.nvim_buf_set_lines(input.buf(), 0, -1, false, { "my first question" })
    vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
    env.settle()
    vim.ui.input = function(_, cb)
      cb("")
    end
    ui.handlers.chats.new()
    env.settle()
    vim.cmd("stopinsert")
    t.truthy(require("bb7.state").data.active_id, "a chat")
    t.eq("my first question", input.text())
    vim.api.nvim_exec_autocmds("InsertLeave", { buffer = input.buf() })
    env.settle()
    local saves = fake:sent("save_draft")
    t.eq("my first question", saves[#saves] and saves[#saves].draft)
  end)
end)

describe(":BB7Model with a name the provider does not list", function()
  it("sets it but warns (a typo showed only when the send failed)", function()
    setup()
    require("bb7.actions").fetch_models()
    env.settle()
    env.notes = {}
    env.cmd("BB7Model anthropic/claude-sonet-4")
    t.eq({ "WARN BB-7: Model anthropic/claude-sonet-4 is not in the provider's list of 2 models: sends may fail" }, env.messages())
    t.eq("anthropic/claude-sonet-4", require("bb7.state").data.model)
    env.notes = {}
    env.cmd("BB7Model openai/gpt-4o")
    t.eq({ "INFO BB-7: Model openai/gpt-4o" }, env.messages())
  end)
end)

describe("the chat picker of :BB7 with a chat another Neovim holds", function()
  it("marks it locked and, picked, says how to unlock it (the daemon's refusal named chat_force_unlock)", function()
    local fake = env.reset({ initialized = true })
    local id = fake:new_chat("held")
    fake.chats[id].locked = true
    local shown
    vim.ui.select = function(items, opts, cb)
      shown = vim.tbl_map(opts.format_item or tostring, items)
      cb(items[1])
    end
    env.cmd("BB7")
    t.eq({ "held  ⊘ locked" }, shown)
    t.eq({ "WARN BB-7: Chat is locked by another bb7 process (u in the chats pane force-unlocks it)" }, env.messages())
    t.eq(0, #fake:sent("chat_select"))
    t.truthy(require("bb7.ui").is_open(), "the tab opens without a chat")
  end)
end)

describe("the daemon's lock refusal", function()
  it("names the chats pane, not the protocol action", function()
    env.reset()
    require("bb7.notify").daemon_error("open the chat", "Chat is locked by another bb7 process (PID 7). Close it there or use chat_force_unlock")
    t.eq({ "ERROR BB-7: Failed to open the chat: Chat is locked by another bb7 process (PID 7). Close it there or force-unlock it in the chats pane" }, env.messages())
  end)
end)

describe(":BB7Chat as the first command of a session", function()
  it("opens the tab with the chat list and the balance, as :BB7 does", function()
    local fake = env.reset({ initialized = true })
    fake:new_chat("listed")
    fake.active = "0000000001"
    env.cmd("BB7Chat")
    env.settle()
    t.truthy(require("bb7.ui").is_open())
    t.eq({ "▶  listed" }, lines(require("bb7.ui.chats").buf()))
    t.eq(1, #fake:sent("get_balance"))
  end)
end)

describe("a send that fails at once", function()
  it("says so on one line that fits, so Neovim asks for no ENTER", function()
    env.reset()
    vim.o.columns = 80
    local long = "model: the request\nexceeds the available context size. Try a model with a larger window, or remove context files from this chat, then send again "
      .. string.rep("x", 200)
    require("bb7.notify").daemon_error("send", long, true)
    local shown = env.messages()
    t.eq(1, #shown)
    t.falsy(shown[1]:find("\n", 1, true))
    t.truthy(vim.fn.strdisplaywidth((shown[1]:gsub("^ERROR ", ""))) < 80)
    t.truthy(shown[1]:find("^ERROR BB%-7: Failed to send: model: the request exceeds"))
    t.truthy(shown[1]:find("…$"))
  end)

  it("keeps a short error whole and other errors unchanged", function()
    env.reset()
    vim.o.columns = 80
    require("bb7.notify").daemon_error("send", "net: refused", true)
    require("bb7.notify").daemon_error("rename", "a\nb")
    t.eq({ "ERROR BB-7: Failed to send: net: refused", "ERROR BB-7: Failed to rename: a\nb" }, env.messages())
  end)
end)
