local t = require("helpers.assert")
local env = require("helpers.env")

-- Puts the project in the "chat active" state: initialized, a chat created and selected.
local function with_active_chat(fake)
  env.cmd("BB7Init")
  local id = fake:new_chat("physics")
  fake.active = id
  require("bb7.state").data.ready = false -- re-init learns the active chat
  return id
end

describe("state: not initialized", function()
  local fake
  before_each(function()
    fake = env.reset()
  end)

  it(":BB7 outside a project opens global chats (init with an empty project_root)", function()
    env.cmd("BB7")
    t.eq({}, env.messages())
    t.eq("", fake:sent("init")[1].project_root)
    t.truthy(require("bb7.ui").is_open())
    local st = require("bb7.state").data
    t.truthy(st.global_only)
    t.eq("global", st.scope)
    t.eq(true, fake:sent("chat_list")[1].global)
  end)

  it(":BB7Add, :BB7AddReadonly and :BB7Remove warn No active chat in global-only mode", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7Add")
    env.cmd("BB7AddReadonly")
    env.cmd("BB7Remove")
    t.eq({ "WARN BB-7: No active chat", "WARN BB-7: No active chat", "WARN BB-7: No active chat" }, env.messages())
    t.eq(0, #fake:sent("context_add"))
  end)

  it("a global chat outside a project gets files by absolute path", function()
    env.cmd("BB7NewChat")
    t.eq(true, fake:sent("chat_new")[1].global)
    local abs = env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.notes = {}
    env.cmd("BB7Add")
    t.eq(abs, fake:sent("context_add")[1].path)
  end)

  it(":BB7Init creates .bb7/ and says where", function()
    env.cmd("BB7Init")
    t.eq({ "INFO BB-7: Initialized in " .. env.dir }, env.messages())
    t.eq(1, vim.fn.isdirectory(env.dir .. "/.bb7"))
    t.eq(env.dir, fake:sent("bb7_init")[1].project_root)
    t.eq(2, #fake:sent("init"), "init again after bb7_init")
    t.truthy(require("bb7.state").data.initialized)
  end)
end)

describe("state: initialized, no chats", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7Init says Already initialized", function()
    env.cmd("BB7Init")
    t.eq({ "INFO BB-7: Already initialized" }, env.messages())
  end)

  it(":BB7 opens the UI in its empty state", function()
    env.cmd("BB7")
    t.eq({}, env.messages())
    local ui = require("bb7.ui")
    t.truthy(ui.is_open())
    local lines = vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false)
    t.eq("No chats yet.", lines[1])
    local chats = vim.api.nvim_buf_get_lines(require("bb7.ui.chats").buf(), 0, -1, false)
    t.eq({ "  No chats yet: press n" }, chats)
  end)

  it(":BB7Add warns No active chat", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7Add")
    t.eq({ "WARN BB-7: No active chat" }, env.messages())
    t.eq(0, #fake:sent("context_add"))
  end)
end)

describe("state: chats exist, none active", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    fake:new_chat("first")
    fake:new_chat("second")
  end)

  it(":BB7 opens the chat picker, and the choice becomes active", function()
    local offered
    vim.ui.select = function(items, opts, cb)
      offered = vim.tbl_map(opts.format_item, items)
      cb(items[2])
    end
    env.cmd("BB7")
    t.eq({ "second", "first" }, offered)
    t.eq("0000000001", fake.active)
    t.truthy(require("bb7.ui").is_open())
    t.eq("first", require("bb7.state").data.chat.name)
  end)

  it(":BB7Remove warns No active chat", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7Remove")
    t.eq({ "WARN BB-7: No active chat" }, env.messages())
  end)
end)

