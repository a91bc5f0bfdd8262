-- The readable preview (markdown, code, thinking, stored usage) and moving around a long chat
-- (message jumps, K, a new chat with the same context).
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function user(text)
  return { role = "user", model = "m/1", timestamp = "2026-01-01T10:00:00Z", parts = { { type = "text", content = text } } }
end

local function assistant(parts, usage)
  return { role = "assistant", model = "m/1", timestamp = "2026-01-01T10:00:05Z", reasoning_effort = "high", parts = parts, usage = usage }
end

-- A chat with these messages, shown in an open bb7 tab.
local function open_with(messages)
  local fake = env.reset({ initialized = true })
  env.cmd("BB7Init")
  fake:new_chat("c")
  fake.active = "0000000001"
  fake.chats["0000000001"].messages = messages
  require("bb7.state").data.ready = false
  env.cmd("BB7")
  env.notes = {}
  return fake
end

-- Extmarks of the preview namespace on `row`: { group = {start_col, end_col} }, plus the
-- concealed ranges under "conceal".
local function marks(row)
  local preview = require("bb7.ui.preview")
  local out = { conceal = {} }
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(preview.buf(), preview.ns, { row, 0 }, { row, -1 }, { details = true })) do
    local d = m[4]
    if d.conceal ~= nil and not d.hl_group then
      table.insert(out.conceal, { m[3], d.end_col })
    elseif d.hl_group then
      out[d.hl_group] = { m[3], d.end_col, conceal = d.conceal }
    end
  end
  return out
end

local function row_of(text)
  for i, line in ipairs(lines(require("bb7.ui.preview").buf())) do
    if line == text then
      return i - 1
    end
  end
  error("no line " .. vim.inspect(text) .. " in " .. vim.inspect(lines(require("bb7.ui.preview").buf())))
end

