-- Data safety of applies: the plugin writes applied files itself (the daemon only answers the
-- text), never replaces a local file or unsaved buffer text without asking, keeps modes and
-- symlinks, and rejects outputs after a confirmation.
local t = require("helpers.assert")
local env = require("helpers.env")

local uv = vim.uv or vim.loop

local function mode(path)
  return bit.band(uv.fs_stat(path).mode, 511)
end

-- Active chat with outputs `writes` (path -> text) after one send; `locals` (path -> lines)
-- are written first and added to the context.
local function setup(writes, locals)
  local fake = env.reset({ initialized = true })
  local context = {}
  for path, content in pairs(locals or {}) do
    env.write(path, content)
    table.insert(context, path)
  end
  table.sort(context)
  env.cmd("BB7Init")
  fake:new_chat("c")
  fake.active = "0000000001"
  require("bb7.state").data.ready = false
  env.cmd("BB7")
  for _, path in ipairs(context or {}) do
    env.cmd("BB7Add " .. path)
  end
  fake.send_script = { { type = "done", output_files = {}, usage = {}, write = writes } }
  require("bb7.actions").send("go")
  env.settle()
  env.notes = {}
  return fake
end

-- Answers vim.ui.select with the first item whose text is `choice`; records prompts.
local function answer_select(choice, prompts)
  vim.ui.select = function(items, opts, cb)
    table.insert(prompts, opts.prompt)
    cb(vim.tbl_contains(items, choice) and choice or nil)
  end
end

