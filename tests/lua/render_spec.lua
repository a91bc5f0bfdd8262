local t = require("helpers.assert")
local env = require("helpers.env")

local function user(text, model)
  return { role = "user", model = model, parts = { { type = "text", content = text } } }
end

local function assistant(parts, model)
  return { role = "assistant", model = model, parts = parts }
end

describe("render", function()
  local render
  before_each(function()
    env.reset()
    render = require("bb7.render")
  end)

  it("renders messages with headers, reasoning folds and file events", function()
    local out = render.chat({ messages = {
      assistant({ { type = "context_event", action = "UserAddFile", path = "math.cs", readonly = true } }),
      user("Refactor\nplease", "m/1"),
      assistant({
        { type = "thinking", content = "step 1\nstep 2" },
        { type = "text", content = "Done." },
        { type = "context_event", action = "AssistantWriteFile", path = "math.cs" },
      }, "m/1"),
      { role = "system", parts = { { type = "text", content = "Response aborted by user." } } },
    } })
    t.eq({
      "● added math.cs (read-only)",
      "",
      "▌You  (m/1)",
      "Refactor",
      "please",
      "",
      "▌Assistant  (m/1)",
      "▸ Thinking (2 lines)",
      "step 1",
      "step 2",
      "Done.",
      "● modified math.cs",
      "",
      "▌System",
      "Response aborted by user.",
    }, out.lines)
    t.eq({ { 7, 9 } }, out.folds)
    t.eq({ { index = 1, role = "user", row = 2, last = 4 }, { index = 2, role = "assistant", row = 6, last = 11 }, { index = 3, role = "system", row = 13, last = 14 } }, out.messages)
    t.eq({ 0, "BB7Event" }, out.hls[1])
    t.eq(1, out.total)
    t.eq(1, out.included)
  end)

  it("reads the legacy content field and code parts", function()
    local out = render.chat({ messages = {
      { role = "user", content = "hi" },
      assistant({ { type = "code", language = "lua", content = "x = 1" }, { type = "file", path = "a.lua" } }),
    } })
    t.eq({ "▌You", "hi", "", "▌Assistant", "```lua", "x = 1", "```", "● file a.lua" }, out.lines)
  end)

  it("dims pairs beyond the prediction boundary and counts X / Y", function()
    local long = string.rep("x", 350) -- 100 tokens at 3.5 chars per token
    local out = render.chat({ messages = {
      user(long), assistant({ { type = "text", content = long } }),
      user(long), assistant({ { type = "text", content = long } }),
      user(long), assistant({ { type = "text", content = long } }),
    } }, { limit = 500, allowance = 100, chars_per_token = 3.5 })
    t.eq(3, out.total)
    t.eq(2, out.included)
    local dimmed = {}
    for _, hl in ipairs(out.hls) do
      if hl[2] == "BB7Dim" then
        dimmed[hl[1]] = true
      end
    end
    t.truthy(dimmed[0] and dimmed[1] and dimmed[3] and dimmed[4], "the oldest pair is dim")
    t.falsy(dimmed[6], "the second pair is not")
  end)

  it("describes every context event", function()
    t.eq("● a set read-only", render.event_text({ action = "UserSetReadOnly", path = "a", readonly = true }))
    t.eq("● a set writable", render.event_text({ action = "UserSetReadOnly", path = "a", readonly = false }))
    t.eq("● a changed since this point", render.event_text({ action = "ForkWarningModified", path = "a" }))
    t.eq("● a was deleted since this point", render.event_text({ action = "ForkWarningDeleted", path = "a" }))
    t.eq("● applied a", render.event_text({ action = "UserApplyFile", path = "a" }))
    t.eq("● added section u.cs:2-3", render.event_text({ action = "UserAddSection", path = "u.cs", start_line = 2, end_line = 3 }))
    t.eq("● removed section u.cs:2-3", render.event_text({ action = "UserRemoveSection", path = "u.cs", start_line = 2, end_line = 3 }))
    t.eq("● saved out.cs as src/renamed.cs", render.event_text({ action = "UserSaveAs", path = "src/renamed.cs", original_path = "out.cs" }))
  end)

  it("finds the message under a row", function()
    local out = render.chat({ messages = { user("a"), assistant({ { type = "text", content = "b" } }) } })
    t.eq(0, render.message_at(out, 1).index)
    t.eq(1, render.message_at(out, 3).index)
  end)
end)

describe("preview counter with a model limit", function()
  it("uses the model's context length minus the non-history tokens", function()
    local fake = env.reset({ initialized = true })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    fake.models = { { id = "anthropic/claude-sonnet-4", context_length = 3000 + 300 } } -- 3000 fixed (4200 - 1200)
    local long = string.rep("y", 350)
    fake.chats["0000000001"].messages = {
      user(long), assistant({ { type = "text", content = long } }),
      user(long), assistant({ { type = "text", content = long } }),
    }
    env.cmd("BB7")
    require("bb7.actions").fetch_models()
    env.settle()
    require("bb7.actions").load_chat()
    env.settle()
    local winbar = vim.wo[require("bb7.ui").wins.preview].winbar
    t.matches("│ 1 / 2%%<$", winbar)
  end)
end)
