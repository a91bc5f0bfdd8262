-- Splits a byte stream into lines. Chunks may end mid-line or hold many lines; a trailing
-- carriage return (CRLF) is dropped. Only the unfinished tail is kept between chunks.
local LineBuffer = {}
LineBuffer.__index = LineBuffer

function LineBuffer.new()
  return setmetatable({ partial = "" }, LineBuffer)
end

--- Feeds `data` and returns the complete lines it finished (without line endings, empty lines
--- skipped).
function LineBuffer:feed(data)
  local lines = {}
  if data == nil or data == "" then
    return lines
  end
  local text = self.partial .. data
  local start = 1
  while true do
    local nl = string.find(text, "\n", start, true)
    if not nl then
      break
    end
    local line = string.sub(text, start, nl - 1)
    if string.sub(line, -1) == "\r" then
      line = string.sub(line, 1, -2)
    end
    if line ~= "" then
      table.insert(lines, line)
    end
    start = nl + 1
  end
  self.partial = string.sub(text, start)
  return lines
end

--- Returns what is left unfinished (and clears it): the daemon's last line when it exits
--- without a newline.
function LineBuffer:flush()
  local rest = self.partial
  self.partial = ""
  if string.sub(rest, -1) == "\r" then
    rest = string.sub(rest, 1, -2)
  end
  return rest
end

return LineBuffer
