-- The plugin's third round, continued: the rows and papercuts that need no daemon of their own
-- (the fake daemon serves them): the bb7 tab's sizes, the info pane's keys, the styling options,
-- the hints, the model picker, completion without a completion plugin.
local t = require("helpers.assert")
local env = require("helpers.env")

local function new_chat(name)
  require("bb7.actions").new_chat(name)
  env.settle()
  return require("bb7.state").data.active_id
end

describe("with the fake daemon", function()
  before_each(function()
    env.reset({ initialized = true })
  end)

  it("the bb7 tab gives the files pane files_height rows, and the info pane survives a resize", function()
    -- headless Neovim has 24 lines: a column of 20 rows, shared between chats and files
    env.reset({ initialized = true, setup = { layout = { files_height = 6 } } })
    env.cmd("BB7")
    new_chat("sizes")
    local ui = require("bb7.ui")
    t.eq(6, vim.api.nvim_win_get_height(ui.wins.files), "files_height")
    t.eq(6, vim.api.nvim_win_get_height(ui.wins.info))
    -- what a small terminal leaves (headless Neovim cannot change its size)
    vim.api.nvim_win_set_height(ui.wins.info, 1)
    vim.api.nvim_win_set_height(ui.wins.files, 1)
    vim.api.nvim_exec_autocmds("VimResized", {})
    t.eq(6, vim.api.nvim_win_get_height(ui.wins.info), "the info pane is back")
    t.eq(6, vim.api.nvim_win_get_height(ui.wins.files))
    t.eq(8, vim.api.nvim_win_get_height(ui.wins.input))
  end)
end)

describe("the info pane's keys", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it("<C-g> and P edit the instructions, R starts the session's cost over", function()
    env.cmd("BB7")
    new_chat("info")
    local ui = require("bb7.ui")
    local function mapped(lhs)
      for _, map in ipairs(vim.api.nvim_buf_get_keymap(require("bb7.ui.info").buf(), "n")) do
        if map.lhs == lhs then
          return true
        end
      end
    end
    t.truthy(mapped("<C-G>") and mapped("P") and mapped("R"), "mapped in the info pane")
    ui.handlers.info.global_instructions()
    env.settle()
    t.eq("global", fake:sent("prepare_instructions")[1].level)
    t.matches("bb7/instructions$", vim.api.nvim_buf_get_name(0))
    ui.handlers.info.project_instructions()
    env.settle()
    t.eq("project", fake:sent("prepare_instructions")[2].level)
    local usage = require("bb7.usage")
    local path = usage.path()
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    local row = os.date("%Y-%m-%dT%H:%M:%S", os.time() - 5)
    vim.fn.writefile({ row .. "," .. env.dir .. ",m,1,1,0,0.5" }, path)
    require("bb7.state").data.started = os.date("%Y-%m-%dT%H:%M:%S", os.time() - 60)
    t.eq(0.5, usage.current(require("bb7.state").data.started, env.dir).session)
    env.notes = {}
    ui.handlers.info.reset_cost()
    t.eq(0, usage.current(require("bb7.state").data.started, env.dir).session)
    t.eq({ "INFO BB-7: Session cost reset" }, env.messages())
  end)
end)

describe("the styling options", function()
  it("bar_char, icons, spinner frames and the nav_* keys", function()
    local fake = env.reset({ initialized = true, setup = {
      style = { bar_char = "┃", icons = { active = ">", pinned = "*" }, spinner_frames = { "a", "b" } },
      nav_up = "<C-k>",
    } })
    fake.send_script = { { type = "chunk", content = "Hi" }, { hold = true } }
    env.cmd("BB7")
    local id = new_chat("styled")
    require("bb7.actions").toggle_pin(id)
    env.settle()
    t.eq({ ">* styled" }, vim.api.nvim_buf_get_lines(require("bb7.ui.chats").buf(), 0, -1, false))
    require("bb7.ui.input").set_text("hello")
    require("bb7.ui").handlers.input.send()
    env.settle()
    local shown = vim.api.nvim_buf_get_lines(require("bb7.ui.preview").buf(), 0, -1, false)
    t.matches("^┃You", shown[1])
    t.truthy(vim.iter(shown):any(function(line)
      return line:find("^┃Assistant") ~= nil
    end), vim.inspect(shown))
    t.matches("^[ab] Streaming", require("bb7.ui.spinner").text() or "")
    require("bb7.actions").cancel()
    env.settle()
    local ui = require("bb7.ui")
    ui.focus("files")
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-k>", true, false, true), "x", false)
    t.eq(ui.wins.chats, vim.api.nvim_get_current_win(), "<C-k> went to the pane above")
  end)
end)

