-- `:BB7Split`: a small composer at the bottom of the current tab that sends to the active chat
-- without opening the bb7 tab. The reply streams in the background; the statusline component
-- (`require("bb7").status()`) shows it running and then unread.
local actions = require("bb7.actions")
local config = require("bb7.config")
local keymaps = require("bb7.keymaps")
local notify = require("bb7.notify")
local state = require("bb7.state")

local M = {}

M.win = nil
M.buf = nil
M.chat_id = nil -- the chat whose draft the composer holds
M.saved = "" -- the draft as last saved from the composer

local function valid(win)
  return win and vim.api.nvim_win_is_valid(win)
end

function M.close()
  if valid(M.win) then
    vim.api.nvim_win_close(M.win, true)
  end
  M.win = nil
end

--- The composer's text.
function M.text()
  if not (M.buf and vim.api.nvim_buf_is_valid(M.buf)) then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(M.buf, 0, -1, false), "\n")
end

-- Saves the composer's text as the draft of its chat (the draft the bb7 input shows too), so it
-- survives `:qa` as the input's text does; a chat that is no longer the active one keeps it here.
local function save()
  local text = M.text()
  if not M.chat_id or M.chat_id ~= state.data.active_id or text == M.saved then
    return
  end
  M.saved = text
  actions.save_draft(text)
  local input = require("bb7.ui.input")
  if require("bb7.ui.buffers").peek("input") and input.chat_id == M.chat_id then
    input.set_text(text)
  end
end

--- Sends the composer's text to the active chat; on success the split closes. Refused while a
--- reply runs: the text stays in the composer (and in the chat's draft).
function M.send()
  local text = M.text()
  if vim.trim(text) == "" then
    notify.warn("Nothing to send")
    return
  end
  if state.data.stream then
    save()
    notify.warn("Not sent: a reply is running. Your text stays here; send it when the reply ends")
    return
  end
  require("bb7.session").ensure(function(ok)
    if not ok then
      return
    end
    -- the preview follows the reply even when the bb7 tab opens only later
    require("bb7.ui").subscribe()
    actions.send(text)
    if state.data.stream then
      vim.api.nvim_buf_set_lines(M.buf, 0, -1, false, {})
      save()
      vim.cmd("stopinsert")
      M.close()
      notify.info("Sent to " .. ((state.data.chat and state.data.chat.name) or "the active chat"))
    else
      save()
    end
  end)
end

local function winbar()
  local name = state.data.chat and state.data.chat.name or state.data.active_id or "?"
  local keys, by_action = {}, {}
  for _, entry in ipairs(config.options.keymaps.split or {}) do
    local action = tostring(entry[3])
    if not by_action[action] then
      by_action[action] = {}
      table.insert(keys, action)
    end
    table.insert(by_action[action], entry[2])
  end
  for i, action in ipairs(keys) do
    keys[i] = table.concat(by_action[action], "/") .. " " .. action
  end
  local text = string.format(" BB-7 → %s (%s)   %s", name, state.data.model or "no model", table.concat(keys, " · "))
  return (text:gsub("%%", "%%%%"))
end

--- Opens the composer (or goes to it). The caller has made sure a chat is active.
function M.open()
  if not (M.buf and vim.api.nvim_buf_is_valid(M.buf)) then
    M.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[M.buf].bufhidden = "hide"
    vim.bo[M.buf].swapfile = false
    vim.bo[M.buf].filetype = "markdown"
    pcall(vim.api.nvim_buf_set_name, M.buf, require("bb7.ui.buffers").name("split"))
    keymaps.apply(M.buf, config.options.keymaps.split, { send = M.send, close = M.close })
    vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave", "TextChanged" }, { buffer = M.buf, callback = save })
  end
  if M.chat_id ~= state.data.active_id then
    -- the composer holds the active chat's draft: what was typed in the input comes along
    M.chat_id = state.data.active_id
    M.saved = state.data.chat and state.data.chat.draft or ""
    vim.api.nvim_buf_set_lines(M.buf, 0, -1, false, vim.split(M.saved, "\n", { plain = true }))
  end
  if not valid(M.win) then
    local height = (config.options.layout or {}).split_height or 5
    M.win = vim.api.nvim_open_win(M.buf, true, { split = "below", win = -1, height = height })
    vim.wo[M.win].winfixheight = true
    vim.wo[M.win].number = false
    vim.wo[M.win].relativenumber = false
    vim.wo[M.win].signcolumn = "no"
  end
  vim.wo[M.win].winbar = winbar()
  vim.api.nvim_set_current_win(M.win)
  vim.cmd("startinsert")
end

return M
