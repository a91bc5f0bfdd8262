local t = require("helpers.assert")

local favorites = require("bb7.favorites")
local statelock = require("bb7.statelock")
local uv = vim.uv or vim.loop

local function read(path)
  return vim.json.decode(table.concat(vim.fn.readfile(path), "\n"))
end

local function bytes(path)
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

-- Starts `flock LOCK sh -c SCRIPT` (the lock the daemon takes, held by another process) and
-- waits until the script runs.
local function hold_lock(path, script)
  local held = path .. ".held"
  vim.fn.delete(held)
  local job = vim.fn.jobstart({ "flock", path .. ".lock", "sh", "-c", 'touch "$0"; ' .. script, held })
  t.truthy(job > 0, "flock started")
  t.truthy(
    vim.wait(5000, function()
      return uv.fs_stat(held) ~= nil
    end, 10),
    "the lock is held"
  )
  return job
end

describe("favorites in ~/.bb7/state.json", function()
  local path
  before_each(function()
    path = favorites.path()
    vim.fn.delete(vim.fn.fnamemodify(path, ":h"), "rf")
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    statelock.timeout_ms = 2000
  end)

  it("waits for another writer holding the daemon's lock and keeps what it wrote", function()
    t.truthy(statelock.available(), "flock through LuaJIT's FFI")
    vim.fn.writefile({ '{"favorites":["a/1"]}' }, path)
    local job = hold_lock(
      path,
      'sleep 0.4; printf \'{"favorites":["a/1"],"last_model":"m/daemon"}\' > "' .. path .. '"'
    )
    local now, err = favorites.toggle("b/2")
    t.eq(nil, err)
    t.eq(true, now)
    local data = read(path)
    t.eq("m/daemon", data.last_model, "the other writer's change survives")
    t.eq({ "a/1", "b/2" }, data.favorites)
    vim.fn.jobwait({ job }, 3000)
  end)

  it("gives up with a message when the lock is not released, and changes nothing", function()
    vim.fn.writefile({ '{"favorites":[],"last_model":"m/1"}' }, path)
    local before = bytes(path)
    statelock.timeout_ms = 200
    local job = hold_lock(path, "sleep 5")
    local now, err = favorites.toggle("b/2")
    vim.fn.jobstop(job)
    t.eq(nil, now)
    t.matches("state%.json%.lock is held by another process; try again$", err)
    t.eq(before, bytes(path))
  end)

  it("refuses to replace a state file that is not a JSON object", function()
    for _, text in ipairs({ "not json {", '["a"]', '"text"' }) do
      vim.fn.writefile({ text }, path)
      local before = bytes(path)
      local now, err = favorites.toggle("b/2")
      t.eq(nil, now)
      t.matches("state%.json is not a JSON object; fix or remove it$", err)
      t.eq(before, bytes(path), "unchanged: " .. text)
    end
  end)

  it("keeps the file's mode and every other field", function()
    vim.fn.writefile({ '{"favorites":["a/1"],"last_model":"m/1","extra":{"k":[1,2]},"empty":{}}' }, path)
    uv.fs_chmod(path, 384)
    t.eq(false, favorites.toggle("a/1"))
    t.eq(384, uv.fs_stat(path).mode % 512)
    local data = read(path)
    t.eq({}, data.favorites)
    t.eq("m/1", data.last_model)
    t.eq({ k = { 1, 2 } }, data.extra)
    t.matches('"empty":{}', bytes(path))
    t.eq({}, favorites.list())
  end)
end)
