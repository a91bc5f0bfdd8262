local t = require("helpers.assert")
local env = require("helpers.env")

-- Runs :checkhealth bb7 and returns the report's lines.
local function checkhealth()
  vim.cmd("silent checkhealth bb7")
  local out = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("silent! tabclose")
  return table.concat(out, "\n")
end

describe(":checkhealth bb7", function()
  local bin
  before_each(function()
    env.reset()
    bin = env.dir .. "/fakebin/bb7"
    vim.fn.mkdir(env.dir .. "/fakebin", "p")
    vim.fn.writefile({ "#!/bin/sh", 'if [ "$1" = "--version" ]; then echo "bb7 0.1.0"; fi' }, bin)
    vim.fn.setfperm(bin, "rwxr-xr-x")
    require("bb7").setup({ cmd = bin })
    vim.env.XDG_CONFIG_HOME = env.dir .. "/xdg"
  end)

  it("reports Neovim, the daemon version, the config and key, the project", function()
    vim.fn.mkdir(env.dir .. "/xdg/bb7", "p")
    vim.fn.writefile({ '{"api_key": "sk-or-secret-value"}' }, env.dir .. "/xdg/bb7/config.json")
    vim.fn.mkdir(env.dir .. "/.bb7", "p")
    local report = checkhealth()
    t.matches("OK Neovim %d+%.%d+%.%d+", report)
    t.matches("OK daemon " .. vim.pesc(bin) .. ": bb7 0%.1%.0", report)
    t.matches("OK config file: " .. vim.pesc(env.dir .. "/xdg/bb7/config.json"), report)
    t.matches("OK API key is set", report)
    t.matches("OK project initialized: " .. vim.pesc(env.dir .. "/.bb7"), report)
    t.falsy(report:find("secret", 1, true), "the key is never printed")
  end)

  it("reports a missing key, a missing config, an uninitialized project", function()
    vim.fn.mkdir(env.dir .. "/xdg/bb7", "p")
    vim.fn.writefile({ '{"base_url": "http://127.0.0.1:1"}' }, env.dir .. "/xdg/bb7/config.json")
    local report = checkhealth()
    t.matches("ERROR API key not set in config", report)
    t.matches("no project here %(" .. vim.pesc(env.dir) .. " has no %.bb7/%): bb7 works with your global chats", report)
    vim.fn.delete(env.dir .. "/xdg/bb7/config.json")
    report = checkhealth()
    t.matches("WARNING config file not found: " .. vim.pesc(env.dir .. "/xdg/bb7/config.json"), report)
  end)

  it("reports a daemon that cannot be found", function()
    require("bb7").setup({ cmd = nil })
    local old = vim.env.PATH
    vim.env.PATH = "/nonexistent"
    local report = checkhealth()
    vim.env.PATH = old
    if vim.fn.executable(require("bb7.binary").plugin_root() .. "/target/release/bb7") == 0 then
      t.matches("ERROR bb7 daemon not found %(looked at opts%.cmd, bb7 on PATH, ", report)
      t.matches("cargo build %-%-release %-p bb7%-daemon", report)
    end
  end)
end)
