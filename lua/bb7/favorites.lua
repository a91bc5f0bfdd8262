-- Favorite models, kept in the daemon's global state file `~/.bb7/state.json` (`favorites`);
-- other fields of that file are preserved, and it is changed under the daemon's lock.
local jsonfile = require("bb7.jsonfile")
local statelock = require("bb7.statelock")

local M = {}

function M.path()
  return (vim.env.HOME or vim.fn.expand("~")) .. "/.bb7/state.json"
end

function M.list()
  local data = jsonfile.read(M.path(), {})
  if type(data) ~= "table" or type(data.favorites) ~= "table" then
    return {}
  end
  return data.favorites
end

-- The toggle itself, the lock held.
local function toggle_unlocked(model)
  local data, err = jsonfile.read_object(M.path())
  if not data then
    return nil, err
  end
  local list = type(data.favorites) == "table" and data.favorites or {}
  local out, found = {}, false
  for _, id in ipairs(list) do
    if id == model then
      found = true
    else
      table.insert(out, id)
    end
  end
  if not found then
    table.insert(out, model)
  end
  data.favorites = out
  local ok, err = jsonfile.write(M.path(), data)
  if not ok then
    return nil, err
  end
  return not found
end

--- Adds or removes `model` under the daemon's lock; returns whether it is a favorite now (nil
--- and a message on failure).
function M.toggle(model)
  return statelock.with_lock(M.path() .. ".lock", function()
    return toggle_unlocked(model)
  end)
end

return M
