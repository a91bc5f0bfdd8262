-- Pinned chats of a project: `.bb7/pinned_chats.json`, a JSON array of chat ids.
local jsonfile = require("bb7.jsonfile")

local M = {}

function M.path(root)
  return root .. "/.bb7/pinned_chats.json"
end

--- The pinned ids as a set.
function M.load(root)
  local set = {}
  local list = jsonfile.read(M.path(root), {})
  if type(list) == "table" then
    for _, id in ipairs(list) do
      set[id] = true
    end
  end
  return set
end

--- Pins or unpins `id`; returns whether it is pinned now (nil and a message on failure).
function M.toggle(root, id)
  local list = jsonfile.read(M.path(root), {})
  if type(list) ~= "table" then
    list = {}
  end
  local out, found = {}, false
  for _, pinned in ipairs(list) do
    if pinned == id then
      found = true
    else
      table.insert(out, pinned)
    end
  end
  if not found then
    table.insert(out, id)
  end
  local ok, err = jsonfile.write(M.path(root), out)
  if not ok then
    return nil, err
  end
  return not found
end

--- `chats` ordered pinned first (each group keeps the daemon's order), with `pinned` set.
function M.sort(chats, set)
  local pinned, rest = {}, {}
  for _, chat in ipairs(chats) do
    chat.pinned = set[chat.id] == true
    table.insert(chat.pinned and pinned or rest, chat)
  end
  return vim.list_extend(pinned, rest)
end

return M
