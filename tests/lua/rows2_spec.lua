-- More of the first plugin's workflow rows of issue 27: :BB7NewChat, locked chats, the
-- spinner, auto-preview, the files tree, restored panes, the diff-error retry, the
-- instruction-error banner, the model picker, oil.nvim buffers.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  env.settle()
end

describe("workflow rows (2)", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7NewChat makes the chat active without opening the UI; the next :BB7 opens it", function()
    env.cmd("BB7NewChat first")
    local ui = require("bb7.ui")
    t.falsy(ui.is_open(), "the UI stays closed")
    t.truthy(require("bb7.state").data.active_id)
    t.eq({ "INFO BB-7: Created: first" }, env.messages())
    env.cmd("BB7")
    t.truthy(ui.is_open(), ":BB7 opens the UI (it does not toggle it closed)")
    t.eq("first", require("bb7.state").data.chat.name)
    -- in the bb7 tab, the input gets the focus in insert mode
    ui.focus("chats")
    env.cmd("BB7NewChat second")
    t.truthy(ui.is_open())
    t.eq(ui.wins.input, vim.api.nvim_get_current_win())
    t.eq("second", require("bb7.state").data.chat.name)
    vim.cmd("stopinsert")
    local help = table.concat(require("bb7.ui.help").lines("input"), "\n")
    t.truthy(help:find(":BB7NewChat%s+start a new chat and make it active"), "? lists the command")
  end)
end)
