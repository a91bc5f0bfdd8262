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

  it("a locked chat is marked in the list; <CR> on it says so, u force-unlocks it after asking", function()
    local id = fake:new_chat("held")
    fake.chats[id].locked = true
    fake:new_chat("free")
    vim.ui.select = function(_, _, cb)
      cb(nil)
    end
    env.cmd("BB7")
    local chats = require("bb7.ui.chats")
    local buf = chats.buf()
    t.eq({ "   free", "   held  ⊘ locked" }, lines(buf))
    local ui = require("bb7.ui")
    ui.focus("chats")
    vim.api.nvim_win_set_cursor(ui.wins.chats, { 2, 0 })
    env.notes = {}
    feed("<CR>")
    t.eq({ "WARN BB-7: Chat is locked by another bb7 process (u force-unlocks it)" }, env.messages())
    t.eq(0, #fake:sent("chat_select"))
    -- u asks; "Cancel" keeps the lock
    local asked
    vim.ui.select = function(items, opts, cb)
      asked = opts.prompt
      cb(items[2])
    end
    feed("u")
    t.truthy(asked and asked:find("force unlock held?", 1, true), "asks first")
    t.eq(0, #fake:sent("chat_force_unlock"))
    vim.ui.select = function(items, _, cb)
      cb(items[1])
    end
    feed("u")
    t.eq(1, #fake:sent("chat_force_unlock"))
    t.eq(id, fake:sent("chat_force_unlock")[1].id)
    t.eq({ "   free", "   held" }, lines(buf))
    -- on a chat that is not locked, u only says so
    env.notes = {}
    feed("u")
    t.eq({ "INFO BB-7: Chat is not locked" }, env.messages())
    t.truthy(table.concat(require("bb7.ui.help").lines("chats"), "\n"):find("Force%-unlock"), "? lists u")
  end)
end)