describe("readable preview", function()
  it("renders bold, italic, inline code, headings and list bullets as extmarks", function()
    open_with({
      user("Explain"),
      assistant({ { type = "text", content = "# Plan\nUse **bold** and *soft* and `x = 1`.\n- first item\n1. numbered\nkeep snake_case_name plain" } }),
    })
    local row = row_of("Use **bold** and *soft* and `x = 1`.")
    local m = marks(row)
    t.eq({ 6, 10 }, { m.BB7Bold[1], m.BB7Bold[2] }, "bold text")
    t.eq({ 18, 22 }, { m.BB7Italic[1], m.BB7Italic[2] }, "italic text")
    t.eq({ 29, 34 }, { m.BB7InlineCode[1], m.BB7InlineCode[2] }, "inline code")
    t.eq({ { 4, 6 }, { 10, 12 }, { 17, 18 }, { 22, 23 }, { 28, 29 }, { 34, 35 } }, m.conceal, "markers concealed")
    t.truthy(marks(row_of("# Plan")).BB7Heading, "heading")
    local bullet = marks(row_of("- first item")).BB7ListBullet
    t.eq({ 0, 1, conceal = "•" }, bullet, "dash drawn as a bullet")
    t.truthy(marks(row_of("1. numbered")).BB7ListBullet, "numbered item")
    t.eq({ conceal = {} }, marks(row_of("keep snake_case_name plain")), "snake_case is not italic")
    local win = require("bb7.ui").wins.preview
    t.eq(2, vim.wo[win].conceallevel)
  end)

  it("highlights fenced code by language with treesitter, plain when no parser exists", function()
    open_with({
      user("Code?"),
      assistant({ { type = "text", content = "Here:\n```lua\nlocal x = require('y')\n```\nand\n```nosuchlang\nfoo bar\n```" } }),
    })
    local row = row_of("local x = require('y')")
    local m = marks(row)
    t.truthy(m["@keyword.lua"], "treesitter capture on `local`: " .. vim.inspect(m))
    t.eq({ 0, 5 }, { m["@keyword.lua"][1], m["@keyword.lua"][2] })
    t.truthy(m["@string.lua"], "string capture")
    t.truthy(marks(row - 1).BB7CodeFence == nil, "fence lines use a line highlight")
    local preview = require("bb7.ui.preview")
    local fence_groups = {}
    for _, mk in ipairs(vim.api.nvim_buf_get_extmarks(preview.buf(), preview.ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
      table.insert(fence_groups, mk[4].line_hl_group)
    end
    t.eq({ "BB7CodeFence" }, fence_groups)
    t.eq({ 0, 7 }, { marks(row_of("foo bar")).BB7Code[1], marks(row_of("foo bar")).BB7Code[2] }, "plain fallback")
  end)

  it("highlights the code in view first and the rest as it scrolls into view", function()
    local messages = {}
    for i = 1, 60 do
      table.insert(messages, user("q" .. i))
      table.insert(messages, assistant({ { type = "text", content = "```lua\nlocal v" .. i .. " = " .. i .. "\n```" } }))
    end
    open_with(messages)
    local ui = require("bb7.ui")
    ui.focus("preview")
    -- a chat opens at its end: the newest blocks are in view
    t.truthy(marks(row_of("local v60 = 60"))["@keyword.lua"], "the last block, in view")
    t.falsy(marks(row_of("local v1 = 1"))["@keyword.lua"], "the first block waits")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd("redraw")
    t.falsy(marks(row_of("local v1 = 1"))["@keyword.lua"], "nothing before the scroll event")
    -- a script run by `nvim -l` has no main loop to fire WinScrolled after the redraw
    vim.api.nvim_exec_autocmds("WinScrolled", {})
    t.truthy(marks(row_of("local v1 = 1"))["@keyword.lua"], "highlighted once scrolled to")
  end)

  it("puts reasoning under a header that stays visible when folded, and <CR> opens it", function()
    open_with({
      user("Think"),
      assistant({ { type = "thinking", content = "a\nb\nc" }, { type = "text", content = "Done." } }),
    })
    local header = row_of("▸ Thinking (3 lines)")
    local ui = require("bb7.ui")
    ui.focus("preview")
    t.eq(header + 1, vim.fn.foldclosed(header + 2), "the fold starts at the header")
    t.eq(header + 4, vim.fn.foldclosedend(header + 2))
    vim.api.nvim_win_set_cursor(0, { header + 1, 0 })
    require("bb7.ui.nav").handlers.toggle_thinking()
    t.eq(-1, vim.fn.foldclosed(header + 2), "open after <CR>")
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    t.eq(header + 1, vim.fn.foldclosed(header + 2), "the mapped key closes it again")
  end)

  it("shows each stored reply's usage line, older replies included", function()
    open_with({
      user("one"),
      assistant({ { type = "text", content = "first" } }, { prompt_tokens = 4200, cached_tokens = 3500, completion_tokens = 890, cost = 0.012, duration = 3.2 }),
      user("two"),
      assistant({ { type = "text", content = "second" } }, { prompt_tokens = 900, completion_tokens = 12, duration = 75 }),
    })
    local shown = lines(require("bb7.ui.preview").buf())
    t.eq("3.2s · 4.2k in (3.5k cached) · 890 out · $0.0120", shown[row_of("first") + 2])
    t.eq("1m 15s · 900 in · 12 out", shown[row_of("second") + 2])
    t.truthy(marks(row_of("1m 15s · 900 in · 12 out")) ~= nil)
  end)
end)

describe("long chats", function()
  local fake
  before_each(function()
    fake = open_with({
      user("q1"),
      assistant({ { type = "text", content = "a1" } }, { prompt_tokens = 10, completion_tokens = 5, cost = 0.5, duration = 2 }),
      user("q2"),
      assistant({ { type = "text", content = "a2" } }),
    })
    require("bb7.ui").focus("preview")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
  end)

  it("jumps between messages and between user messages", function()
    local h = require("bb7.ui.nav").handlers
    h.next_message()
    t.eq(row_of("▌Assistant  (m/1)") + 1, vim.api.nvim_win_get_cursor(0)[1])
    h.next_user_message()
    local q2 = vim.api.nvim_win_get_cursor(0)[1]
    t.eq("q2", lines(require("bb7.ui.preview").buf())[q2 + 1])
    h.prev_user_message()
    t.eq(1, vim.api.nvim_win_get_cursor(0)[1])
    vim.api.nvim_feedkeys("]]]]", "x", false)
    t.eq(q2, vim.api.nvim_win_get_cursor(0)[1], "]] is mapped in the preview")
    h.prev_message()
    t.eq(row_of("▌Assistant  (m/1)") + 1, vim.api.nvim_win_get_cursor(0)[1])
  end)

  it("K shows time, model, reasoning, tokens, cost and duration of the message and its pair", function()
    local nav = require("bb7.ui.nav")
    local d = nav.details(fake.chats["0000000001"].messages[2])
    t.eq("Assistant", d[1])
    t.matches("^Time       2026%-01%-0%d %d%d:%d%d:05$", d[2])
    t.eq({ "Model      m/1", "Reasoning  high", "Tokens     10 in · 5 out", "Cost       $0.50", "Duration   2.0s" }, vim.list_slice(d, 3))
    vim.api.nvim_win_set_cursor(0, { row_of("a1") + 1, 0 })
    require("bb7.ui.nav").handlers.message_info()
    local float
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float = win
      end
    end
    t.truthy(float, "a float opened")
    -- the user message and its reply together, whichever of the two the cursor is on
    local pair = nav.details(fake.chats["0000000001"].messages[1])
    table.insert(pair, "")
    vim.list_extend(pair, d)
    t.eq(pair, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false))
  end)

  it("<C-r> starts a new chat with the same context files", function()
    fake.chats["0000000001"].context = { { path = "a.lua", content = "x", readonly = false } }
    require("bb7.ui.nav").handlers.new_with_context()
    env.settle()
    t.eq("0000000001", fake:sent("chat_new_with_context")[1].source_chat_id)
    t.eq("0000000002", require("bb7.state").data.active_id)
    t.eq({ "a.lua" }, vim.tbl_map(function(f)
      return f.path
    end, require("bb7.state").data.files))
    t.eq({ "INFO BB-7: New chat with the context files of the last one" }, env.messages())
  end)

  it("<C-r> on a global chat makes a global chat", function()
    fake.chats["0000000001"].global = true
    fake.chats["0000000001"].context = { { path = "/etc/hosts", content = "x", readonly = true } }
    require("bb7.state").data.scope = "global"
    require("bb7.actions").load_chat()
    env.settle()
    require("bb7.ui.nav").handlers.new_with_context()
    env.settle()
    t.eq(true, fake:sent("chat_new_with_context")[1].global)
    t.eq({ "INFO BB-7: New chat with the context files of the last one" }, env.messages())
    t.eq(true, fake.chats[require("bb7.state").data.active_id].global)
  end)
end)