describe("state: chat active", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    with_active_chat(fake)
    env.notes = {}
  end)

  it(":BB7 opens the UI showing the chat", function()
    env.cmd("BB7")
    t.truthy(require("bb7.ui").is_open())
    t.eq("physics", require("bb7.state").data.chat.name)
    t.eq({}, env.messages())
  end)

  it(":BB7Add adds the current buffer's text, relative path", function()
    env.write("src/a.lua", { "local x = 1" })
    vim.cmd("edit src/a.lua")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "local x = 2" })
    env.cmd("BB7Add")
    t.eq({ "INFO BB-7: Added src/a.lua" }, env.messages())
    local req = fake:sent("context_add")[1]
    t.eq("src/a.lua", req.path)
    t.eq("local x = 2\n", req.content, "unsaved buffer text is what gets added")
    t.eq(false, req.readonly)
  end)

  it(":BB7AddReadonly adds read-only", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7AddReadonly")
    t.eq({ "INFO BB-7: Added a.lua" }, env.messages())
    t.eq(true, fake:sent("context_add")[1].readonly)
  end)

  it("adding twice warns File already in context", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7Add")
    env.cmd("BB7Add")
    t.eq({ "INFO BB-7: Added a.lua", "WARN BB-7: File already in context" }, env.messages())
  end)

  it(":'<,'>BB7Add adds a section of the selected lines", function()
    env.write("a.lua", { "one", "two", "three", "four" })
    vim.cmd("edit a.lua")
    env.cmd("2,3BB7Add")
    t.eq({ "INFO BB-7: Added a.lua:2-3" }, env.messages())
    local req = fake:sent("context_add_section")[1]
    t.eq({ "a.lua", "two\nthree\n", 2, 3 }, { req.path, req.content, req.start_line, req.end_line })
  end)

  it(":BB7Add path:start:end adds a section of a file on disk", function()
    env.write("lib/b.lua", { "l1", "l2", "l3", "l4", "l5" })
    env.cmd("BB7Add lib/b.lua:2:4")
    t.eq({ "INFO BB-7: Added lib/b.lua:2-4" }, env.messages())
    local req = fake:sent("context_add_section")[1]
    t.eq({ "lib/b.lua", "l2\nl3\nl4\n", 2, 4 }, { req.path, req.content, req.start_line, req.end_line })
  end)

  it(":BB7Add of a missing file says Cannot read file", function()
    env.cmd("BB7Add nope.lua")
    t.eq({ "ERROR BB-7: Cannot read file nope.lua" }, env.messages())
    t.eq(0, #fake:sent("context_add"))
  end)

  it(":BB7Add on a buffer without a file says Cannot read file", function()
    vim.cmd("enew")
    env.cmd("BB7Add")
    t.eq({ "ERROR BB-7: Cannot read file [No Name]" }, env.messages())
  end)

  it("a daemon failure is reported as Failed to add file", function()
    env.write("a.lua", { "x" })
    env.cmd("BB7Add ../a.lua")
    -- the path is outside the project: absolute, and the file does not exist there
    t.eq(1, #env.messages())
    t.matches("^ERROR BB%-7: Cannot read file ", env.messages()[1])
    local abs = vim.fn.fnamemodify(env.dir .. "/../x-outside.lua", ":p")
    vim.fn.writefile({ "y" }, abs)
    fake.chats[fake.active].context = {}
    local real = fake._handle
    fake._handle = function(self, req)
      if req.action == "context_add" then
        return self:emit({ type = "error", request_id = req.request_id, message = "permission denied" })
      end
      return real(self, req)
    end
    env.notes = {}
    env.cmd("BB7Add " .. abs)
    t.eq({ "ERROR BB-7: Failed to add file: permission denied" }, env.messages())
    t.eq(abs, fake:sent("context_add")[1].path, "files outside the root are sent with their absolute path")
    vim.fn.delete(abs)
  end)

  it(":BB7Remove removes, and warns File not in context the second time", function()
    env.write("a.lua", { "x" })
    vim.cmd("edit a.lua")
    env.cmd("BB7Add")
    env.cmd("BB7Remove")
    env.cmd("BB7Remove")
    t.eq({ "INFO BB-7: Added a.lua", "INFO BB-7: Removed a.lua", "WARN BB-7: File not in context" }, env.messages())
  end)

  it(":BB7Remove path:start:end removes the section", function()
    env.write("a.lua", { "1", "2", "3" })
    env.cmd("BB7Add a.lua:1:2")
    env.cmd("BB7Remove a.lua:1:2")
    t.eq({ "INFO BB-7: Added a.lua:1-2", "INFO BB-7: Removed a.lua:1-2" }, env.messages())
    local req = fake:sent("context_remove_section")[1]
    t.eq({ 1, 2 }, { req.start_line, req.end_line })
  end)

  it(":BB7Search lists matches and opens the chosen chat", function()
    fake:new_chat("Physics engine")
    fake.active = "0000000001"
    local offered
    vim.ui.select = function(items, opts, cb)
      offered = vim.tbl_map(opts.format_item, items)
      cb(items[1])
    end
    env.cmd("BB7Search engine")
    t.eq({ "Physics engine" }, offered)
    t.eq("0000000002", fake.active)
    t.truthy(require("bb7.ui").is_open())
    local listed = vim.api.nvim_buf_get_lines(require("bb7.ui.chats").buf(), 0, -1, false)
    t.truthy(vim.tbl_contains(listed, "▶  Physics engine"), "the chats pane lists the chats: " .. vim.inspect(listed))
    env.notes = {}
    env.cmd("BB7Search zzz")
    t.eq({ "INFO BB-7: No chats match zzz" }, env.messages())
  end)

  it(":BB7Model opens a picker with context and prices, favorites first; f toggles, <CR> picks", function()
    require("bb7.favorites").toggle("openai/gpt-4o")
    require("bb7.state").data.model = "anthropic/claude-sonnet-4"
    env.cmd("BB7Model")
    local picker = require("bb7.ui.model_picker")
    t.truthy(picker.state, "picker open")
    local shown = vim.api.nvim_buf_get_lines(picker.state.buf, 0, -1, false)
    t.eq({
      " ★ openai/gpt-4o               128k ctx  in $2.50   out $10.00",
      "▶  anthropic/claude-sonnet-4   200k ctx  in $3.00   out $15.00   reasoning",
    }, shown)
    vim.api.nvim_win_set_cursor(picker.state.win, { 2, 0 })
    vim.api.nvim_feedkeys("f", "x", false)
    t.eq({ "INFO BB-7: Added favorite anthropic/claude-sonnet-4" }, env.messages())
    t.eq({ "openai/gpt-4o", "anthropic/claude-sonnet-4" }, require("bb7.favorites").list())
    t.eq("anthropic/claude-sonnet-4", picker.current().id, "the cursor stays on the model")
    t.matches("^▶★ anthropic", vim.api.nvim_buf_get_lines(picker.state.buf, 0, 1, false)[1], "both favorites, daemon order")
    vim.api.nvim_win_set_cursor(picker.state.win, { 2, 0 })
    env.notes = {}
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    env.settle()
    t.eq(nil, picker.state, "closed")
    t.eq({ "INFO BB-7: Model openai/gpt-4o" }, env.messages())
    t.eq("openai/gpt-4o", fake:sent("save_chat_settings")[1].model)
    t.eq("openai/gpt-4o", require("bb7.state").data.model)
  end)

  it("the model list is fetched again when older than a day, and by :BB7RefreshModels", function()
    local actions = require("bb7.actions")
    actions.fetch_models()
    env.settle()
    local n = #fake:sent("get_models")
    actions.fetch_models()
    env.settle()
    t.eq(n, #fake:sent("get_models"), "cached")
    require("bb7.state").data.models_at = os.time() - 2 * 24 * 3600
    actions.fetch_models()
    env.settle()
    t.eq(n + 1, #fake:sent("get_models"), "stale after a day")
    env.notes = {}
    env.cmd("BB7RefreshModels")
    t.eq(n + 2, #fake:sent("get_models"))
    t.eq({ "INFO BB-7: Refreshed models (2)" }, env.messages())
  end)

  it(":BB7Model! toggles a favorite in ~/.bb7/state.json, keeping other fields", function()
    local path = require("bb7.favorites").path()
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    vim.fn.writefile({ '{"last_model":"m/1","favorites":[]}' }, path)
    env.cmd("BB7Model! m/2")
    env.cmd("BB7Model! m/2")
    t.eq({ "INFO BB-7: Added favorite m/2", "INFO BB-7: Removed favorite m/2" }, env.messages())
    local data = vim.json.decode(table.concat(vim.fn.readfile(path), "\n"))
    t.eq("m/1", data.last_model)
    t.eq({}, data.favorites)
  end)
end)

describe("daemon lifecycle", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it("reports a missing daemon with where it looked", function()
    require("bb7.session").transport = nil
    require("bb7.config").options.cmd = nil
    -- the plugin's own target/release/bb7 may exist in this checkout: look in an empty root
    local root = vim.fn.tempname()
    vim.fn.mkdir(root, "p")
    require("bb7.binary").plugin_root = function()
      return root
    end
    local old = vim.env.PATH
    vim.env.PATH = "/nonexistent"
    env.cmd("BB7")
    vim.env.PATH = old
    t.eq(1, #env.messages())
    t.matches("^ERROR BB%-7: Cannot find the bb7 daemon %(looked at opts.cmd, bb7 on PATH, " .. vim.pesc(root) .. "/target/release/bb7%)%. Build it with `cargo build %-%-release %-p bb7%-daemon` or set opts.cmd$", env.messages()[1])
  end)

  it("a dying daemon gives an error and a restart offer that restarts it", function()
    env.cmd("BB7")
    local prompt
    vim.ui.select = function(items, opts, cb)
      prompt = opts.prompt
      cb(items[1])
    end
    fake:die(101, "thread 'main' panicked\n")
    env.settle()
    t.eq("ERROR BB-7: Daemon exited (code 101): thread 'main' panicked", env.messages()[1])
    t.eq("BB-7: the daemon stopped.", prompt)
    t.wait(function()
      return #fake:sent("init") == 2
    end, "restart sends init again")
    t.truthy(require("bb7.session").client:is_running())
  end)

  it("a send after the daemon died starts it again and keeps the active chat", function()
    fake:new_chat("kept")
    fake.active = "0000000001"
    env.cmd("BB7")
    vim.ui.select = function(_, _, cb)
      cb(nil) -- leave it stopped
    end
    fake:die(1)
    env.settle()
    t.falsy(require("bb7.session").client:is_running())
    fake.active = nil -- a new process knows no active chat
    require("bb7.ui.input").set_text("still there?")
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq("0000000001", fake:sent("chat_select")[1].id)
    t.eq("still there?", fake:sent("send")[1].content)
  end)

  it("stops the daemon on VimLeavePre", function()
    env.cmd("BB7")
    t.truthy(fake.running)
    vim.api.nvim_exec_autocmds("VimLeavePre", {})
    t.falsy(fake.running)
    t.eq(1, #fake:sent("shutdown"))
  end)

  it("logs raw traffic under stdpath('log') with debug = true", function()
    env.reset({ initialized = true, setup = { debug = true } })
    env.cmd("BB7")
    local path = vim.fn.stdpath("log") .. "/bb7-traffic.log"
    local lines = vim.fn.readfile(path)
    local sent, received
    for _, line in ipairs(lines) do
      if line:find('"action":"init"', 1, true) then
        sent = line
      elseif line:find(" < {", 1, true) then
        received = received or line
      end
    end
    t.matches('^%d+%-%d+%-%d+T[%d:]+Z > {', sent)
    t.matches('^%d+%-%d+%-%d+T[%d:]+Z < {"', received)
  end)

  it("initializes again for a new project when the working directory changes", function()
    env.cmd("BB7")
    vim.cmd("tabfirst") -- :BB7 in the bb7 tab closes it
    local first = env.dir
    local other = vim.fn.resolve(vim.fn.tempname())
    vim.fn.mkdir(other, "p")
    vim.cmd("cd " .. vim.fn.fnameescape(other))
    env.cmd("BB7")
    local inits = fake:sent("init")
    t.eq({ first, "" }, { inits[1].project_root, inits[2].project_root }, "no .bb7/ there: global-only")
    t.eq({}, env.messages())
    t.truthy(require("bb7.state").data.global_only)
    t.eq(other, require("bb7.state").data.root)
  end)

  it("works with output cut into 7-byte pieces", function()
    fake.split = 7
    env.cmd("BB7")
    t.truthy(require("bb7.ui").is_open())
    t.eq({}, env.messages())
  end)
end)
