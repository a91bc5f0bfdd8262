-- The send workflow in the preview: reasoning effort, failed sends as `[error: CODE]`,
-- re-ask (chat_edit for the last pair, message_delete for an earlier one), deleting a failed
-- pair without a prompt, and the jump to the prediction boundary.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

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

local function user(text)
  return { role = "user", parts = { { type = "text", content = text } } }
end

local function assistant(text)
  return { role = "assistant", parts = { { type = "text", content = text } } }
end

local function system(text)
  return { role = "system", parts = { { type = "text", content = text } } }
end

local function preview_text()
  return table.concat(lines(require("bb7.ui.preview").buf()), "\n")
end

-- Puts the preview cursor on the first line containing `needle`.
local function cursor_on(needle)
  local ui = require("bb7.ui")
  ui.focus("preview")
  for row, line in ipairs(lines(require("bb7.ui.preview").buf())) do
    if line:find(needle, 1, true) then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
      return
    end
  end
  error("no line with " .. needle)
end

describe("reasoning effort", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("cycles none/low/medium/high, is saved per chat, shown by the model and sent", function()
    local ui = require("bb7.ui")
    local st = require("bb7.state").data
    t.eq("none", st.reasoning_effort)
    ui.handlers.input.effort()
    env.settle()
    t.eq("low", st.reasoning_effort)
    t.eq("low", fake:sent("save_chat_settings")[1].reasoning_effort)
    t.eq("low", fake:chat().reasoning_effort)
    t.matches("reasoning low", vim.wo[ui.wins.preview].winbar)
    ui.handlers.input.effort()
    ui.handlers.input.effort()
    env.settle()
    t.eq("high", st.reasoning_effort)
    require("bb7.actions").send("think")
    env.settle()
    t.eq("high", fake:sent("send")[1].reasoning_effort)
    ui.handlers.input.effort()
    env.settle()
    t.eq("none", st.reasoning_effort)
    require("bb7.actions").send("plain")
    env.settle()
    t.eq(nil, fake:sent("send")[2].reasoning_effort, "none is not sent")
  end)

  it("is restored from the chat when it is loaded", function()
    fake:chat().reasoning_effort = "medium"
    require("bb7.actions").load_chat()
    env.settle()
    t.eq("medium", require("bb7.state").data.reasoning_effort)
  end)
end)

