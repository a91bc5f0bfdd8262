-- Ask once before instructions include files: a repository can ship `.bb7/instructions` with
-- `@include .env`, and whatever it includes goes with every message. Before the first send of
-- a chat whose instructions include files, the list (path and size, and why git does not
-- vouch for a file) is shown and the user asked; the answer is remembered per project in
-- `~/.bb7/include_consent.json` (the user's, never the repository's) and given to the daemon
-- with `allow_includes`, which otherwise refuses includes that are untracked, ignored or in
-- `.git`.
local jsonfile = require("bb7.jsonfile")

local M = {}

function M.path()
  return (vim.env.HOME or vim.fn.expand("~")) .. "/.bb7/include_consent.json"
end

--- The include paths the user allowed for the project at `root`.
function M.allowed(root)
  local data = jsonfile.read(M.path(), {})
  local projects = type(data) == "table" and data.projects
  local list = type(projects) == "table" and projects[root]
  if type(list) ~= "table" then
    return {}
  end
  return vim.tbl_filter(function(path)
    return type(path) == "string"
  end, list)
end

--- Remembers `paths` as allowed for `root` (with those allowed before); nil and a message on
--- failure.
function M.remember(root, paths)
  local data = jsonfile.read_object(M.path())
  if not data then
    data = {}
  end
  data.projects = type(data.projects) == "table" and data.projects or {}
  local set, list = {}, {}
  for _, path in ipairs(vim.list_extend(M.allowed(root), paths)) do
    if not set[path] then
      set[path] = true
      table.insert(list, path)
    end
  end
  data.projects[root] = list
  vim.fn.mkdir(vim.fn.fnamemodify(M.path(), ":h"), "p")
  return jsonfile.write(M.path(), data)
end

--- The includes of `chat` (a chat_get reply) not yet allowed for `root`.
function M.pending(chat, root)
  local info = chat and chat.instructions_info
  local includes = type(info) == "table" and info.project_includes
  if type(includes) ~= "table" or chat.global then
    return {}
  end
  local allowed = {}
  for _, path in ipairs(M.allowed(root)) do
    allowed[path] = true
  end
  return vim.tbl_filter(function(include)
    return type(include) == "table" and type(include.path) == "string" and not allowed[include.path]
  end, includes)
end

local WHY = {
  untracked = "not tracked by git",
  ignored = "ignored by git",
  git_dir = "inside .git",
}

--- The question for `includes`.
function M.question(includes)
  local lines = { "The project instructions (.bb7/instructions) send these files with every message:" }
  for _, include in ipairs(includes) do
    local why = WHY[include.needs_consent]
    table.insert(
      lines,
      string.format("  %s (%s bytes)%s", include.path, tostring(include.bytes or "?"), why and ("  ⚠ " .. why) or "")
    )
  end
  -- what each answer does to this send: "Not now" sends nothing and asks again next time
  table.insert(lines, "Allow: this message and the later ones send them (remembered for this project).")
  table.insert(lines, "Not now: this message is not sent; you are asked again on the next send.")
  return table.concat(lines, "\n")
end

--- Asks the user; true when they allow. Replaced in tests.
function M.confirm(question)
  return vim.fn.confirm(question, "&Allow\n&Not now", 2) == 1
end

--- Gives the daemon the includes allowed for `root`, then calls `cb(ok)`.
function M.tell(root, cb)
  local paths = M.allowed(root)
  if #paths == 0 then
    return cb and cb(true)
  end
  require("bb7.session").request("allow_includes", { paths = paths }, function(reply)
    if reply.type == "error" then
      -- an older daemon: it has no such gate either
      return cb and cb(false)
    end
    return cb and cb(true)
  end)
end

--- Asks about `chat`'s includes not yet allowed for `root` (call only when there are some):
--- true when the user allowed them (now remembered), false (with a message) when not.
function M.ask(chat, root)
  local pending = M.pending(chat, root)
  if not M.confirm(M.question(pending)) then
    require("bb7.notify").warn(
      "Not sent: the project instructions include files you did not allow (:BB7EditInstructions to change them)"
    )
    return false
  end
  local ok, err = M.remember(
    root,
    vim.tbl_map(function(include)
      return include.path
    end, pending)
  )
  if not ok then
    require("bb7.notify").error("Cannot remember the allowed includes: " .. tostring(err))
    return false
  end
  return true
end

return M
