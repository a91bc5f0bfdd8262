local t = require("helpers.assert")
local env = require("helpers.env")

describe("file status", function()
  local status
  before_each(function()
    env.reset()
    status = require("bb7.status")
  end)

  local function entry(over)
    return vim.tbl_extend("force", { path = "a.lua", status = "", in_context = true, readonly = false, context_content = "x\n" }, over or {})
  end

  it("passes backend statuses through when local matches the context", function()
    t.eq("", status.compute(entry(), "x\n"))
    t.eq("M", status.compute(entry({ status = "M" }), "x\n"))
    t.eq("A", status.compute(entry({ status = "A", in_context = false, context_content = nil }), nil))
    t.eq("!A", status.compute(entry({ status = "!A", in_context = false, context_content = nil }), "other\n"))
    t.eq("S", status.compute(entry({ status = "S", readonly = true }), "changed\n"))
  end)

  it("marks read-only files R", function()
    t.eq("R", status.compute(entry({ readonly = true }), "x\n"))
  end)

  it("marks a local change ~, and ~M when the model changed the file too", function()
    t.eq("~", status.compute(entry(), "y\n"))
    t.eq("~", status.compute(entry({ readonly = true }), "y\n"))
    t.eq("~M", status.compute(entry({ status = "M" }), "y\n"))
  end)

  it("marks a file that is gone locally ~ (the model still sees its snapshot)", function()
    t.eq("~", status.compute(entry(), nil))
    t.eq("~M", status.compute(entry({ status = "M" }), nil))
  end)

  it("compares the open buffer before the file on disk", function()
    local abs = env.write("src/a.lua", { "x" })
    local files = { entry({ path = "src/a.lua" }) }
    status.compute_all(env.dir, files)
    t.eq("", files[1].display_status)
    vim.cmd("edit " .. vim.fn.fnameescape(abs))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "x", "more" })
    status.compute_all(env.dir, files)
    t.eq("~", files[1].display_status, "unsaved buffer edits count")
    vim.cmd("bwipeout!")
    status.compute_all(env.dir, files)
    t.eq("", files[1].display_status, "disk content again once the buffer is gone")
    env.write("src/a.lua", { "changed on disk" })
    status.compute_all(env.dir, files)
    t.eq("~", files[1].display_status)
  end)

  it("reads external (absolute) paths as they are", function()
    local abs = env.write("ext.lua", { "x" })
    local files = { entry({ path = abs, readonly = true, external = true }) }
    status.compute_all("/nonexistent-root", files)
    t.eq("R", files[1].display_status)
  end)
end)
