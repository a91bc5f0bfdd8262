-- What a repository, a chat or the model controls cannot make the plugin send a secret, run an
-- Ex command, freeze Neovim or set options: each test performs the attack (against the real
-- daemon where the daemon is involved) and checks it now does no harm, what the user is told,
-- and that the state on disk is intact.
local t = require("helpers.assert")
local env = require("helpers.env")
local real = require("helpers.real")
local uv = vim.uv or vim.loop

local function new_chat()
  env.cmd("BB7")
  require("bb7.actions").new_chat("untrusted")
  env.settle()
end

-- The daemon's own view of the active chat's files (not the plugin's copy).
local function daemon_files()
  local files
  require("bb7.session").request("get_file_statuses", {}, function(reply)
    files = reply.files or {}
  end)
  t.wait(function()
    return files ~= nil
  end, "get_file_statuses")
  local by_path = {}
  for _, file in ipairs(files) do
    by_path[file.path] = file
  end
  return by_path
end

local function send_and_wait(text)
  require("bb7.ui.input").set_text(text)
  require("bb7.ui").handlers.input.send()
  return real.wait_stream_end()
end

local function write_call(id, path, content)
  return { id = id, name = "write_file", arguments = { path = path, content = content } }
end

if real.available() then
  describe("with the real daemon", function()
    it("U, u and a watched save do not read a context file that became a link to .env", function()
      real.run(function()
        real.start({}, { watch = true })
        env.write("docs/guide.md", { "the guide" })
        env.write(".env", { "TOKEN=secret" })
        new_chat()
        env.cmd("BB7Add docs/guide.md")
        t.eq("the guide\n", daemon_files()["docs/guide.md"].context_content)
        -- a pull turns the file into a link to the secret
        os.remove(env.dir .. "/docs/guide.md")
        assert(uv.fs_symlink("../.env", env.dir .. "/docs/guide.md"))
        require("bb7.actions").refresh_files()
        env.settle()
        env.notes = {}
        require("bb7.actions").update_all()
        env.settle()
        t.eq({
          "ERROR BB-7: Not updated docs/guide.md: it leads through a symbolic link to " .. env.dir .. "/.env",
        }, env.messages())
        t.eq("the guide\n", daemon_files()["docs/guide.md"].context_content, "the snapshot is the guide")
        env.notes = {}
        require("bb7.actions").update("docs/guide.md")
        env.settle()
        t.eq({
          "ERROR BB-7: Cannot read file docs/guide.md: it leads through a symbolic link to " .. env.dir .. "/.env",
        }, env.messages())
        -- the watch: the user saves .env (which the link makes look like the context file)
        vim.cmd("tabnew")
        vim.cmd.edit({ args = { env.dir .. "/.env" } })
        vim.api.nvim_buf_set_lines(0, 0, -1, false, { "TOKEN=rotated" })
        vim.cmd("silent write")
        env.settle()
        t.wait(function()
          return vim.tbl_contains(env.messages(), "ERROR BB-7: Cannot read file docs/guide.md: it leads through a symbolic link to " .. env.dir .. "/.env")
        end, "the watched save is refused")
        env.settle()
        t.eq("the guide\n", daemon_files()["docs/guide.md"].context_content, "nothing of .env was sent")
        t.eq({ "TOKEN=rotated" }, vim.fn.readfile(env.dir .. "/.env"))
        vim.cmd("tabclose!")
      end)
    end)

    it("U does not read through a directory of the path that became a link", function()
      real.run(function()
        real.start({})
        env.write("docs/guide.md", { "the guide" })
        local outside = vim.fn.tempname()
        vim.fn.mkdir(outside, "p")
        vim.fn.writefile({ "PRIVATE KEY" }, outside .. "/guide.md")
        new_chat()
        env.cmd("BB7Add docs/guide.md")
        vim.fn.delete(env.dir .. "/docs", "rf")
        assert(uv.fs_symlink(outside, env.dir .. "/docs"))
        env.notes = {}
        require("bb7.actions").update_all()
        env.settle()
        t.eq(
          "ERROR BB-7: Not updated docs/guide.md: it leads through a symbolic link to " .. vim.fn.resolve(outside) .. "/guide.md",
          env.messages()[1]
        )
        t.eq("the guide\n", daemon_files()["docs/guide.md"].context_content)
        t.eq({ "PRIVATE KEY" }, vim.fn.readfile(outside .. "/guide.md"))
      end)
    end)

    it("a chat's external entries /dev/zero and a FIFO are not read when it opens, nor by U", function()
      real.run(function()
        real.start({})
        local fifo = vim.fn.tempname() .. "-fifo"
        vim.fn.system({ "mkfifo", fifo })
        t.eq("fifo", uv.fs_lstat(fifo).type)
        new_chat()
        for _, path in ipairs({ "/dev/zero", fifo }) do
          local replied
          require("bb7.session").request("context_add", { path = path, content = "x\n" }, function(reply)
            replied = reply
          end)
          t.wait(function()
            return replied ~= nil
          end, "context_add " .. path)
        end
        local listed = daemon_files()
        -- opening the chat computes the statuses of every entry (this hung on the FIFO and
        -- read /dev/zero without end)
        require("bb7.actions").load_chat()
        env.settle()
        local shown = {}
        for _, file in ipairs(require("bb7.state").data.files) do
          shown[file.path] = file.display_status
        end
        for path in pairs(listed) do
          t.truthy(shown[path] ~= nil, "listed: " .. path)
        end
        if listed[fifo] or listed["/dev/zero"] then
          env.notes = {}
          require("bb7.actions").update_all()
          env.settle()
          t.matches("^ERROR BB%-7: Not updated ", env.messages()[1] or "")
          if listed["/dev/zero"] then
            t.truthy(env.messages()[1]:find("/dev/zero: it is a device", 1, true), env.messages()[1])
          end
          if listed[fifo] then
            t.truthy(env.messages()[1]:find(fifo .. ": it is a FIFO", 1, true), env.messages()[1])
          end
        end
        t.eq("fifo", uv.fs_lstat(fifo).type)
      end)
    end)

    it("a model's file name with a newline is one inert row; the other outputs stay shown", function()
      real.run(function()
        local evil = "x\ncall writefile(['pwned'],'pwned')"
        real.start({ { text = { "two files" }, tool_calls = { write_call("c1", evil, "a\n"), write_call("c2", "good.txt", "good\n") } } })
        new_chat()
        send_and_wait("write")
        local rows = vim.api.nvim_buf_get_lines(require("bb7.ui.files").buf(), 0, -1, false)
        local text = table.concat(rows, "\n")
        t.truthy(text:find("good.txt", 1, true), text)
        if daemon_files()[evil] then
          t.truthy(text:find("x\\ncall writefile(['pwned'],'pwned')", 1, true), text)
          -- the preview of its diff and the chat show it as one line too
          require("bb7.ui.preview").show_diff(require("bb7.actions.common").file_entry(evil))
          local shown = vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false)
          t.matches("^diff x\\ncall writefile%(%['pwned'%],'pwned'%)", shown[1])
          for _, pane in ipairs({ "chat", "preview", "files" }) do
            for _, line in ipairs(vim.api.nvim_buf_get_lines(require("bb7.ui.buffers").get(pane), 0, -1, false)) do
              t.falsy(line:find("^call writefile"), "no forged line in the " .. pane .. " pane: " .. line)
            end
          end
          -- opening it (review, diff) refuses the name instead of running the rest as a command
          env.notes = {}
          require("bb7.review").start(evil)
          env.settle()
          require("bb7.actions").diff_local(evil)
          env.settle()
          t.eq({
            "ERROR BB-7: Cannot open x\\ncall writefile(['pwned'],'pwned'): the file name holds control characters",
          }, { env.messages()[1] })
          t.eq(2, #env.messages(), vim.inspect(env.messages()))
        end
        t.eq(0, vim.fn.filereadable(env.dir .. "/pwned"), "no command ran")
        t.eq(0, vim.fn.filereadable(vim.fn.getcwd() .. "/pwned"), "no command ran")
      end)
    end)

    it(":BB7EditInstructions in a project whose name holds a newline runs nothing", function()
      real.run(function()
        real.start({})
        local project = env.dir .. "/p\ncall writefile(['pwned'],'pwned')"
        vim.fn.mkdir(project, "p")
        vim.cmd.cd({ args = { project }, magic = { file = false, bar = false } })
        env.cmd("BB7Init")
        local before = vim.api.nvim_get_current_buf()
        env.notes = {}
        env.cmd("BB7EditInstructions")
        t.eq({
          "ERROR BB-7: Cannot open "
            .. env.dir
            .. "/p\\ncall writefile(['pwned'],'pwned')/.bb7/instructions: the file name holds control characters",
        }, env.messages())
        t.eq(before, vim.api.nvim_get_current_buf(), "nothing opened")
        t.eq(0, vim.fn.filereadable(project .. "/pwned"), "no command ran")
        t.eq(0, vim.fn.filereadable(env.dir .. "/pwned"), "no command ran")
        t.eq(1, vim.fn.isdirectory(project .. "/.bb7"), "the project is as it was")
      end)
    end)

    it("outputs opened with :BB7DiffLocal or a review apply no modeline of the model or the file", function()
      real.run(function()
        local modeline = "# vim: set rightleft tabstop=3:"
        real.start({ { text = { "rewrite" }, tool_calls = { write_call("c1", "a.txt", "one\ntwo\n" .. modeline .. "\n") } } })
        vim.o.modeline = true
        env.write("a.txt", { "one", modeline })
        new_chat()
        env.cmd("BB7Add a.txt")
        send_and_wait("add a line")
        require("bb7.actions").diff_local("a.txt")
        env.settle()
        local wins = vim.api.nvim_tabpage_list_wins(0)
        t.eq(2, #wins)
        for _, win in ipairs(wins) do
          local buf = vim.api.nvim_win_get_buf(win)
          t.falsy(vim.wo[win].rightleft, "no rightleft in " .. vim.api.nvim_buf_get_name(buf))
          t.neq(3, vim.bo[buf].tabstop, "no tabstop from " .. vim.api.nvim_buf_get_name(buf))
        end
        vim.cmd("tabclose!")
        env.settle()
        require("bb7.review").start("a.txt")
        env.settle()
        t.falsy(vim.wo.rightleft, "no rightleft in the review")
        t.neq(3, vim.bo.tabstop)
        t.eq({ "one", modeline }, vim.fn.readfile(env.dir .. "/a.txt"), "the file is as it was")
        vim.o.modeline = false
      end)
    end)
  end)
end

describe("with the fake daemon", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it("a status reply that arrives after a newer one is dropped", function()
    new_chat()
    fake.chats[fake.active].outputs["gone.txt"] = "old output\n"
    -- hold every status reply, to hand them back newest first
    local held = {}
    local emit = fake.emit
    fake.emit = function(self, msg)
      if msg.type == "file_statuses" then
        table.insert(held, msg)
        return
      end
      return emit(self, msg)
    end
    local answered = {}
    require("bb7.actions").refresh_files(function(ok)
      table.insert(answered, { "first", ok })
    end)
    env.settle(50)
    fake.chats[fake.active].outputs["gone.txt"] = nil -- deleted meanwhile
    require("bb7.actions").refresh_files(function(ok)
      table.insert(answered, { "second", ok })
    end)
    env.settle(50)
    t.eq(2, #held)
    emit(fake, held[2])
    env.settle(50)
    t.eq({}, require("bb7.state").data.files, "the newest reply: no files")
    emit(fake, held[1])
    env.settle(50)
    t.eq({}, require("bb7.state").data.files, "the stale reply does not bring gone.txt back")
    t.eq({ { "first", true }, { "second", true } }, answered, "both callers answered by the newest reply")
  end)

  it("apply does not read a context file that became a FIFO (it asks instead of hanging)", function()
    env.write("a.txt", { "one" })
    new_chat()
    env.cmd("BB7Add a.txt")
    fake.send_script = { { type = "done", output_files = {}, usage = {}, write = { ["a.txt"] = "two\n" } } }
    require("bb7.actions").send("go")
    env.settle()
    os.remove(env.dir .. "/a.txt")
    vim.fn.system({ "mkfifo", env.dir .. "/a.txt" })
    local prompts = {}
    vim.ui.select = function(items, opts, cb)
      table.insert(prompts, opts.prompt)
      cb(items[#items]) -- Cancel
    end
    env.notes = {}
    require("bb7.actions").apply("a.txt")
    env.settle()
    t.eq({ "BB-7: a.txt changed locally since it was added to the context (update it with u to keep both)." }, prompts)
    t.eq({ "INFO BB-7: Apply cancelled" }, env.messages())
    t.eq("fifo", uv.fs_lstat(env.dir .. "/a.txt").type)
    t.eq(0, #fake:sent("apply_file"))
  end)

  it("the chat picker's preview does not read a shipped chat.json that links to /dev/zero or out", function()
    env.cmd("BB7Init")
    local picker = require("bb7.picker")
    local chats = env.dir .. "/.bb7/chats"
    vim.fn.mkdir(chats .. "/0000000009", "p")
    assert(uv.fs_symlink("/dev/zero", chats .. "/0000000009/chat.json"))
    t.eq({ "zero", "", "shipped" }, picker.preview_lines({ id = "0000000009", name = "zero", excerpt = "shipped" }))
    local outside = vim.fn.tempname()
    vim.fn.mkdir(outside, "p")
    vim.fn.writefile({ vim.json.encode({ messages = { { role = "user", parts = { { type = "text", content = "SECRET" } } } } }) }, outside .. "/chat.json")
    assert(uv.fs_symlink(outside, chats .. "/0000000008"))
    t.eq({ "linked" }, picker.preview_lines({ id = "0000000008", name = "linked" }))
    t.eq("link", uv.fs_lstat(chats .. "/0000000009/chat.json").type, "left as shipped")
  end)

  it("a shipped .bb7/pinned_chats.json that is a FIFO or links to /dev/zero is not read", function()
    env.cmd("BB7Init")
    local pins = require("bb7.pins")
    assert(uv.fs_symlink("/dev/zero", pins.path(env.dir)))
    t.eq({}, pins.ids(env.dir))
    os.remove(pins.path(env.dir))
    vim.fn.system({ "mkfifo", pins.path(env.dir) })
    t.eq({}, pins.ids(env.dir))
    t.eq("fifo", uv.fs_lstat(pins.path(env.dir)).type, "left as it was")
  end)

  it("the files pane shows a name with control characters as inert text", function()
    local files = require("bb7.ui.files")
    local lines = files.lines({ { path = "a\nb\27[31m\194\133\226\128\174.txt", status = "M" }, { path = "ok.txt", status = "M" } }, {})
    t.eq({ "M   a\\nb\\x1b[31m\\u{85}\\u{202e}.txt", "M   ok.txt" }, lines)
  end)
end)

describe("safepath", function()
  before_each(function()
    env.reset({ initialized = true })
  end)

  it("reads a regular file; refuses a link, a FIFO, a device and what is over the bound", function()
    local safepath = require("bb7.safepath")
    env.write("a.txt", { "hello" })
    t.eq("hello\n", safepath.read(env.dir .. "/a.txt"))
    assert(uv.fs_symlink("a.txt", env.dir .. "/link.txt"))
    t.eq({ nil, "it is a symbolic link (not followed)" }, { safepath.read(env.dir .. "/link.txt") })
    t.eq("hello\n", safepath.read(env.dir .. "/link.txt", { follow = true }), "a file the user named may be a link")
    vim.fn.system({ "mkfifo", env.dir .. "/fifo" })
    t.eq({ nil, "it is a FIFO" }, { safepath.read(env.dir .. "/fifo") })
    t.eq({ nil, "it is a FIFO" }, { safepath.read(env.dir .. "/fifo", { follow = true }) })
    t.eq({ nil, "it is a device" }, { safepath.read("/dev/zero", { follow = true }) })
    t.eq({ nil, "it is larger than 5 bytes" }, { safepath.read(env.dir .. "/a.txt", { max = 5 }) })
    t.eq({ nil, "missing" }, { safepath.read(env.dir .. "/none.txt") })
  end)

  it("a context path is checked component by component, also for a file not yet there", function()
    local safepath = require("bb7.safepath")
    env.write("src/a.txt", { "a" })
    t.eq(env.dir .. "/src/a.txt", safepath.context_abs(env.dir, "src/a.txt"))
    t.eq(env.dir .. "/src/new/b.txt", safepath.context_abs(env.dir, "src/new/b.txt"), "missing is not refused here")
    local outside = vim.fn.tempname()
    vim.fn.mkdir(outside, "p")
    assert(uv.fs_symlink(outside, env.dir .. "/out"))
    t.eq({ nil, "it leads through a symbolic link to " .. vim.fn.resolve(outside) }, { safepath.context_abs(env.dir, "out/b.txt") })
    t.eq({ nil, "the file name holds control characters" }, { safepath.context_abs(env.dir, "a\nb") })
    t.eq({ nil, "it is a device" }, { safepath.context_abs(env.dir, "/dev/null") })
  end)

  it("a file opened in a buffer gets no modeline and no command from its name", function()
    local safepath = require("bb7.safepath")
    vim.o.modeline = true
    env.write("m.txt", { "text", "vim: set rightleft tabstop=3:" })
    local buf = safepath.open_in_tab("m.txt")
    t.eq(buf, vim.api.nvim_get_current_buf())
    t.eq(env.dir .. "/m.txt", vim.api.nvim_buf_get_name(buf))
    t.falsy(vim.wo.rightleft)
    t.eq(8, vim.bo[buf].tabstop)
    t.eq(true, vim.go.modeline, "the user's own setting stays")
    vim.cmd("tabclose!")
    t.eq({ nil, "the file name holds control characters" }, { safepath.load_buffer("x\nlet g:pwned = 1") })
    t.eq(nil, vim.g.pwned)
    t.eq("a\\\\b\\n\\x1b\\u{9b}\\u{2066}", safepath.inert("a\\b\n\27\194\155\226\129\166"))
  end)
end)
