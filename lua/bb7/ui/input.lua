-- The input pane: a multi-line draft, saved with `save_draft` and restored per chat.
local buffers = require("bb7.ui.buffers")

local M = {}

M.chat_id = nil -- the chat whose draft the buffer holds
M.saved = "" -- the draft as last saved

function M.buf()
  return buffers.get("input")
end

function M.text()
  return table.concat(vim.api.nvim_buf_get_lines(M.buf(), 0, -1, false), "\n")
end

function M.set_text(text)
  vim.api.nvim_buf_set_lines(M.buf(), 0, -1, false, vim.split(text or "", "\n", { plain = true }))
  M.saved = text or ""
end

local ns = vim.api.nvim_create_namespace("bb7-input-placeholder")

--- The "No chat selected" placeholder (virtual text) while no chat is active.
function M.placeholder(active)
  local buf = M.buf()
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if not active then
    -- after the line, not over it: an overlay at column 0 was pushed along by typed text
    -- ("abcNo chat selected")
    vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { virt_text = { { "No chat selected", "BB7Dim" } }, virt_text_pos = "eol" })
  end
end

--- Shows the draft of `chat` when the chat changed or the daemon's draft changed (edit, fork).
function M.restore(chat)
  local id = chat and chat.id or nil
  local draft = chat and chat.draft or ""
  if id ~= M.chat_id or draft ~= M.saved then
    -- text typed while no chat was active goes with the chat that becomes active (it was
    -- replaced by the new chat's empty draft); it is saved as its draft on the next save
    local typed = M.chat_id == nil and id ~= nil and draft == "" and vim.trim(M.text()) ~= ""
    local other_chat = id ~= M.chat_id
    M.chat_id = id
    if typed then
      M.saved = ""
    elseif other_chat then
      -- without an undo history: `u` brought back the other chat's draft (and saved it here)
      local buf = M.buf()
      local levels = vim.bo[buf].undolevels
      vim.bo[buf].undolevels = -1
      M.set_text(draft)
      vim.bo[buf].undolevels = levels
    else
      M.set_text(draft)
    end
  end
  M.placeholder(id ~= nil)
end

--- Saves the draft through `save(text)` when it changed since the last save.
function M.save_if_changed(save)
  local text = M.text()
  if M.chat_id and text ~= M.saved then
    M.saved = text
    save(text)
  end
end

return M
