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
