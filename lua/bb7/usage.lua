-- Spend from `~/.bb7/usage.csv`, the daemon's log of paid calls: one row per call, no header,
-- `time,project_root,model,prompt_tokens,completion_tokens,cached_tokens,cost` with the time
-- in local time as `2006-01-02T15:04:05`. Today's spend counts every project; this session's
-- counts rows of this project since the session started.
local M = {}

function M.path()
  return (vim.env.HOME or vim.fn.expand("~")) .. "/.bb7/usage.csv"
end

--- One row -> `{time, root, cost}`, or nil for a line that is not a row. The project root may
--- hold commas: the time is the first field and the last five are numbers and the model.
function M.parse_line(line)
  local time, rest = line:match("^(%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d),(.*)$")
  if not time then
    return nil
  end
  local root, cost = rest:match("^(.*),[^,]*,[^,]*,[^,]*,[^,]*,%s*([^,]*)%s*$")
  cost = tonumber(cost)
  if not cost then
    return nil
  end
  return { time = time, root = root, cost = cost }
end

--- Sums `text` (the csv): `today` ("YYYY-MM-DD") across projects, and the rows of `root` at or
--- after `since` ("YYYY-MM-DDTHH:MM:SS").
function M.spend(text, today, since, root)
  local day, session = 0, 0
  for line in (text or ""):gmatch("[^\r\n]+") do
    local row = M.parse_line(line)
    if row then
      if row.time:sub(1, 10) == today then
        day = day + row.cost
      end
      if since and row.time >= since and (root == nil or row.root == root) then
        session = session + row.cost
      end
    end
  end
  return { today = day, session = session }
end

local cache = { key = nil, value = nil }

--- Today's and this session's spend from the file (re-read only when it changed).
function M.current(since, root)
  local path = M.path()
  local stat = (vim.uv or vim.loop).fs_stat(path)
  if not stat then
    return { today = 0, session = 0 }
  end
  local today = os.date("%Y-%m-%d")
  local key = table.concat({ stat.size, stat.mtime.sec, stat.mtime.nsec, today, since or "", root or "" }, ":")
  if cache.key == key then
    return cache.value
  end
  local file = io.open(path, "rb")
  if not file then
    return { today = 0, session = 0 }
  end
  local text = file:read("*a")
  file:close()
  cache.key, cache.value = key, M.spend(text, today, since, root)
  return cache.value
end

return M
