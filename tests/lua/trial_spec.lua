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
