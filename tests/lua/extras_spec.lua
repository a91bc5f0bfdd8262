-- Help overlay and hints, :BB7Split and the statusline component, chat picker with preview,
-- the classic keymap preset and the first plugin's highlight names.
local t = require("helpers.assert")
local env = require("helpers.env")

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function setup(opts)
  local fake = env.reset(vim.tbl_extend("force", { initialized = true }, opts or {}))
  env.cmd("BB7Init")
  fake:new_chat("c")
  fake.active = "0000000001"
  require("bb7.state").data.ready = false
  env.cmd("BB7")
  env.notes = {}
  return fake
end

local function floats()
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      table.insert(out, win)
    end
  end
  return out
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

describe("help overlay and hints", function()
  it("? lists the current pane's keys as configured, remaps included", function()
    setup({ setup = { keymaps = { files = { apply = "ga", apply_all = false } } } })
    require("bb7.ui").focus("files")
    press("?")
    local wins = floats()
    t.eq(1, #wins, "one float")
    local text = lines(vim.api.nvim_win_get_buf(wins[1]))
    t.eq("Files", text[1])
    t.truthy(vim.tbl_contains(text, "  ga        Apply the output of the file under the cursor"), vim.inspect(text))
    t.falsy(vim.tbl_contains(text, "  a         Apply the output of the file under the cursor"), "old key gone")
    t.falsy(vim.tbl_contains(text, "  A         Apply every output"), "disabled key not listed")
    t.truthy(vim.tbl_contains(text, "Every pane"))
    t.truthy(vim.tbl_contains(text, "  gd        Show the selected file's diff in the preview"))
    press("q")
    t.eq(0, #floats(), "q closes it")
    require("bb7.ui").focus("input")
    press("?")
    text = lines(vim.api.nvim_win_get_buf(floats()[1]))
    t.eq("Input", text[1])
    t.truthy(vim.tbl_contains(text, "  <C-s>     Send the message (i)"))
  end)

  it("each pane's status line hints at its keys", function()
    setup({ setup = { keymaps = { input = { model = "gM" } } } })
    local wins = require("bb7.ui").wins
    t.matches("%?%%#BB7HintText# keys%%<$", vim.wo[wins.input].statusline, "the help key always fits")
    t.truthy(#vim.wo[wins.input].statusline:gsub("%%#[%w]+#", "") <= vim.api.nvim_win_get_width(wins.input), "fits the window")
    local hint = require("bb7.ui.help").hint("input", 200)
    t.matches("<CR>%%#BB7HintText# send", hint)
    t.matches("gM%%#BB7HintText# model", hint)
    t.matches("%?%%#BB7HintText# keys", hint)
    t.matches("d%%#BB7HintText# remove", require("bb7.ui.help").hint("files", 200))
    local _, sends = hint:gsub("send", "")
    t.eq(1, sends, "an action is hinted once")
  end)
end)

describe(":BB7Split and status()", function()
  it("sends from a small split without the bb7 tab; status() shows streaming, then unread", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    local bb7 = require("bb7")
    t.eq("", bb7.status())
    fake.send_script = { { type = "chunk", content = "partial" }, { hold = true } }
    env.cmd("BB7Split!")
    local split = require("bb7.ui.split")
    t.truthy(split.win and vim.api.nvim_win_is_valid(split.win), "split open")
    t.eq(split.win, vim.api.nvim_get_current_win())
    t.matches("BB%-7 → c %(anthropic/claude%-sonnet%-4%)", vim.wo[split.win].winbar)
    t.matches("<C%-s>/<CR> send · q close$", vim.wo[split.win].winbar)
    t.eq(5, vim.api.nvim_win_get_height(split.win))
    vim.api.nvim_buf_set_lines(split.buf, 0, -1, false, { "from the split", "two lines" })
    press("<Esc>")
    press("<CR>")
    env.settle(200)
    t.eq("from the split\ntwo lines", fake:sent("send")[1].content)
    t.falsy(split.win, "the split closed")
    t.eq("○ bb7", bb7.status())
    t.eq("BB7StatusStreaming", bb7.status_hl())
    t.eq("streaming", require("bb7.indicator").raw())
    require("bb7.actions").cancel()
    env.settle()
    t.eq("● bb7", bb7.status(), "finished out of view: unread")
    t.eq("BB7StatusUnread", bb7.status_hl())
    env.cmd("BB7")
    t.eq("", bb7.status(), "opening the tab reads it")
  end)

  it("a reply that ends while the tab is in view is not unread", function()
    local fake = setup()
    require("bb7.actions").send("hi")
    t.eq("○ bb7", require("bb7").status())
    env.settle()
    t.eq(1, #fake:sent("send"))
    t.eq("", require("bb7").status())
  end)

  it("refuses without an active chat and with nothing typed", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    env.notes = {}
    env.cmd("BB7Split!")
    t.eq({ "WARN BB-7: No active chat" }, env.messages())
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.notes = {}
    env.cmd("BB7Split!")
    require("bb7.ui.split").send()
    t.eq({ "WARN BB-7: Nothing to send" }, env.messages())
    t.eq(0, #fake:sent("send"))
  end)

  it("status symbols come from the options", function()
    local fake = env.reset({ initialized = true, setup = { status = { streaming = { symbol = "S" } } } })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    fake.send_script = { { hold = true } }
    env.cmd("BB7Split!")
    vim.api.nvim_buf_set_lines(require("bb7.ui.split").buf, 0, -1, false, { "x" })
    require("bb7.ui.split").send()
    env.settle(100)
    t.eq("S", require("bb7").status())
    require("bb7.actions").cancel()
    env.settle()
    vim.cmd("stopinsert")
  end)
end)

describe("chat picker", function()
  it("falls back to vim.ui.select and previews a chat from its chat.json", function()
    local fake = setup()
    fake:new_chat("second")
    local picker = require("bb7.picker")
    t.eq("select", picker.backend())
    local seen
    vim.ui.select = function(items, opts, on_choice)
      seen = { items = items, label = opts.format_item(items[1]), prompt = opts.prompt }
      on_choice(items[2])
    end
    env.cmd("BB7Search Chat")
    env.cmd("BB7Search c")
    t.eq("BB-7: Search results", seen.prompt)
    t.eq("second", seen.label)
    t.eq("0000000001", require("bb7.state").data.active_id)
    local dir = env.dir .. "/.bb7/chats/0000000002"
    vim.fn.mkdir(dir, "p")
    vim.fn.writefile({ vim.json.encode({ id = "0000000002", messages = { { role = "user", parts = { { type = "text", content = "stored **text**" } } } } }) }, dir .. "/chat.json")
    t.eq({ "▌You", "stored **text**" }, picker.preview_lines({ id = "0000000002", name = "second" }))
    t.eq({ "gone", "", "an excerpt" }, picker.preview_lines({ id = "missing", name = "gone", excerpt = "an excerpt" }))
  end)

  it("uses telescope when it is installed, with the chat as preview", function()
    setup()
    local made
    package.loaded["telescope.pickers"] = {
      new = function(_, spec)
        made = spec
        return { find = function() end }
      end,
    }
    package.loaded["telescope.finders"] = { new_table = function(spec)
      return spec
    end }
    package.loaded["telescope.previewers"] = { new_buffer_previewer = function(spec)
      return spec
    end }
    package.loaded["telescope.config"] = { values = { generic_sorter = function()
      return "sorter"
    end } }
    local chosen = {}
    package.loaded["telescope.actions"] = {
      select_default = { replace = function(_, fn)
        chosen.fn = fn
      end },
      close = function() end,
    }
    package.loaded["telescope.actions.state"] = { get_selected_entry = function()
      return { value = { id = "0000000001" } }
    end }
    local picker = require("bb7.picker")
    t.eq("telescope", picker.backend())
    local got
    picker.chats({ { id = "0000000001", name = "c" } }, "BB-7: pick", function(chat)
      got = chat
    end)
    t.eq("BB-7: pick", made.prompt_title)
    t.eq("c", made.finder.entry_maker({ id = "0000000001", name = "c" }).display)
    local buf = vim.api.nvim_create_buf(false, true)
    made.previewer.define_preview({ state = { bufnr = buf } }, { value = { id = "0000000001", name = "c", excerpt = "hello" } })
    t.truthy(#lines(buf) > 0)
    made.attach_mappings(1)
    chosen.fn()
    t.eq("0000000001", got.id)
    for _, name in ipairs({ "telescope.pickers", "telescope.finders", "telescope.previewers", "telescope.config", "telescope.actions", "telescope.actions.state" }) do
      package.loaded[name] = nil
    end
  end)
end)

describe("chat picker through snacks", function()
  it("uses snacks.picker when telescope is absent, previewing the chat", function()
    setup()
    local spec
    package.loaded["snacks.picker"] = { pick = function(opts)
      spec = opts
    end }
    local picker = require("bb7.picker")
    t.eq("snacks", picker.backend())
    local got
    picker.chats({ { id = "0000000001", name = "c", excerpt = "hi" } }, "BB-7: pick", function(chat)
      got = chat
    end)
    t.eq("BB-7: pick", spec.title)
    t.eq("c  hi", spec.items[1].text)
    local set, ft
    spec.preview({ item = spec.items[1], preview = {
      set_lines = function(_, l)
        set = l
      end,
      highlight = function(_, o)
        ft = o.ft
      end,
    } })
    t.eq({ "c", "", "hi" }, set)
    t.eq("markdown", ft)
    local closed = false
    spec.confirm({ close = function()
      closed = true
    end }, spec.items[1])
    t.truthy(closed)
    t.eq("0000000001", got.id)
    package.loaded["snacks.picker"] = nil
  end)
end)

describe("classic keys", function()
  local function maps(buf, mode)
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_keymap(buf, mode)) do
      out[vim.api.nvim_replace_termcodes(m.lhs, true, false, true)] = m.desc
    end
    return out
  end
  local function key(lhs)
    return vim.api.nvim_replace_termcodes(lhs, true, false, true)
  end

  it("maps the first plugin's keys in each pane", function()
    setup({ setup = { keymaps = "classic" } })
    local buffers = require("bb7.ui.buffers")
    local files = maps(buffers.get("files"), "n")
    t.eq("bb7: Apply the output of the file under the cursor", files[key("p")])
    t.eq("bb7: Apply every output", files[key("P")])
    t.eq("bb7: Reject the output (after a confirmation), else remove from context", files[key("x")])
    t.eq("bb7: Show the context-to-output diff", files[key("<CR>")], "actions without a classic key keep theirs")
    t.eq("bb7: Go to the chats pane", files[key("g1")])
    t.eq("bb7: Next pane", files[key("<Tab>")])
    t.eq("bb7: Close bb7", files[key("<Esc>")])
    t.eq("bb7: Cancel the running response", files[key("<C-x>")])
    t.eq(nil, files[key("a")], "our a is not mapped")
    local chats = maps(buffers.get("chats"), "n")
    t.eq("bb7: Rename the chat under the cursor", chats[key("r")])
    t.eq("bb7: Regenerate the title of the chat under the cursor", chats[key("R")])
    local input_i = maps(buffers.get("input"), "i")
    t.eq("bb7: Send the message", input_i[key("<S-CR>")])
    t.eq("bb7: Close bb7", input_i[key("<C-c>")])
    t.eq("bb7: Pick a model", maps(buffers.get("input"), "n")[key("M")])
    local preview = maps(buffers.get("preview"), "n")
    t.eq("bb7: Open or close the reasoning block", preview[key("o")])
    t.eq("bb7: New chat with this chat's context files", preview[key("<C-r>")])
    -- the pane jumps work
    require("bb7.ui").focus("files")
    press("g4")
    t.eq(require("bb7.ui").wins.preview, vim.api.nvim_get_current_win())
    press("<Tab>")
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win())
    press("<Tab>")
    t.eq(require("bb7.ui").wins.chats, vim.api.nvim_get_current_win(), "wraps around")
    press("<S-Tab>")
    t.eq(require("bb7.ui").wins.input, vim.api.nvim_get_current_win())
  end)

  it("takes changes over the preset", function()
    setup({ setup = { keymaps = { preset = "classic", files = { apply = "ga" } } } })
    local files = maps(require("bb7.ui.buffers").get("files"), "n")
    t.eq("bb7: Apply the output of the file under the cursor", files[key("ga")])
    t.eq(nil, files[key("p")])
    t.eq("bb7: Apply every output", files[key("P")])
  end)
end)

describe("first plugin's highlight names", function()
  it("link to ours, and a user's style of them carries over", function()
    env.reset()
    t.eq("BB7Thinking", vim.api.nvim_get_hl(0, { name = "BB7ThinkingText" }).link)
    t.eq("BB7DiffDelete", vim.api.nvim_get_hl(0, { name = "BB7DiffRemove" }).link)
    t.eq("BB7User", vim.api.nvim_get_hl(0, { name = "BB7UserMessageBar" }).link)
    vim.cmd("highlight clear")
    vim.api.nvim_set_hl(0, "BB7ThinkingText", { fg = "#123456" })
    vim.api.nvim_set_hl(0, "BB7UserMessageBar", { fg = "#654321" })
    require("bb7").setup({})
    t.eq(0x123456, vim.api.nvim_get_hl(0, { name = "BB7Thinking", link = false }).fg)
    t.eq(0x654321, vim.api.nvim_get_hl(0, { name = "BB7User", link = false }).fg)
    t.eq("Comment", vim.api.nvim_get_hl(0, { name = "BB7Usage" }).link, "others untouched")
    t.truthy(vim.api.nvim_get_hl(0, { name = "BB7Bold" }).bold)
  end)

  it("a style of ours wins over the alias", function()
    vim.cmd("highlight clear")
    vim.api.nvim_set_hl(0, "BB7Thinking", { fg = "#111111" })
    vim.api.nvim_set_hl(0, "BB7ThinkingText", { fg = "#222222" })
    env.reset()
    t.eq(0x111111, vim.api.nvim_get_hl(0, { name = "BB7Thinking", link = false }).fg)
  end)
end)
