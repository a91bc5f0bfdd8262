-- The commands of the first plugin (:BB7NewChat, :BB7EditInstructions, :BB7Version, :BB7 as a
-- toggle), :BB7Add of a directory and from oil.nvim, and project/global chats.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function with_active_chat(fake)
  env.cmd("BB7Init")
  local id = fake:new_chat("physics")
  fake.active = id
  require("bb7.state").data.ready = false
  env.notes = {}
  return id
end

describe("commands", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7NewChat [name] creates a chat and makes it active (the UI stays closed)", function()
    env.cmd("BB7NewChat refactor")
    t.eq("refactor", fake:sent("chat_new")[1].name)
    t.eq(nil, fake:sent("chat_new")[1].global)
    t.falsy(require("bb7.ui").is_open())
    t.eq("refactor", require("bb7.state").data.chat.name)
  end)

  it(":BB7 toggles the bb7 tab", function()
    with_active_chat(fake)
    env.cmd("BB7")
    local ui = require("bb7.ui")
    t.truthy(ui.is_open())
    env.cmd("BB7")
    t.falsy(ui.is_open())
    env.cmd("BB7")
    t.truthy(ui.is_open())
    vim.cmd("tabfirst")
    env.cmd("BB7")
    t.truthy(ui.is_open(), "from another tab it goes to the bb7 tab")
    t.eq(ui.tab, vim.api.nvim_get_current_tabpage())
  end)

  it(":BB7EditInstructions opens the project file, or the global one", function()
    env.cmd("BB7EditInstructions")
    t.eq("project", fake:sent("prepare_instructions")[1].level)
    t.eq(env.dir .. "/.bb7/instructions", vim.api.nvim_buf_get_name(0))
    env.cmd("BB7EditInstructions global")
    t.eq("global", fake:sent("prepare_instructions")[2].level)
    t.eq(vim.env.HOME .. "/.config/bb7/instructions", vim.api.nvim_buf_get_name(0))
    -- the level in any case (bug: "Global" reached the daemon as it was)
    env.cmd("BB7EditInstructions Global")
    t.eq("global", fake:sent("prepare_instructions")[3].level)
    env.cmd("BB7EditInstructions nonsense")
    t.eq({ "WARN BB-7: Usage: :BB7EditInstructions [project|global]" }, env.messages())
    t.eq(3, #fake:sent("prepare_instructions"))
  end)

  it(":BB7Version names the daemon's and the plugin's versions", function()
    env.cmd("BB7Version")
    t.eq({ "INFO BB-7: daemon 0.1.0, plugin " .. require("bb7").version }, env.messages())
  end)
end)

