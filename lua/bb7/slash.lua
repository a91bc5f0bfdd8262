-- `/commands` in the input: a message that is one line `/name [args]` naming one of these runs
-- it instead of being sent (any other text starting with "/" is sent as it is).
local M = {}

M.COMMANDS = {
  { name = "add", args = "{path}", desc = "add a project file to the context" },
  { name = "remove", args = "{path}", desc = "remove a file from the context" },
  { name = "model", args = "[{model}]", desc = "set the model, or pick one" },
  { name = "effort", args = "", desc = "cycle the reasoning effort" },
  { name = "new", args = "[{name}]", desc = "start a new chat" },
  { name = "title", args = "", desc = "regenerate the chat's title" },
  { name = "help", args = "", desc = "show the keys and commands" },
}

local RUN = {
  add = function(args)
    require("bb7.commands").add({ args = args, range = 0 })
  end,
  remove = function(args)
    require("bb7.commands").remove({ args = args, range = 0 })
  end,
  model = function(args)
    require("bb7.commands").model({ args = args, bang = false })
  end,
  effort = function()
    require("bb7.actions").cycle_effort()
  end,
  new = function(args)
    require("bb7.actions").new_chat(args)
  end,
  title = function()
    require("bb7.actions").regenerate_title()
  end,
  help = function()
    require("bb7.ui.help").show("input")
  end,
}

--- The command `text` names (`name`, `args`), or nil when it is not one line `/known ...`.
function M.parse(text)
  local trimmed = vim.trim(text or "")
  if trimmed:find("\n", 1, true) then
    return nil
  end
  local name, args = trimmed:match("^/(%a+)%s*(.-)$")
  if not name or not RUN[name] then
    return nil
  end
  return name, args
end

--- Runs `text` when it is a command; returns whether it was one.
function M.run(text)
  local name, args = M.parse(text)
  if not name then
    return false
  end
  RUN[name](args)
  return true
end

return M
