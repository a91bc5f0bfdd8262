-- `/commands` in the input: a message that is one line `/name` or `/name args` naming one of
-- these runs it instead of being sent; a command that takes no arguments runs only alone. Any
-- other text starting with "/" ("/title: why", "/added tests", "/help me with") is sent as it
-- is. A command that cannot run says why and leaves the text in the input.
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

-- Why the path argument of /add or /remove cannot be used (nil when it can).
local function path_problem(name, args, need_entry)
  local state = require("bb7.state")
  if args == "" then
    return "name a file: /" .. name .. " {path}"
  end
  local t, err = require("bb7.target").resolve(state.data.root or vim.fn.getcwd(), { args = args }, false)
  if not t then
    return err
  end
  if need_entry then
    for _, file in ipairs(state.data.files or {}) do
      if file.path == t.path or file.path == t.abs then
        return nil
      end
    end
    return "not in the context: " .. t.path
  end
  if not (vim.uv or vim.loop).fs_stat(t.abs) then
    return "no such file or directory: " .. t.path
  end
end

-- Each command: returns false (after saying why) when it could not run.
local RUN = {
  add = function(args)
    local problem = path_problem("add", args, false)
    if problem then
      require("bb7.notify").error("Cannot run /add: " .. problem .. M.KEPT)
      return false
    end
    require("bb7.commands").add({ args = args, range = 0 })
  end,
  remove = function(args)
    local problem = path_problem("remove", args, true)
    if problem then
      require("bb7.notify").error("Cannot run /remove: " .. problem .. M.KEPT)
      return false
    end
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

M.KEPT = " (the text stays in the input; start it with a space to send it as a message)"

local TAKES_ARGS = {}
for _, command in ipairs(M.COMMANDS) do
  TAKES_ARGS[command.name] = command.args ~= ""
end

--- The command `text` names (`name`, `args`), or nil when it is not one line `/known` or
--- `/known args` (a command without arguments: alone).
function M.parse(text)
  local trimmed = vim.trim(text or "")
  if trimmed:find("\n", 1, true) then
    return nil
  end
  local name, args = trimmed:match("^/(%a+)%s+(.+)$")
  if not name then
    name, args = trimmed:match("^/(%a+)$"), ""
  end
  if not name or not RUN[name] or (args ~= "" and not TAKES_ARGS[name]) then
    return nil
  end
  return name, args
end

--- Runs `text` when it is a command. Returns whether it was one, and whether it ran (false:
--- it said why not, and the text belongs in the input still).
function M.run(text)
  local name, args = M.parse(text)
  if not name then
    return false
  end
  return true, RUN[name](args) ~= false
end

return M