describe(":BB7Add of a directory", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    with_active_chat(fake)
    env.write("src/a.lua", { "local a = 1" })
    env.write("src/sub/b.lua", { "local b = 2" })
    env.write("src/.hidden", { "secret" })
    local bin = io.open(env.dir .. "/src/blob.bin", "wb")
    bin:write("\0\1\2")
    bin:close()
  end)

  it("asks with the file count and tokens; Cancel adds nothing", function()
    local prompt
    vim.ui.select = function(_, opts, cb)
      prompt = opts.prompt
      cb("Cancel")
    end
    env.cmd("BB7Add src")
    t.eq("BB-7: add 2 files (~8 tokens); 1 binary or too large left out?", prompt)
    t.eq(0, #fake:sent("context_add"))
    t.eq({ "INFO BB-7: Add cancelled" }, env.messages())
  end)

  it("Add adds every text file, hidden ones left out, with one message", function()
    vim.ui.select = function(_, _, cb)
      cb("Add")
    end
    env.cmd("BB7Add src")
    local paths = vim.tbl_map(function(r)
      return r.path
    end, fake:sent("context_add"))
    t.eq({ "src/a.lua", "src/sub/b.lua" }, paths)
    t.eq("local a = 1\n", fake:sent("context_add")[1].content)
    t.eq({ "INFO BB-7: Added 2 files" }, env.messages())
  end)

  it("inside a git work tree adds the files git does not ignore", function()
    if vim.fn.executable("git") == 0 then
      return
    end
    vim.system({ "git", "init", "-q", env.dir }):wait()
    env.write(".gitignore", { "src/sub/" })
    vim.ui.select = function(_, _, cb)
      cb("Add")
    end
    env.cmd("BB7Add src")
    local paths = vim.tbl_map(function(r)
      return r.path
    end, fake:sent("context_add"))
    t.eq({ "src/.hidden", "src/a.lua" }, paths, "git lists dotfiles, leaves ignored ones out")
  end)

  it("says when the files are more than the model's context has left", function()
    local prompt
    vim.ui.select = function(_, opts, cb)
      prompt = opts.prompt
      cb("Cancel")
    end
    local st = require("bb7.state").data
    st.model = "tiny"
    st.models = { { id = "tiny", context_length = 5000 } }
    st.estimate = { total = 4995 }
    env.cmd("BB7Add src")
    t.eq("BB-7: add 2 files (~8 tokens); more than the ~5 tokens left of the model's 5k; 1 binary or too large left out?", prompt)
  end)

  it("from an oil.nvim buffer adds the entry under the cursor (a directory here)", function()
    package.loaded.oil = {
      get_current_dir = function()
        return env.dir .. "/"
      end,
      get_entry_on_line = function(_, lnum)
        return ({ { name = "src", type = "directory" }, { name = "README", type = "file" } })[lnum]
      end,
    }
    env.write("README", { "read me" })
    vim.cmd("enew")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "src/", "README" })
    vim.bo.filetype = "oil"
    vim.ui.select = function(_, _, cb)
      cb("Add")
    end
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    env.cmd("BB7Add")
    t.eq(2, #fake:sent("context_add"))
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    env.cmd("BB7Add")
    t.eq("README", fake:sent("context_add")[3].path)
    env.cmd("1,2BB7Add")
    t.eq(6, #fake:sent("context_add"), "a range adds every entry of its lines")
    package.loaded.oil = nil
    vim.cmd("bwipeout!")
  end)
end)

describe("project and global chats", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake:new_chat("project chat")
    fake:new_chat("global chat", true)
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.notes = {}
  end)

  it("s switches the list between project and global chats", function()
    local ui = require("bb7.ui")
    t.eq({ "▶  project chat" }, lines(require("bb7.ui.chats").buf()))
    ui.handlers.chats.scope()
    env.settle()
    t.eq({ "   global chat" }, lines(require("bb7.ui.chats").buf()))
    t.eq({ "INFO BB-7: Showing global chats" }, env.messages())
    t.eq("[global] " .. env.dir, lines(require("bb7.ui.info").buf())[3])
    ui.focus("chats")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    ui.handlers.chats.select()
    env.settle()
    t.eq({ id = "0000000002", global = true }, { id = fake:sent("chat_select")[1].id, global = fake:sent("chat_select")[1].global })
    t.eq("global chat", require("bb7.state").data.chat.name)
    ui.handlers.chats.scope()
    env.settle()
    t.eq({ "   project chat" }, lines(require("bb7.ui.chats").buf()))
  end)

  it("m moves the chat under the cursor to the other store", function()
    local ui = require("bb7.ui")
    ui.focus("chats")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    ui.handlers.chats.move()
    env.settle()
    t.eq({ id = "0000000001", to = "global" }, { id = fake:sent("chat_move")[1].id, to = fake:sent("chat_move")[1].to })
    t.eq({ "INFO BB-7: Moved chat to global chats" }, env.messages())
    -- the open chat was moved: the list follows it to the global chats
    t.eq({ "   global chat", "▶  project chat" }, lines(require("bb7.ui.chats").buf()))
    env.notes = {}
    vim.api.nvim_win_set_cursor(ui.wins.chats, { 2, 0 })
    ui.focus("chats")
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    ui.handlers.chats.move()
    env.settle()
    t.eq("project", fake:sent("chat_move")[2].to)
    t.eq({ "INFO BB-7: Moved chat to project chats" }, env.messages())
    t.eq({ "▶  project chat" }, lines(require("bb7.ui.chats").buf()))
  end)

  it("outside a project the switch and the move say why not", function()
    env.reset()
    env.cmd("BB7")
    env.notes = {}
    require("bb7.actions").switch_scope()
    require("bb7.actions").move_chat("x")
    t.eq({
      "WARN BB-7: No project here: only global chats (run :BB7Init for project chats)",
      "WARN BB-7: No project here: only global chats (run :BB7Init for project chats)",
    }, env.messages())
  end)
end)
