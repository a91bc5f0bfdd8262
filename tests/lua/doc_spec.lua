local t = require("helpers.assert")

describe("doc/bb7.txt", function()
  it("builds help tags and documents every command and status", function()
    local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. "/doc", "p")
    vim.fn.writefile(vim.fn.readfile(root .. "/doc/bb7.txt"), dir .. "/doc/bb7.txt")
    vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc"))
    local tags = {}
    for _, line in ipairs(vim.fn.readfile(dir .. "/doc/tags")) do
      tags[line:match("^[^\t]+")] = true
    end
    for _, cmd in ipairs(vim.api.nvim_get_commands({})) do
      if cmd.name:match("^BB7") then
        t.truthy(tags[":" .. cmd.name], "tag for :" .. cmd.name)
      end
    end
    for _, tag in ipairs({ "bb7-install", "bb7-commands", "bb7-keymaps", "bb7-config", "bb7-statuses" }) do
      t.truthy(tags[tag], tag)
    end
    local text = table.concat(vim.fn.readfile(root .. "/doc/bb7.txt"), "\n")
    for _, status in ipairs({ "  M  ", "  A  ", "  !A  ", "  S  ", "  R  ", "  ~  ", "  ~M  " }) do
      t.truthy(text:find("\n" .. status, 1, true), "status " .. vim.trim(status))
    end
    local defaults = require("bb7.config").defaults.keymaps
    for pane, entries in pairs(defaults) do
      for _, entry in ipairs(entries) do
        t.truthy(text:find(entry[3], 1, true), pane .. " action " .. entry[3] .. " documented")
      end
    end
  end)
end)
