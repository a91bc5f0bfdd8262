local t = require("helpers.assert")
local env = require("helpers.env")

describe("config", function()
  before_each(function()
    env.reset()
  end)

  it("keeps the defaults as data", function()
    local config = require("bb7.config")
    local opts = config.setup({})
    t.eq(false, opts.debug)
    t.eq({ "n", "a", "apply", "Apply the output of the file under the cursor" }, opts.keymaps.files[6])
  end)

  it("changes a key by action, disables one with false, and adds extra entries", function()
    local opts = require("bb7.config").setup({
      debug = true,
      layout = { sidebar_width = 50 },
      keymaps = { files = { apply = "ga", apply_all = false, { "n", "x", "remove", "Remove" } } },
    })
    t.eq(true, opts.debug)
    t.eq(50, opts.layout.sidebar_width)
    t.eq(8, opts.layout.input_height, "other layout defaults kept")
    local by_action = {}
    for _, entry in ipairs(opts.keymaps.files) do
      by_action[entry[3]] = by_action[entry[3]] or {}
      table.insert(by_action[entry[3]], entry[2])
    end
    t.eq({ "ga" }, by_action.apply)
    t.eq(nil, by_action.apply_all)
    t.eq({ "d", "x" }, by_action.remove)
    t.eq(#require("bb7.config").defaults.keymaps.chats, #opts.keymaps.chats, "other panes untouched")
  end)

  it("maps keys in the pane buffers as configured", function()
    require("bb7").setup({ keymaps = { files = { apply = "ga", apply_all = false } } })
    local fake = require("helpers.env").fake
    require("bb7.session").transport = fake:transport()
    vim.fn.mkdir(env.dir .. "/.bb7", "p")
    env.cmd("BB7")
    local buf = require("bb7.ui.files").buf()
    local maps = {}
    for _, map in ipairs(vim.api.nvim_buf_get_keymap(buf, "n")) do
      maps[map.lhs] = map.desc
    end
    t.eq("bb7: Apply the output of the file under the cursor", maps.ga)
    t.eq(nil, maps.A)
    t.eq(nil, maps.a)
  end)

  it("links highlight groups with default = true", function()
    require("bb7").setup({})
    t.eq({ link = "Comment", default = true }, vim.api.nvim_get_hl(0, { name = "BB7Thinking" }))
    vim.api.nvim_set_hl(0, "BB7Thinking", { fg = "#ff0000" })
    require("bb7").setup({})
    t.eq(0xff0000, vim.api.nvim_get_hl(0, { name = "BB7Thinking" }).fg, "a user's definition wins")
  end)
end)

describe("binary lookup", function()
  before_each(function()
    env.reset()
  end)

  it("prefers opts.cmd, then bb7 on PATH, then target/release/bb7", function()
    local binary = require("bb7.binary")
    t.eq({ "/opt/bb7" }, binary.find("/opt/bb7"))
    t.eq({ "bb7", "--flag" }, binary.find({ "bb7", "--flag" }))
    local bin = env.dir .. "/bin"
    vim.fn.mkdir(bin, "p")
    vim.fn.writefile({ "#!/bin/sh" }, bin .. "/bb7")
    vim.fn.setfperm(bin .. "/bb7", "rwxr-xr-x")
    local old = vim.env.PATH
    vim.env.PATH = bin
    t.eq({ bin .. "/bb7" }, binary.find(nil))
    vim.env.PATH = "/nonexistent"
    local cmd, looked = binary.find(nil)
    vim.env.PATH = old
    if vim.fn.executable(binary.plugin_root() .. "/target/release/bb7") == 1 then
      t.eq({ binary.plugin_root() .. "/target/release/bb7" }, cmd)
    else
      t.eq(nil, cmd)
      t.eq({ "opts.cmd", "bb7 on PATH", binary.plugin_root() .. "/target/release/bb7" }, looked)
    end
  end)
end)
