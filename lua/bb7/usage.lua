-- Spend from `~/.bb7/usage.csv`, the daemon's log of paid calls: one row per call, no header,
-- `time,project_root,model,prompt_tokens,completion_tokens,cached_tokens,cost` with the time
-- in local time as `2006-01-02T15:04:05`. Today's spend counts every project; this session's
-- counts rows of this project since the session started.
local M = {}

function M.path()
  return (vim.env.HOME or vim.fn.expand("~")) .. "/.bb7/usage.csv"
end

--- The fields of an RFC 4180 line (`"a,b"` is one field, `""` inside quotes is `"`), or nil
--- when a quote is left open.
local function csv_fields(line)
  local fields, pos, len = {}, 1, #line
  while true do
    if line:sub(pos, pos) == '"' then
      local value, i = {}, pos + 1
      while true do
        local quote = line:find('"', i, true)
        if not quote then
          return nil
        end
        value[#value + 1] = line:sub(i, quote - 1)
        if line:sub(quote + 1, quote + 1) == '"' then
          value[#value + 1] = '"'
          i = quote + 2
        else
          pos = quote + 1
          break
        end
      end
      fields[#fields + 1] = table.concat(value)
    else
      local comma = line:find(",", pos, true) or (len + 1)
      fields[#fields + 1] = line:sub(pos, comma - 1)
      pos = comma
    end
    if pos > len then
      return fields
    end
    pos = pos + 1 -- the comma
  end
end

--- One row -> `{time, root, cost}`, or nil for a line that is not a row. Rows the daemon
--- writes quote a field holding `,` or `"` (RFC 4180); the first bb7 wrote the project root
--- unquoted, commas and all, so a row without quotes takes the time as the first field and
--- the last five as the model and the numbers.
function M.parse_line(line)
  local time, rest = line:match("^(%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d),(.*)$")
  if not time then
    return nil
  end
  local root, cost
  if rest:find('"', 1, true) then
    local fields = csv_fields(rest)
    if not fields or #fields ~= 6 then
      return nil
    end
    root, cost = fields[1], fields[6]
  else
    root, cost = rest:match("^(.*),[^,]*,[^,]*,[^,]*,[^,]*,%s*([^,]*)%s*$")
  end
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
  -- rows from before both dates cannot count: compare their date before parsing them
  local floor = today
  if since and since:sub(1, 10) < floor then
    floor = since:sub(1, 10)
  end
  for line in (text or ""):gmatch("[^\r\n]+") do
    local row = line:sub(1, 10) >= floor and M.parse_line(line)
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

M.BLOCK = 65536

--- The end of the file at `path` (`size` bytes) that holds every row dated `floor`
--- ("YYYY-MM-DD") or later: the daemon appends rows as calls finish, so reading backwards
--- block by block can stop at the first older row instead of reading a year of history.
function M.tail(path, size, floor)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local text, pos = "", size
  while pos > 0 do
    local start = math.max(pos - M.BLOCK, 0)
    file:seek("set", start)
    text = file:read(pos - start) .. text
    pos = start
    -- the first complete line of what was read (a cut line may start the text)
    local first = pos == 0 and text or text:match("\n([^\n]*)")
    if first and first:sub(1, 10):match("^%d%d%d%d%-%d%d%-%d%d$") and first:sub(1, 10) < floor then
      break
    end
  end
  file:close()
  return text
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
  local floor = today
  if since and since:sub(1, 10) < floor then
    floor = since:sub(1, 10)
  end
  local text = M.tail(path, stat.size, floor)
  if not text then
    return { today = 0, session = 0 }
  end
  -- a line cut at the start of the tail is older than `floor` and fails the date check
  cache.key, cache.value = key, M.spend(text, today, since, root)
  return cache.value
end

return M
