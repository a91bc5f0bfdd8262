-- Ask once before instructions include files: before the first send of a
-- chat whose project instructions include files, the list with sizes is shown and the user
-- asked; the answer is remembered per project and given to the daemon (`allow_includes`),
-- also after a restart.
local t = require("helpers.assert")
local env = require("helpers.env")

describe("include consent", function()
  local fake, asked
  before_each(function()
    fake = env.reset({ initialized = true })
    os.remove(require("bb7.consent").path())
    fake.includes = {
      { path = "notes.md", bytes = 6 },
      { path = ".env", bytes = 24, needs_consent = "ignored" },
    }
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.notes = {}
    asked = {}
    require("bb7.consent").confirm = function(question)
      table.insert(asked, question)
      return asked.answer ~= false
    end
    fake.send_script = { { type = "chunk", content = "ok" }, { type = "done", output_files = {} } }
  end)

  local function type_and_send(text)
    require("bb7.ui.input").set_text(text)
    require("bb7.ui").handlers.input.send()
    env.settle()
  end

  it("asks before the first send, with every include and its size, then sends", function()
    type_and_send("hello")
    t.eq(1, #asked, "asked once")
    t.eq(
      table.concat({
        "The project instructions (.bb7/instructions) send these files with every message:",
        "  notes.md (6 bytes)",
        "  .env (24 bytes)  ⚠ ignored by git",
        "Allow: this message and the later ones send them (remembered for this project).",
        "Not now: this message is not sent; you are asked again on the next send.",
      }, "\n"),
      asked[1]
    )
    t.eq({ { action = "allow_includes", paths = { "notes.md", ".env" } } }, vim.tbl_map(function(req)
      return { action = req.action, paths = req.paths }
    end, fake:sent("allow_includes")))
    t.eq(1, #fake:sent("send"), "sent after the consent")
    t.eq("hello", fake:sent("send")[1].content)
    t.eq("", require("bb7.ui.input").text(), "input cleared")
    -- remembered: the next send asks nothing
    type_and_send("again")
    t.eq(1, #asked)
    t.eq(2, #fake:sent("send"))
    local saved = vim.json.decode(table.concat(vim.fn.readfile(require("bb7.consent").path()), "\n"))
    t.eq({ "notes.md", ".env" }, saved.projects[require("bb7.state").data.root])
  end)

  it("a refusal sends nothing and keeps the text", function()
    asked.answer = false
    type_and_send("secret question")
    t.eq(1, #asked)
    t.eq(0, #fake:sent("send"))
    t.eq(0, #fake:sent("allow_includes"))
    t.eq("secret question", require("bb7.ui.input").text(), "the text stays")
    t.truthy(
      vim.tbl_contains(
        env.messages(),
        "WARN BB-7: Not sent: the project instructions include files you did not allow (:BB7EditInstructions to change them)"
      ),
      vim.inspect(env.messages())
    )
    -- asked again next time
    asked.answer = nil
    type_and_send("secret question")
    t.eq(2, #asked)
    t.eq(1, #fake:sent("send"))
  end)

  it("a new include is asked about; the daemon is told the allowed ones after a restart", function()
    type_and_send("one")
    t.eq(1, #asked)
    fake.includes = {
      { path = "notes.md", bytes = 6 },
      { path = ".env", bytes = 24, needs_consent = "ignored" },
      { path = ".git/config", bytes = 92, needs_consent = "git_dir" },
    }
    require("bb7.actions.sync").load_chat()
    env.settle()
    type_and_send("two")
    t.eq(2, #asked)
    t.truthy(asked[2]:find("  .git/config (92 bytes)  ⚠ inside .git", 1, true), asked[2])
    t.falsy(asked[2]:find("notes.md", 1, true), "only what is new is asked about")
    t.eq(2, #fake:sent("send"))
    -- a new daemon (restart) is given the remembered list right after init
    fake.allowed_includes = {}
    local before = #fake:sent("allow_includes")
    require("bb7.state").data.ready = false
    require("bb7.session").ensure(function() end)
    env.settle()
    t.eq(before + 1, #fake:sent("allow_includes"))
    t.eq({ "notes.md", ".env", ".git/config" }, fake.allowed_includes)
  end)

  it("a chat without includes asks nothing", function()
    fake.includes = nil
    require("bb7.actions.sync").load_chat()
    env.settle()
    type_and_send("plain")
    t.eq(0, #asked)
    t.eq(1, #fake:sent("send"))
  end)
end)

describe("include consent is bound to what was shown", function()
  it("an allowed include is asked about again when the daemon lists another file or content", function()
    env.reset()
    local consent = require("bb7.consent")
    local root = env.dir
    t.truthy(consent.remember(root, { "notes.md" }, { ["notes.md"] = "sha256:aa" }))
    local function chat(digest)
      return { instructions_info = { project_includes = { { path = "notes.md", bytes = 1, digest = digest } } } }
    end
    t.eq({}, consent.pending(chat("sha256:aa"), root))
    t.eq(1, #consent.pending(chat("sha256:bb"), root))
    -- the daemon is given the path with the digest it was allowed with
    local sent
    local session = require("bb7.session")
    local request = session.request
    session.request = function(action, params, cb)
      sent = { action = action, params = params }
      cb({ type = "ok" })
    end
    consent.tell(root)
    session.request = request
    t.eq({ action = "allow_includes", params = { paths = { { path = "notes.md", digest = "sha256:aa" } } } }, sent)
  end)
end)

local real = require("helpers.real")
if real.available() then
  describe("include consent with the real daemon", function()
    it("an ignored include is refused until the user allows it, then sent", function()
      real.run(function()
        real.start({ { text = { "answered" } } })
        env.write(".gitignore", { ".env" })
        env.write(".env", { "API_KEY=secret" })
        env.write(".bb7/instructions", { "@include .env" })
        env.cmd("BB7")
        require("bb7.actions").new_chat("consent")
        env.settle()
        local chat = require("bb7.state").data.chat
        local listed = vim.deepcopy(chat.instructions_info.project_includes)
        -- what the consent is bound to: the resolved path and the content
        t.matches("^sha256:%x+$", listed[1].digest)
        listed[1].digest = nil
        t.eq({ { path = ".env", bytes = 15, needs_consent = "ignored" } }, listed)
        t.truthy(chat.instructions_info.project_error:find("include .env is ignored by git", 1, true))
        local questions = {}
        local consent = require("bb7.consent")
        consent.confirm = function(question)
          table.insert(questions, question)
          return #questions > 1
        end
        -- refused: nothing is sent
        require("bb7.ui.input").set_text("hello")
        require("bb7.ui").handlers.input.send()
        env.settle()
        t.eq(1, #questions)
        t.falsy(require("bb7.state").data.stream)
        t.eq("hello", require("bb7.ui.input").text())
        -- allowed: the daemon is told, the error goes, the reply comes
        require("bb7.ui").handlers.input.send()
        local ended = real.wait_stream_end()
        t.eq(2, #questions)
        t.eq("done", ended.type, vim.inspect(ended))
        t.eq(nil, require("bb7.state").data.chat.instructions_info.project_error)
        t.eq({ ".env" }, consent.allowed(require("bb7.state").data.root))
      end)
    end)
  end)
end