describe("failed sends", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("a provider error streams as [error: CODE] message and is kept that way in the chat", function()
    local at_end
    require("bb7.state").on("stream_end", function()
      at_end = preview_text()
    end)
    fake.send_script = { { type = "error", message = "auth: invalid API key" } }
    require("bb7.actions").send("hello")
    env.settle()
    t.matches("%[error: auth%] invalid API key", at_end)
    t.eq({ "ERROR BB-7: Failed to send: [error: auth] invalid API key" }, env.messages())
    -- after the reload the stored system message shows the same way
    t.matches("%[error: auth%] invalid API key", preview_text())
    t.eq(nil, preview_text():find("auth: invalid", 1, true))
  end)

  it("re-ask of the last pair puts the text back and replaces the pair through chat_edit", function()
    fake:chat().messages = { user("first"), assistant("ok"), user("broken ask"), system("net: connection reset") }
    require("bb7.actions").load_chat()
    env.settle()
    cursor_on("[error: net]")
    require("bb7.ui").handlers.preview.reask()
    t.eq({ "broken ask" }, lines(require("bb7.ui.input").buf()))
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win())
    require("bb7.ui.input").set_text("better ask")
    require("bb7.ui").handlers.input.send()
    env.settle()
    local edit = fake:sent("chat_edit")[1]
    t.eq({ 2, "better ask" }, { edit.message_index, edit.content })
    t.eq(0, #fake:sent("message_delete"))
    t.eq("better ask", fake:sent("send")[1].content)
    local roles = vim.tbl_map(function(m)
      return m.role .. ":" .. require("bb7.failed").text_of(m)
    end, fake:chat().messages)
    t.eq({ "user:first", "assistant:ok", "user:better ask", "assistant:Hello world" }, roles)
  end)

  it("when the failed pair cannot be removed, nothing is sent and the text stays in the input", function()
    fake:chat().messages = { user("broken"), system("net: reset"), user("later"), assistant("x") }
    require("bb7.actions").load_chat()
    env.settle()
    cursor_on("[error: net]")
    require("bb7.ui").handlers.preview.reask()
    fake:chat().messages = {} -- changed behind our back
    require("bb7.ui.input").set_text("retry text")
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq({ "ERROR BB-7: Failed to remove the failed message: Can only delete user messages" }, vim.list_slice(env.messages(), #env.messages()))
    t.eq(0, #fake:sent("send"))
    t.eq({ "retry text" }, lines(require("bb7.ui.input").buf()))
    t.eq("retry text", fake:chat().draft)
  end)

  it("<C-c> in the input drops a pending re-ask", function()
    fake:chat().messages = { user("broken"), system("net: reset") }
    require("bb7.actions").load_chat()
    env.settle()
    cursor_on("[error: net]")
    require("bb7.ui").handlers.preview.reask()
    env.notes = {}
    require("bb7.ui").handlers.input.cancel()
    t.eq({ "INFO BB-7: Re-ask cancelled" }, env.messages())
    require("bb7.actions").send("something else")
    env.settle()
    t.eq(0, #fake:sent("chat_edit") + #fake:sent("message_delete"), "the failed pair stays")
  end)

  it("re-ask of an earlier pair removes it with message_delete and appends the new pair", function()
    fake:chat().messages = { user("broken"), system("quota: rate limited"), user("second"), assistant("two") }
    require("bb7.actions").load_chat()
    env.settle()
    cursor_on("[error: quota]")
    require("bb7.ui").handlers.preview.reask()
    require("bb7.ui").handlers.input.send()
    env.settle()
    t.eq(0, fake:sent("message_delete")[1].index)
    t.eq(0, #fake:sent("chat_edit"))
    local roles = vim.tbl_map(function(m)
      return m.role .. ":" .. require("bb7.failed").text_of(m)
    end, fake:chat().messages)
    t.eq({ "user:second", "assistant:two", "user:broken", "assistant:Hello world" }, roles)
  end)

  it("d deletes a failed pair without asking; elsewhere it only warns", function()
    fake:chat().messages = { user("broken"), system("model: unknown model x"), user("second"), assistant("two") }
    require("bb7.actions").load_chat()
    env.settle()
    vim.ui.select = function()
      error("no confirmation expected")
    end
    cursor_on("two")
    require("bb7.ui").handlers.preview.delete_failed()
    env.settle()
    t.eq({ "WARN BB-7: Cursor is not on a failed message" }, env.messages())
    env.notes = {}
    cursor_on("broken")
    require("bb7.ui").handlers.preview.delete_failed()
    env.settle()
    t.eq({ "INFO BB-7: Deleted the failed message" }, env.messages())
    t.eq(0, fake:sent("message_delete")[1].index)
    t.eq(2, #fake:chat().messages)
    t.eq(nil, preview_text():find("error:", 1, true))
  end)
end)

describe("prediction boundary", function()
  local fake
  before_each(function()
    fake = setup()
  end)

  it("jumps to the oldest pair still sent, or says all are included", function()
    fake:chat().messages = { user("old one"), assistant("a"), user("newer"), assistant("b") }
    require("bb7.actions").load_chat()
    env.settle()
    local ui = require("bb7.ui")
    ui.focus("preview")
    ui.handlers.preview.boundary()
    t.eq({ "INFO BB-7: All messages are in context" }, env.messages())
    -- a model whose window leaves room for one pair only
    local st = require("bb7.state").data
    st.models = { { id = st.model, context_length = 4200 - 1200 + 100 + 5 } }
    require("bb7.state").emit("chat")
    t.eq(1, require("bb7.ui.preview").rendered.included)
    vim.api.nvim_win_set_cursor(ui.wins.preview, { 1, 0 })
    ui.handlers.preview.boundary()
    local row = vim.api.nvim_win_get_cursor(ui.wins.preview)[1]
    local line = lines(require("bb7.ui.preview").buf())[row + 1]
    t.eq("newer", line, "cursor on the header of the first included pair")
  end)

  it("from a file view goes back to the chat first", function()
    fake:chat().messages = { user("old one"), assistant("a"), user("newer"), assistant("b") }
    table.insert(fake:chat().context, { path = "a.lua", content = "x", readonly = false })
    require("bb7.actions").load_chat()
    env.settle()
    local st = require("bb7.state").data
    st.models = { { id = st.model, context_length = 4200 - 1200 + 100 + 5 } }
    local ui = require("bb7.ui")
    local preview = require("bb7.ui.preview")
    ui.focus("preview")
    t.truthy(require("bb7.ui.views").show("file", st.files[1]))
    t.eq("file", preview.mode)
    ui.handlers.preview.boundary()
    t.eq("chat", preview.mode)
    local row = vim.api.nvim_win_get_cursor(ui.wins.preview)[1]
    t.eq("newer", lines(preview.buf())[row + 1])
  end)
end)
