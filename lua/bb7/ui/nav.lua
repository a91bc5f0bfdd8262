-- Getting around a long chat in the preview: jumps between messages and between user
-- messages, a message's details under `K`, reasoning blocks opened and closed, and a new chat
-- that starts with this chat's context files.
local actions = require("bb7.actions")
local format = require("bb7.format")
local notify = require("bb7.notify")
local preview = require("bb7.ui.preview")
local render = require("bb7.render")
local session = require("bb7.session")
local state = require("bb7.state")

local M = {}

local function cursor_row(win)
  return vim.api.nvim_win_get_cursor(win or 0)[1] - 1
end

--- The 0-based row of the next (`delta` 1) or previous (-1) message start from `row`;
--- `role` limits it to that role. nil when there is none.
function M.target(rendered, row, delta, role)
  local entries = rendered and rendered.messages or {}
  local first, last, step = 1, #entries, 1
  if delta < 0 then
    first, last, step = #entries, 1, -1
  end
  for i = first, last, step do
    local entry = entries[i]
    if (not role or entry.role == role) and ((delta > 0 and entry.row > row) or (delta < 0 and entry.row < row)) then
      return entry.row
    end
  end
end

--- Moves the cursor of the current window to the next/previous message (of `role`).
function M.jump(delta, role)
  if preview.mode ~= "chat" then
    return
  end
  local row = M.target(preview.rendered, cursor_row(), delta, role)
  if row then
    vim.cmd("normal! m'")
    vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  end
end

-- "2026-01-01T00:00:02Z" in local time, or the text as it came.
local function local_time(stamp)
  local y, mo, d, h, mi, s = tostring(stamp or ""):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return stamp
  end
  local utc = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) })
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date("!*t", now) --[[@as osdateparam]]))
  return os.date("%Y-%m-%d %H:%M:%S", utc + offset)
end

--- The detail lines of `message` (a stored chat message): time, model, reasoning effort,
--- tokens, cost and duration, each when known.
function M.details(message)
  local lines = {}
  local function add(label, value)
    if value ~= nil and value ~= "" then
      table.insert(lines, string.format("%-10s %s", label, value))
    end
  end
  local role = (message.role or "message"):gsub("^%l", string.upper)
  table.insert(lines, role)
  add("Time", message.timestamp and local_time(message.timestamp))
  add("Model", message.model)
  add("Reasoning", message.reasoning_effort)
  local usage = message.usage
  if type(usage) == "table" and next(usage) then
    local tokens = format.tokens(usage.prompt_tokens or 0) .. " in"
    if (tonumber(usage.cached_tokens) or 0) > 0 then
      tokens = tokens .. " (" .. format.tokens(usage.cached_tokens) .. " cached)"
    end
    add("Tokens", tokens .. " · " .. format.tokens(usage.completion_tokens or 0) .. " out")
    add("Cost", usage.cost and format.cost(usage.cost))
    add("Duration", usage.duration and format.duration(usage.duration))
  end
  if #lines == 1 then
    table.insert(lines, "(no details stored)")
  end
  return lines
end

--- `K`: a float with the details of the message under the cursor.
function M.info()
  local entry = preview.mode == "chat" and preview.rendered and render.message_at(preview.rendered, cursor_row())
  local message = entry and state.data.chat and state.data.chat.messages[entry.index + 1]
  if not message then
    notify.warn("Cursor is not on a message")
    return
  end
  -- the pair together, as the first plugin's K: the user message and its reply
  local messages = state.data.chat.messages
  local first = entry.index + 1
  if message.role ~= "user" and first > 1 and messages[first - 1].role == "user" then
    first = first - 1
  end
  local lines = M.details(messages[first])
  local reply = messages[first + 1]
  if messages[first].role == "user" and reply and reply.role ~= "user" then
    table.insert(lines, "")
    vim.list_extend(lines, M.details(reply))
  end
  vim.lsp.util.open_floating_preview(lines, "", { border = "rounded", focus_id = "bb7-message-info", title = " Message " .. first .. " " })
end

--- Opens or closes the reasoning block under the cursor.
function M.toggle_fold()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  if vim.fn.foldlevel(line) > 0 then
    vim.cmd("normal! za")
  end
end

--- A new chat holding the active chat's context files (and model), made active.
function M.new_with_context(cb)
  local source = state.data.active_id
  if not source then
    notify.warn("No active chat")
    return cb and cb(false)
  end
  -- in the store of the active chat, whichever store the chats pane shows
  local common = require("bb7.actions.common")
  local fields = common.active_store({ source_chat_id = source })
  common.show_active_store()
  session.request("chat_new_with_context", fields, function(reply)
    if reply.type == "error" then
      notify.daemon_error("create a chat", reply.message)
      return cb and cb(false)
    end
    state.data.active_id = reply.id
    state.data.last_usage, state.data.trimmed, state.data.reask = nil, 0, nil
    notify.info("New chat with the context files of the last one")
    actions.refresh_chats()
    actions.load_chat(cb)
  end)
end

M.handlers = {
  next_message = function()
    M.jump(1)
  end,
  prev_message = function()
    M.jump(-1)
  end,
  next_user_message = function()
    M.jump(1, "user")
  end,
  prev_user_message = function()
    M.jump(-1, "user")
  end,
  message_info = function()
    M.info()
  end,
  toggle_thinking = function()
    M.toggle_fold()
  end,
  new_with_context = function()
    M.new_with_context()
  end,
}

return M
