-- Hunks rejected in a review that ended with others still undecided. The daemon has no request
-- that rewrites an output, so the output keeps them; they are remembered here (a file of the
-- plugin's under Neovim's state directory, per chat and path, for that exact output) so that
-- apply-all skips the file, a single apply asks, and the next review starts with them rejected.
local jsonfile = require("bb7.jsonfile")

local M = {}

function M.path()
  return vim.fn.stdpath("state") .. "/bb7/rejections.json"
end

local function key(chat_id, path)
  return tostring(chat_id) .. ":" .. path
end

-- The fingerprint of an output's text (its lines; a final newline or not is the same).
local function fingerprint(text)
  return vim.fn.sha256((text:gsub("\n$", "")))
end

local function load()
  local data = jsonfile.read(M.path(), {})
  return type(data) == "table" and data or {}
end

--- Remembers the rejected hunk keys `keys` of the output `text` of `path` in `chat_id`.
function M.record(chat_id, path, text, keys)
  local data = load()
  data[key(chat_id, path)] = { output = fingerprint(text), hunks = keys }
  return jsonfile.write(M.path(), data)
end

--- The rejected hunk keys (a set) remembered for this output, or nil.
function M.get(chat_id, path, text)
  local entry = load()[key(chat_id, path)]
  if type(entry) ~= "table" or type(text) ~= "string" or entry.output ~= fingerprint(text) or type(entry.hunks) ~= "table" then
    return nil
  end
  local set = {}
  for _, hunk in ipairs(entry.hunks) do
    if type(hunk) == "string" then
      set[hunk] = true
    end
  end
  return next(set) and set or nil
end

--- Forgets what was remembered for `path` in `chat_id`.
function M.forget(chat_id, path)
  local data = load()
  if data[key(chat_id, path)] ~= nil then
    data[key(chat_id, path)] = nil
    jsonfile.write(M.path(), data)
  end
end

return M