describe("apply of a !A output (the model created a file that exists locally)", function()
  local fake, prompts
  before_each(function()
    fake = setup({ ["tool.sh"] = "#!/bin/sh\necho new\n" })
    local abs = env.dir .. "/tool.sh"
    vim.fn.writefile({ "#!/bin/sh", "echo mine" }, abs)
    require("bb7.actions").refresh_files()
    env.settle()
    prompts = {}
  end)

  it("is shown as !A and cancelling the destination prompt writes nothing", function()
    t.eq("!A", require("bb7.actions.common").file_entry("tool.sh").display_status)
    local asked
    vim.ui.input = function(opts, cb)
      asked = opts
      cb(nil)
    end
    require("bb7.actions").apply("tool.sh")
    env.settle()
    t.eq("tool.sh", asked.default, "the local path is offered")
    t.matches("exists locally", asked.prompt)
    t.eq({ "INFO BB-7: Apply cancelled" }, env.messages())
    t.eq({ "#!/bin/sh", "echo mine" }, vim.fn.readfile(env.dir .. "/tool.sh"))
    t.eq(0, #fake:sent("apply_file") + #fake:sent("apply_file_as"))
  end)

  it("keeping the local path asks once more; Cancel leaves the file alone", function()
    vim.ui.input = function(_, cb)
      cb("tool.sh")
    end
    answer_select("Cancel", prompts)
    require("bb7.actions").apply("tool.sh")
    env.settle()
    t.eq({ "BB-7: tool.sh exists." }, prompts)
    t.eq({ "#!/bin/sh", "echo mine" }, vim.fn.readfile(env.dir .. "/tool.sh"))
    t.eq(0, #fake:sent("apply_file") + #fake:sent("apply_file_as"))
  end)

  it("another path goes through apply_file_as and leaves the local file alone", function()
    vim.ui.input = function(_, cb)
      cb("scripts/tool2.sh")
    end
    require("bb7.actions").apply("tool.sh")
    env.settle()
    local req = fake:sent("apply_file_as")[1]
    t.eq({ "tool.sh", "scripts/tool2.sh" }, { req.path, req.destination })
    t.eq({ "INFO BB-7: Applied tool.sh as scripts/tool2.sh" }, env.messages())
    t.eq({ "#!/bin/sh", "echo new" }, vim.fn.readfile(env.dir .. "/scripts/tool2.sh"), "parent directory created")
    t.eq({ "#!/bin/sh", "echo mine" }, vim.fn.readfile(env.dir .. "/tool.sh"))
  end)

  it("apply-all skips it and says how many it skipped", function()
    require("bb7.actions").apply_all()
    env.settle()
    t.eq({ "WARN BB-7: Skipped 1 file that exists locally (!A): tool.sh; apply each with its own key" }, env.messages())
    t.eq({ "#!/bin/sh", "echo mine" }, vim.fn.readfile(env.dir .. "/tool.sh"))
    t.eq(0, #fake:sent("apply_file"))
  end)
end)

describe("writing an applied file", function()
  local fake
  it("keeps a 0755 file's mode when no buffer is open, atomically", function()
    fake = setup({ ["run.sh"] = "#!/bin/sh\necho new\n" }, { ["run.sh"] = { "#!/bin/sh", "echo old" } })
    local abs = env.dir .. "/run.sh"
    uv.fs_chmod(abs, tonumber("755", 8))
    require("bb7.actions").apply("run.sh")
    env.settle()
    t.eq({ "INFO BB-7: Applied run.sh" }, env.messages())
    t.eq("#!/bin/sh\necho new\n", table.concat(vim.fn.readfile(abs, "b"), "\n"))
    t.eq(tonumber("755", 8), mode(abs))
    t.eq({}, vim.fn.glob(env.dir .. "/.run.sh.bb7-*", true, true), "no temp file left")
  end)

  it("writes through an open buffer: no changed-on-disk warning, mode kept, undoable", function()
    fake = setup({ ["run.sh"] = "#!/bin/sh\necho new\n" }, { ["run.sh"] = { "#!/bin/sh", "echo old" } })
    local abs = env.dir .. "/run.sh"
    uv.fs_chmod(abs, tonumber("755", 8))
    vim.cmd("tabfirst")
    vim.cmd("edit " .. vim.fn.fnameescape(abs))
    local buf = vim.api.nvim_get_current_buf()
    local warned = false
    vim.api.nvim_create_autocmd("FileChangedShell", {
      buffer = buf,
      callback = function()
        warned = true
      end,
    })
    require("bb7.actions").apply("run.sh")
    env.settle()
    vim.cmd("checktime")
    t.falsy(warned, "FileChangedShell (W11/W12)")
    t.eq({ "#!/bin/sh", "echo new" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.falsy(vim.bo[buf].modified)
    t.eq({ "#!/bin/sh", "echo new" }, vim.fn.readfile(abs))
    t.eq(tonumber("755", 8), mode(abs))
    vim.cmd("silent undo")
    t.eq({ "#!/bin/sh", "echo old" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "undo brings the old text back")
    vim.cmd("bwipeout!")
  end)

  it("asks before replacing unsaved changes; Cancel keeps them and applies nothing", function()
    fake = setup({ ["a.txt"] = "new\n" }, { ["a.txt"] = { "old" } })
    local abs = env.dir .. "/a.txt"
    vim.cmd("tabfirst")
    vim.cmd("edit " .. vim.fn.fnameescape(abs))
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "my unsaved edit" })
    local prompts = {}
    answer_select("Cancel", prompts)
    require("bb7.actions").apply("a.txt")
    env.settle()
    t.eq({ "BB-7: a.txt has unsaved changes in Neovim." }, prompts)
    t.eq({ "my unsaved edit" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    t.truthy(vim.bo[buf].modified)
    t.eq({ "old" }, vim.fn.readfile(abs))
    t.eq(0, #fake:sent("apply_file"), "nothing asked of the daemon")
    t.eq({ "INFO BB-7: Apply cancelled" }, env.messages())

    env.notes = {}
    answer_select("Replace the unsaved changes", prompts)
    require("bb7.actions").apply("a.txt")
    env.settle()
    t.eq({ "new" }, vim.fn.readfile(abs))
    t.eq({ "new" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    vim.cmd("silent undo")
    t.eq({ "my unsaved edit" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the replaced text stays in undo")
    vim.cmd("bwipeout!")
  end)

  it("apply-all skips files with unsaved changes", function()
    fake = setup({ ["a.txt"] = "A\n", ["b.txt"] = "B\n" }, { ["a.txt"] = { "a" }, ["b.txt"] = { "b" } })
    local a = env.dir .. "/a.txt"
    vim.cmd("tabfirst")
    vim.cmd("edit " .. vim.fn.fnameescape(a))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "mine" })
    require("bb7.actions").apply_all()
    env.settle()
    t.eq({ "WARN BB-7: Skipped 1 file with unsaved changes: a.txt", "INFO BB-7: Applied 1 file" }, env.messages())
    t.eq({ "a" }, vim.fn.readfile(a))
    t.eq({ "B" }, vim.fn.readfile(env.dir .. "/b.txt"))
    t.eq({ "mine" }, vim.api.nvim_buf_get_lines(0, 0, -1, false))
    vim.cmd("bwipeout!")
  end)

  it("keeps a symlink a symlink and writes its target", function()
    local fake0 = env.reset({ initialized = true })
    local real = env.write("real.txt", { "old" })
    uv.fs_symlink(real, env.dir .. "/link.txt")
    env.cmd("BB7Init")
    fake0:new_chat("c")
    fake0.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.cmd("BB7Add link.txt")
    fake0.send_script = { { type = "done", output_files = {}, usage = {}, write = { ["link.txt"] = "new\n" } } }
    require("bb7.actions").send("go")
    env.settle()
    require("bb7.actions").apply("link.txt")
    env.settle()
    t.eq("link", uv.fs_lstat(env.dir .. "/link.txt").type)
    t.eq({ "new" }, vim.fn.readfile(real))
  end)

  it("asks before writing through a link that leads out of the project; apply-all skips it", function()
    local fake0 = env.reset({ initialized = true })
    local outside_dir = vim.fn.tempname()
    vim.fn.mkdir(outside_dir, "p")
    local real = outside_dir .. "/bashrc"
    vim.fn.writefile({ "mine" }, real)
    uv.fs_symlink(real, env.dir .. "/notes.md")
    env.cmd("BB7Init")
    fake0:new_chat("c")
    fake0.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.cmd("BB7Add notes.md")
    fake0.send_script = { { type = "done", output_files = {}, usage = {}, write = { ["notes.md"] = "evil\n" } } }
    require("bb7.actions").send("go")
    env.settle()
    env.notes = {}
    require("bb7.actions").apply_all()
    env.settle()
    t.eq({ "WARN BB-7: Skipped 1 file linked outside the project: notes.md; apply each with its own key" }, env.messages())
    t.eq({ "mine" }, vim.fn.readfile(real))
    local prompts = {}
    answer_select("Cancel", prompts)
    env.notes = {}
    require("bb7.actions").apply("notes.md")
    env.settle()
    t.eq({ "BB-7: notes.md is a link to " .. vim.fn.resolve(real) .. ", outside the project." }, prompts)
    t.eq({ "INFO BB-7: Apply cancelled" }, env.messages())
    t.eq({ "mine" }, vim.fn.readfile(real))
    t.eq(0, #fake0:sent("apply_file"), "the daemon was not asked")
    answer_select("Write through the link", prompts)
    require("bb7.actions").apply("notes.md")
    env.settle()
    t.eq({ "evil" }, vim.fn.readfile(real))
    t.eq("link", uv.fs_lstat(env.dir .. "/notes.md").type)
  end)

  it("refuses a destination under a file before asking the daemon", function()
    fake = setup({ ["new.txt"] = "new\n" }, { ["plain"] = { "x" } })
    vim.ui.input = function(_, cb)
      cb("plain/new.txt")
    end
    vim.fn.writefile({ "mine" }, env.dir .. "/new.txt")
    require("bb7.actions").refresh_files()
    env.settle()
    require("bb7.actions").apply("new.txt")
    env.settle()
    t.eq({ "ERROR BB-7: Cannot write file plain/new.txt: " .. env.dir .. "/plain is not a directory" }, env.messages())
    t.eq(0, #fake:sent("apply_file_as"))
    t.eq({ "mine" }, vim.fn.readfile(env.dir .. "/new.txt"))
  end)

  it("refuses a file it cannot write before asking the daemon", function()
    if uv.getuid() == 0 then
      io.stdout:write("     (skipped: root writes read-only files)\n")
      return
    end
    fake = setup({ ["ro.txt"] = "new\n" }, { ["ro.txt"] = { "old" } })
    local abs = env.dir .. "/ro.txt"
    uv.fs_chmod(abs, tonumber("444", 8))
    require("bb7.actions").apply("ro.txt")
    env.settle()
    t.eq({ "ERROR BB-7: Cannot write file ro.txt: permission denied" }, env.messages())
    t.eq(0, #fake:sent("apply_file"))
    t.eq({ "old" }, vim.fn.readfile(abs))
    t.eq("M", require("bb7.actions.common").file_entry("ro.txt").status, "the output is still there")
  end)

  it("a write that fails after the daemon took the output keeps the text in a register", function()
    fake = setup({ ["a.txt"] = "new text\n" }, { ["a.txt"] = { "old" } })
    local writeback = require("bb7.writeback")
    local real = writeback.write
    writeback.write = function()
      return false, "No space left on device"
    end
    require("bb7.actions").apply("a.txt")
    env.settle()
    writeback.write = real
    t.eq({ 'ERROR BB-7: Failed to apply a.txt: cannot write a.txt (No space left on device); its new text is in the " register' }, env.messages())
    t.eq("new text\n", vim.fn.getreg('"'))
    t.eq({ "old" }, vim.fn.readfile(env.dir .. "/a.txt"))
  end)

  it("keeps a file without a final newline that way", function()
    fake = setup({ ["n.txt"] = "no newline" }, { ["n.txt"] = { "x" } })
    require("bb7.actions").apply("n.txt")
    env.settle()
    t.eq("no newline", table.concat(vim.fn.readfile(env.dir .. "/n.txt", "b"), "\n"))
  end)
end)

describe("reject from the files pane", function()
  it("asks, then deletes the output with output_delete", function()
    local fake = setup({ ["a.txt"] = "A\n" }, { ["a.txt"] = { "a" } })
    local prompts = {}
    answer_select("Keep", prompts)
    local ui = require("bb7.ui")
    ui.focus("files")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    ui.handlers.files.reject()
    env.settle()
    t.eq({ "BB-7: reject the output of a.txt?" }, prompts)
    t.eq(0, #fake:sent("output_delete"))
    answer_select("Reject", prompts)
    ui.handlers.files.reject()
    env.settle()
    t.eq("a.txt", fake:sent("output_delete")[1].path)
    t.eq({ "INFO BB-7: Rejected a.txt" }, env.messages())
    t.eq({ "a" }, vim.fn.readfile(env.dir .. "/a.txt"), "the local file is untouched")
    t.falsy(require("bb7.actions.common").file_entry("a.txt").has_output)
  end)
end)

describe("pinned chats", function()
  it("reads the bare array written before and writes the shared {chats: [...]} format", function()
    local fake = env.reset({ initialized = true })
    local a = fake:new_chat("a")
    local b = fake:new_chat("b")
    vim.fn.writefile({ vim.json.encode({ a }) }, env.dir .. "/.bb7/pinned_chats.json")
    local pins = require("bb7.pins")
    t.eq({ [a] = true }, pins.load(env.dir))
    t.eq(true, pins.toggle(env.dir, b))
    t.eq({ chats = { a, b } }, vim.json.decode(table.concat(vim.fn.readfile(env.dir .. "/.bb7/pinned_chats.json"), "")))
    t.eq(false, pins.toggle(env.dir, a))
    t.eq({ chats = { b } }, vim.json.decode(table.concat(vim.fn.readfile(env.dir .. "/.bb7/pinned_chats.json"), "")))
    t.eq({ [b] = true }, pins.load(env.dir))
  end)

  it("global chats keep their pins in ~/.bb7/pinned_chats.json", function()
    local fake = env.reset()
    env.cmd("BB7")
    local id = fake:new_chat("g", true)
    require("bb7.actions").toggle_pin(id)
    env.settle()
    local path = vim.env.HOME .. "/.bb7/pinned_chats.json"
    t.eq({ chats = { id } }, vim.json.decode(table.concat(vim.fn.readfile(path), "")))
    vim.fn.delete(path)
  end)
end)
