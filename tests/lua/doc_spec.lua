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

  -- The lines of the KEYMAPS chapter under each pane's heading.
  local function keymap_sections(text)
    local chapter = text:match("%*bb7%-keymaps%*(.-)\n=====")
    local headings = {
      ["Every pane ~"] = "global", ["Chats pane ~"] = "chats", ["Files pane ~"] = "files",
      ["Info pane ~"] = "info", ["Preview pane ~"] = "preview", ["Input pane ~"] = "input",
      ["Split composer (|:BB7Split|!) ~"] = "split",
      ["Hunk review (|:BB7Review|) ~"] = "review",
    }
    local sections, pane = {}, nil
    for line in (chapter .. "\n"):gmatch("(.-)\n") do
      if headings[line] then
        pane = headings[line]
        sections[pane] = {}
      elseif line == "" or not line:match("^ ") then
        pane = nil
      elseif pane then
        table.insert(sections[pane], line)
      end
    end
    return sections, chapter:match("%*bb7%-keymaps%-classic%*(.*)$")
  end

  it("lists every default key under its pane, and every classic key", function()
    local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
    local text = table.concat(vim.fn.readfile(root .. "/doc/bb7.txt"), "\n")
    local sections, classic = keymap_sections(text)
    local defaults = require("bb7.config").defaults.keymaps
    for pane, entries in pairs(defaults) do
      t.truthy(sections[pane], "a section for the " .. pane .. " keys")
      local listed = {}
      for _, line in ipairs(sections[pane]) do
        local lhs = line:match("^  (%S+)")
        if lhs then
          listed[lhs] = true
        end
      end
      for _, entry in ipairs(entries) do
        t.truthy(listed[entry[2]], pane .. " key " .. entry[2] .. " (" .. entry[3] .. ") listed")
      end
    end
    t.truthy(classic, "the classic section")
    local preset = require("bb7.keymaps_classic").build(defaults)
    for pane, entries in pairs(preset) do
      local default_lhs = {}
      for _, entry in ipairs(defaults[pane] or {}) do
        default_lhs[entry[3]] = entry[2]
      end
      for _, entry in ipairs(entries) do
        local lhs = entry[2]
        local shown = classic:find(lhs:sub(1, 1) == "<" and lhs or ("`" .. lhs .. "`"), 1, true)
          or (lhs:match("^g[1-5]$") and classic:find("`g1`-`g5`", 1, true))
          or default_lhs[entry[3]] == lhs
        t.truthy(shown, "classic " .. pane .. " key " .. lhs .. " (" .. entry[3] .. ") documented")
      end
    end
  end)
end)
