-- User feedback in the spec's format: "BB-7: {action result}" with INFO for success, WARN for
-- a no-op or invalid state, ERROR for failures.
local M = {}

local PREFIX = "BB-7: "

function M.info(text)
  vim.notify(PREFIX .. text, vim.log.levels.INFO)
end

function M.warn(text)
  vim.notify(PREFIX .. text, vim.log.levels.WARN)
end

function M.error(text)
  vim.notify(PREFIX .. text, vim.log.levels.ERROR)
end

-- Daemon error messages that mean a state the spec has its own words for.
local KNOWN = {
  ["Not initialized. Run :BB7Init"] = { "Not initialized. Run :BB7Init", "warn" },
  ["No active chat"] = { "No active chat", "warn" },
  ["Already initialized"] = { "Already initialized", "info" },
}

--- Reports a daemon error reply. Known state errors get the spec's message and level; anything
--- else is "Failed to {what}: {message}" at ERROR. Returns true when the error was a known
--- state error.
function M.daemon_error(what, message)
  local known = KNOWN[message or ""]
  if known then
    M[known[2]](known[1])
    return true
  end
  -- the lock refusal names the protocol action; the user has a key for it
  message = type(message) == "string" and message:gsub("or use chat_force_unlock$", "or force-unlock it in the chats pane") or message
  M.error("Failed to " .. what .. ": " .. tostring(message or "unknown error"))
  return false
end

return M
