-- The first plugin's workflows that this plugin had missing or different:
-- the cancelled picker, the input placeholder, `u` in sync and `U`, watched buffers, the
-- classic preset's <C-x> in insert mode, <C-CR> and <C-d>/<C-u> from other panes.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function new_chat()
  env.cmd("BB7")
  require("bb7.actions").new_chat("rows")
  env.settle()
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  env.settle()
end

describe("workflow rows", function()
  local fake
  before_each(function()
    fake = env.reset({ initialized = true })
  end)

  it(":BB7 with chats but none active: a cancelled picker still opens the UI, with the placeholder", function()
    fake:new_chat("old one")
    vim.ui.select = function(_, _, cb)
      cb(nil)
    end
    env.cmd("BB7")
    t.truthy(require("bb7.ui").is_open())
    local marks = vim.api.nvim_buf_get_extmarks(require("bb7.ui.input").buf(), -1, 0, -1, { details = true })
    t.eq("No chat selected", marks[1] and marks[1][4].virt_text[1][1])
  end)

  it("u says Already in sync, U updates every changed file", function()
    new_chat()
    env.write("a.txt", { "a" })
    env.write("b.txt", { "b" })
    env.cmd("BB7Add a.txt")
    env.cmd("BB7Add b.txt")
    env.notes = {}
    require("bb7.actions").update("a.txt")
    env.settle()
    t.eq({ "INFO BB-7: Already in sync: a.txt" }, env.messages())
    t.eq(0, #fake:sent("context_update"))
    env.write("a.txt", { "a2" })
    env.write("b.txt", { "b2" })
    env.notes = {}
    require("bb7.ui").handlers.files.update_all()
    env.settle()
    t.eq(2, #fake:sent("context_update"))
    t.eq({ "INFO BB-7: Updated 2 files" }, env.messages())
  end)

  it("watch = true re-syncs a context file on write; off, it only shows ~", function()
    for _, watch in ipairs({ false, true }) do
      fake = env.reset({ initialized = true, setup = { watch = watch } })
      new_chat()
      local abs = env.write("w.txt", { "one" })
      env.cmd("BB7Add w.txt")
      vim.cmd("tabnew " .. vim.fn.fnameescape(abs))
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { "two" })
      vim.cmd("silent write")
      env.settle()
      vim.wait(400, function()
        return false
      end)
      env.settle()
      t.eq(watch and 1 or 0, #fake:sent("context_update"), "watch = " .. tostring(watch))
      local entry = require("bb7.actions.common").file_entry("w.txt")
      t.eq(watch and "" or "~", entry.display_status, "watch = " .. tostring(watch))
    end
  end)

  it("classic: <C-x> cancels from insert mode, <C-CR> sends, <C-d> scrolls the preview from the input", function()
    fake = env.reset({ initialized = true, setup = { keymaps = "classic" } })
    fake.send_script = { { type = "chunk", content = "Hi" }, { hold = true } }
    new_chat()
    local input = require("bb7.ui.input")
    local function has(mode, lhs, action)
      for _, map in ipairs(vim.api.nvim_buf_get_keymap(input.buf(), mode)) do
        if map.lhs == lhs and map.desc and map.desc:find(action, 1, true) then
          return true
        end
      end
      return false
    end
    t.truthy(has("i", "<C-X>", "Cancel"), "insert <C-x> cancels")
    t.truthy(has("i", "<C-CR>", "Send"), "insert <C-CR> sends")
    t.truthy(has("n", "<C-D>", "Scroll the preview"), "<C-d> scrolls the preview")
    input.set_text("go")
    require("bb7.ui").focus("input")
    feed("<C-CR>")
    t.eq(1, #fake:sent("send"))
    feed("i<C-x><Esc>")
    t.eq(1, #fake:sent("cancel"))
    env.settle()
    t.falsy(require("bb7.state").data.stream)
    -- <C-d> from the input moves the preview's view
    local pbuf = require("bb7.ui.preview").buf()
    vim.bo[pbuf].modifiable = true
    local many = {}
    for i = 1, 300 do
      many[i] = "line " .. i
    end
    vim.api.nvim_buf_set_lines(pbuf, 0, -1, false, many)
    local win = require("bb7.ui").wins.preview
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    require("bb7.ui").focus("input")
    feed("<C-d>")
    t.truthy(vim.api.nvim_win_get_cursor(win)[1] > 1, "preview scrolled")
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win())
    t.truthy(#lines(pbuf) == 300)
  end)
end)
