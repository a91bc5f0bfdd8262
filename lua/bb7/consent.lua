-- Ask once before instructions include files: a repository can ship `.bb7/instructions` with
-- `@include .env`, and whatever it includes goes with every message. Before the first send of
-- a chat whose instructions include files, the list (path and size, and why git does not
-- vouch for a file) is shown and the user asked; the answer is remembered per project in
-- `~/.bb7/include_consent.json` (the user's, never the repository's) and given to the daemon
-- with `allow_includes`, which otherwise refuses includes that are untracked, ignored or in
-- `.git`. With each path the digest the daemon listed is remembered (of the file it resolves
-- to and its content) and given back with it, so the consent covers what was shown: a file
-- that later turns into a link to `.env`, or whose content changes, is asked about again.
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

--- The digest each allowed path of `root` had when the user allowed it (path -> digest).
function M.digests(root)
  local data = jsonfile.read(M.path(), {})
  local all = type(data) == "table" and data.digests
  local map = type(all) == "table" and all[root]
  if type(map) ~= "table" then
    return {}
  end
  local out = {}
  for path, digest in pairs(map) do
    if type(path) == "string" and type(digest) == "string" then
      out[path] = digest
    end
  end
  return out
end

--- Remembers `paths` as allowed for `root` (with those allowed before), each with its digest
--- from `digests` (path -> digest) where the daemon gave one; nil and a message on failure.
function M.remember(root, paths, digests)
  local data = jsonfile.read_object(M.path())
  if not data then
    data = {}
  end
  data.projects = type(data.projects) == "table" and data.projects or {}
  data.digests = type(data.digests) == "table" and data.digests or {}
  local kept = M.digests(root)
  for path, digest in pairs(digests or {}) do
    kept[path] = digest
  end
  data.digests[root] = kept
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
  local digests = M.digests(root)
  return vim.tbl_filter(function(include)
    if type(include) ~= "table" or type(include.path) ~= "string" then
      return false
    end
    -- allowed by name, and (where the daemon says what it sends) for exactly that file
    local same = type(include.digest) ~= "string" or digests[include.path] == include.digest
    return not (allowed[include.path] and same)
  end, includes)
end

local WHY = {
  untracked = "not tracked by git",
  ignored = "ignored by git",
  git_dir = "inside .git",
  secret_name = "its name says it holds secrets",
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
  local digests = M.digests(root)
  local paths = vim.tbl_map(function(path)
    -- with its digest, the daemon lets the path through only while it sends the same file
    return digests[path] and { path = path, digest = digests[path] } or path
  end, M.allowed(root))
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
  local digests = {}
  for _, include in ipairs(pending) do
    if type(include.digest) == "string" then
      digests[include.path] = include.digest
    end
  end
  local ok, err = M.remember(
    root,
    vim.tbl_map(function(include)
      return include.path
    end, pending),
    digests
  )
  if not ok then
    require("bb7.notify").error("Cannot remember the allowed includes: " .. tostring(err))
    return false
  end
  return true
end

return M
