-- Failed sends as the WYSIWYG send workflow shows them: `[error: CODE] message`, CODE one of
-- the daemon's labels (auth, quota, net, model, unknown). The daemon answers a failed `send`
-- with `<code>: <message>` and keeps that text as a system message after the user's message;
-- such a user message and its replies form a failed pair. Pure.
local M = {}

M.CODES = { auth = true, quota = true, net = true, model = true, unknown = true }

M.ABORTED = "Response aborted by user."

--- The code and message of a daemon error text, or nil when it is not a labelled error.
function M.parse(text)
  -- the daemon keeps the reply's text; tolerate an "Error: " prefix some clients add
  local code, message = (text or ""):gsub("^Error: ", ""):match("^(%a+): (.*)$")
  if code and M.CODES[code] then
    return code, message
  end
end

--- `[error: CODE] message` for any error text (unlabelled ones are `unknown`).
function M.display(text)
  local code, message = M.parse(text)
  if not code then
    code, message = "unknown", text or ""
  end
  return string.format("[error: %s] %s", code, message)
end

local function text_of(message)
  if type(message.content) == "string" and message.content ~= "" then
    return message.content
  end
  local out = {}
  for _, part in ipairs(message.parts or {}) do
    if part.type == "text" then
      table.insert(out, part.content or "")
    end
  end
  return table.concat(out)
end
M.text_of = text_of

---@class bb7.FailedPair
---@field index integer 0-based index of the user message
---@field code string auth, quota, net, model or unknown
---@field message string the provider's message
---@field text string what the user asked
---@field last boolean no user message after it

--- The failed pairs of `messages`, oldest first.
---@return bb7.FailedPair[]
function M.find(messages)
  local found = {}
  local current
  for i, message in ipairs(messages or {}) do
    if message.role == "user" then
      current = { index = i - 1, text = text_of(message) }
    elseif current and message.role == "system" and not current.code then
      local code, text = M.parse(text_of(message))
      if code then
        current.code, current.message = code, text
        table.insert(found, current)
      end
    end
  end
  for n, pair in ipairs(found) do
    pair.last = true
    for j = pair.index + 2, #messages do
      if messages[j].role == "user" then
        pair.last = false
        break
      end
    end
    found[n] = pair
  end
  return found
end

--- The failed pair that message `index` (0-based) belongs to, or nil.
function M.at(messages, index)
  local owner
  for i = math.min(index + 1, #(messages or {})), 1, -1 do
    if messages[i].role == "user" then
      owner = i - 1
      break
    end
  end
  if owner == nil then
    return nil
  end
  for _, pair in ipairs(M.find(messages)) do
    if pair.index == owner then
      return pair
    end
  end
end

return M
