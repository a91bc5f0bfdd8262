-- Pinned chats: `.bb7/pinned_chats.json` under the project root (or under `~` for global
-- chats), `{"chats": [ids]}` as the first bb7 plugin writes it, so both plugins share pins.
-- A bare array (what this plugin wrote before) is read too, and rewritten in the shared
-- format on the next change.
local jsonfile = require("bb7.jsonfile")

local M = {}

--- The pins file of a project root, or of the global chats when `dir` is the home directory.
function M.path(dir)
  return dir .. "/.bb7/pinned_chats.json"
end

--- The pinned ids, in file order.
function M.ids(dir)
  local data = jsonfile.read(M.path(dir), {})
  local list = {}
  if type(data) == "table" then
    list = vim.islist(data) and data or (type(data.chats) == "table" and data.chats or {})
  end
  return vim.tbl_filter(function(id)
    return type(id) == "string"
  end, list)
end

--- The pinned ids as a set.
function M.load(dir)
  local set = {}
  for _, id in ipairs(M.ids(dir)) do
    set[id] = true
  end
  return set
end

--- Pins or unpins `id`; returns whether it is pinned now (nil and a message on failure).
function M.toggle(dir, id)
  local out, found = {}, false
  for _, pinned in ipairs(M.ids(dir)) do
    if pinned == id then
      found = true
    else
      table.insert(out, pinned)
    end
  end
  if not found then
    table.insert(out, id)
  end
  local ok, err = jsonfile.write(M.path(dir), { chats = out })
  if not ok then
    return nil, err
  end
  return not found
end

--- Carries the pin of chat `id` from the pins of `from_dir` to those of `to_dir` (a chat moved
--- between the stores stays pinned). Returns true, or nil and a message on failure.
function M.carry(from_dir, to_dir, id)
  if not M.load(from_dir)[id] then
    return true
  end
  local ok, err = M.toggle(from_dir, id)
  if ok == nil then
    return nil, err
  end
  if not M.load(to_dir)[id] then
    ok, err = M.toggle(to_dir, id)
    if ok == nil then
      return nil, err
    end
  end
  return true
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
