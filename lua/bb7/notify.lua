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
---
--- With `brief`, the text is made to fit on one line of the command area, so Neovim shows no
--- "Press ENTER" prompt: for failures whose whole text is shown elsewhere (a failed send stays in
--- the chat as its error row).
function M.daemon_error(what, message, brief)
  local known = KNOWN[message or ""]
  if known then
    M[known[2]](known[1])
    return true
  end
  -- the lock refusal names the protocol action; the user has a key for it
  message = type(message) == "string" and message:gsub("or use chat_force_unlock$", "or force-unlock it in the chats pane") or message
  local text = "Failed to " .. what .. ": " .. tostring(message or "unknown error")
  M.error(brief and M.one_line(text, PREFIX) or text)
  return false
end

--- `text` on one line that fits the command area after `prefix`: whitespace runs, newlines
--- included, become one space, and a longer text is cut at a character with "…".
function M.one_line(text, prefix)
  local flat = vim.trim((text or ""):gsub("%s+", " "))
  -- echospace is what fits without the hit-enter prompt; keep one cell spare for the cursor
  local room = math.max(20, (vim.v.echospace or 80) - vim.fn.strdisplaywidth(prefix or "") - 1)
  if vim.fn.strdisplaywidth(flat) <= room then
    return flat
  end
  -- a character takes at least one cell, so no more than `room` of them can fit
  local chars = math.min(vim.fn.strchars(flat), room)
  local cut = vim.fn.strcharpart(flat, 0, chars)
  while chars > 0 and vim.fn.strdisplaywidth(cut) > room - 1 do
    chars = chars - 1
    cut = vim.fn.strcharpart(flat, 0, chars)
  end
  return cut .. "…"
end

return M