describe("papercuts", function()
  before_each(function()
    env.reset({ initialized = true })
  end)

  it("the files pane's hint starts with the apply keys; the preview's names the view keys in a file view", function()
    env.write("a.txt", { "a" })
    env.cmd("BB7")
    new_chat("hints")
    env.cmd("BB7Add a.txt")
    local ui = require("bb7.ui")
    local function shown(win)
      return vim.api.nvim_eval_statusline(vim.wo[win].statusline, { winid = win }).str
    end
    t.matches("^ a apply · A apply all", shown(ui.wins.files))
    t.matches("next message", shown(ui.wins.preview))
    env.cmd("BB7File a.txt")
    t.eq("file", require("bb7.ui.preview").mode)
    t.matches("gc view chat", shown(ui.wins.preview))
    t.falsy(shown(ui.wins.preview):find("next message", 1, true), "no chat keys in a file view")
    require("bb7.ui.views").chat()
    env.settle()
    t.matches("next message", shown(ui.wins.preview))
  end)

  it("after a / filter in the model picker the pick returns to the pane it was opened from", function()
    env.cmd("BB7")
    new_chat("picker")
    local ui = require("bb7.ui")
    ui.focus("input")
    local picker = require("bb7.ui.model_picker")
    local picked
    picker.open({
      { id = "a/one", name = "One", context_length = 1000, supports_tools = true, pricing = { prompt = "0", completion = "0" } },
      { id = "b/two", name = "Two", context_length = 1000, supports_tools = true, pricing = { prompt = "0", completion = "0" } },
    }, "a/one", function(id)
      picked = id
    end)
    picker.prompt()
    vim.api.nvim_buf_set_lines(picker.state.prompt_buf, 0, -1, false, { "two" })
    vim.api.nvim_exec_autocmds("TextChanged", { buffer = picker.state.prompt_buf })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    t.eq(picker.state.win, vim.api.nvim_get_current_win(), "back in the list")
    picker.pick()
    env.settle()
    t.eq("b/two", picked)
    t.eq(ui.wins.input, vim.api.nvim_get_current_win(), "in the input pane again")
  end)

  it("typing @ without a completion plugin shows how to complete", function()
    env.cmd("BB7")
    new_chat("complete")
    local ui = require("bb7.ui")
    ui.focus("input")
    local buf = require("bb7.ui.input").buf()
    -- in normal mode the cursor cannot be after the last character: one more is typed
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "look at @s" })
    vim.api.nvim_win_set_cursor(0, { 1, 9 })
    vim.api.nvim_exec_autocmds("TextChangedI", { buffer = buf })
    local ns = vim.api.nvim_get_namespaces()["bb7-complete-hint"]
    local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
    t.eq(1, #marks)
    t.eq("<C-x><C-o> completes", marks[1][4].virt_text[1][1])
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "look at it" })
    vim.api.nvim_win_set_cursor(0, { 1, 10 })
    vim.api.nvim_exec_autocmds("TextChangedI", { buffer = buf })
    t.eq(0, #vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}), "gone after the word")
  end)

  it("a small editor gives the input pane at most a third of its lines", function()
    local lines = vim.o.lines
    local ok, err = pcall(function()
      vim.o.lines = 20
      env.cmd("BB7")
      new_chat("small")
      local ui = require("bb7.ui")
      t.eq(6, vim.api.nvim_win_get_height(ui.wins.input))
      vim.o.lines = lines
      vim.api.nvim_exec_autocmds("VimResized", {})
      t.eq(math.min(8, math.floor((lines - 1) * 0.35)), vim.api.nvim_win_get_height(ui.wins.input))
    end)
    vim.o.lines = lines
    assert(ok, err)
  end)

  it("the fake daemon refuses to move a chat with pending output to global, as bb7 does", function()
    local fake = env.fake
    env.cmd("BB7")
    local id = new_chat("with output")
    fake.chats[id].outputs["a.txt"] = "model text\n"
    env.notes = {}
    require("bb7.actions").move_chat(id)
    env.settle()
    t.eq({ "ERROR BB-7: Failed to move the chat: chat has pending file modifications — apply or reject changes before moving" }, env.messages())
    t.eq(false, fake.chats[id].global)
  end)
end)
