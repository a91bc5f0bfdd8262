-- The `keymaps = "classic"` preset: the keys of the first bb7 plugin, for hands that know them.
-- Pane jumps g1-g5 and <Tab>, <Esc>/<C-c> to close, <C-x> to cancel, x/p/P in the files pane,
-- <C-s> and m for global chats, M for the model, R for the reasoning effort and <S-CR> to send
-- from insert mode. Actions this table does not name keep
-- their default key unless a classic key already took it.
local M = {}

M.keymaps = {
  global = {
    { "n", "?", "help", "Show the keys of this pane" },
    { "n", "g1", "focus_chats", "Go to the chats pane" },
    { "n", "g2", "focus_files", "Go to the files pane" },
    { "n", "g3", "focus_info", "Go to the info pane" },
    { "n", "g4", "focus_preview", "Go to the preview" },
    { "n", "g5", "focus_input", "Go to the input" },
    { "n", "<Tab>", "next_pane", "Next pane" },
    { "n", "<S-Tab>", "prev_pane", "Previous pane" },
    { "n", "<Esc>", "close", "Close bb7" },
    { "n", "q", "close", "Close bb7" },
    { { "n", "i" }, "<C-c>", "close", "Close bb7" },
    { "n", "<C-x>", "cancel", "Cancel the running response" },
    { "n", "<C-d>", "scroll_preview_down", "Scroll the preview down (from any pane)" },
    { "n", "<C-u>", "scroll_preview_up", "Scroll the preview up (from any pane)" },
    { "n", "gc", "view_chat", "Show the chat in the preview" },
    { "n", "gf", "view_file", "Show the selected file in the preview" },
    { "n", "gd", "view_diff", "Show the selected file's diff in the preview" },
    { "n", "zd", "toggle_full_diff", "Toggle the diff between hunks and whole files" },
    { "n", "<C-n>", "next_file", "Next file in the file or diff view" },
    { "n", "<C-p>", "prev_file", "Previous file in the file or diff view" },
  },
  chats = {
    { "n", "<CR>", "select", "Open the chat under the cursor" },
    { "n", "n", "new", "New chat" },
    { "n", "d", "delete", "Delete the chat under the cursor" },
    { "n", "r", "rename", "Rename the chat under the cursor" },
    { "n", "R", "title", "Regenerate the title of the chat under the cursor" },
    { "n", "p", "pin", "Pin or unpin the chat under the cursor" },
  },
  files = {
    -- the first plugin's `x`: drop the model's output first, the context file once there is none
    { "n", "x", "reject_or_remove", "Reject the output (after a confirmation), else remove from context" },
    { "n", "u", "update", "Update the context snapshot from the local file" },
    { "n", "U", "update_all", "Update every context file that changed locally" },
    { "n", "r", "readonly", "Toggle read-only" },
    { "n", "p", "apply", "Apply the output of the file under the cursor" },
    { "n", "P", "apply_all", "Apply every output" },
  },
  preview = {
    { "n", "<CR>", "toggle_thinking", "Open or close the reasoning block" },
    { "n", "o", "toggle_thinking", "Open or close the reasoning block" },
    { "n", "]]", "next_message", "Next message" },
    { "n", "[[", "prev_message", "Previous message" },
    { "n", "]u", "next_user_message", "Next user message" },
    { "n", "[u", "prev_user_message", "Previous user message" },
    { "n", "K", "message_info", "Details of the message under the cursor" },
    { "n", "<C-f>", "fork", "Fork the chat from the user message under the cursor" },
    { "n", "<C-e>", "edit", "Edit the user message under the cursor" },
    { "n", "<C-r>", "new_with_context", "New chat with this chat's context files" },
  },
  input = {
    { "n", "<CR>", "send", "Send the message" },
    { "i", "<S-CR>", "send", "Send the message" },
    { { "n", "i" }, "<C-CR>", "send", "Send the message" },
    { "i", "<C-x>", "cancel", "Cancel the running response" },
    { "n", "M", "model", "Pick a model" },
  },
}

-- The first plugin's keys for actions of ours that it had under another key, given to each
-- action the preset's tables above do not name. Re-ask, delete of a failed pair and the jump to
-- the prediction boundary are not in the first plugin: they keep the keys of the send
-- workflow spec (e, d) and ours (gb).
M.renamed = {
  scope = "<C-s>", -- chats: toggle project/global chats
  move = "m", -- chats: move a chat between project and global
  effort = "R", -- input: cycle the reasoning effort
  reask = "e",
  delete_failed = "d",
  boundary = "gb",
}

--- The preset over `defaults` (the default keymaps): every pane and action of the defaults
--- is present, with the first plugin's key where it had one.
function M.build(defaults)
  local out = {}
  local global_lhs, global_action = {}, {}
  for _, entry in ipairs(M.keymaps.global) do
    global_lhs[entry[2]] = true
    global_action[entry[3]] = true
  end
  local panes = vim.tbl_keys(defaults)
  if not defaults.global then
    table.insert(panes, "global")
  end
  for _, pane in ipairs(panes) do
    local list = vim.deepcopy(M.keymaps[pane] or {})
    local lhs_taken, action_taken = {}, {}
    if pane ~= "global" and pane ~= "split" and pane ~= "review" then
      lhs_taken, action_taken = vim.deepcopy(global_lhs), vim.deepcopy(global_action)
    end
    for _, entry in ipairs(list) do
      lhs_taken[entry[2]] = true
      action_taken[entry[3]] = true
    end
    for _, entry in ipairs(defaults[pane] or {}) do
      if not action_taken[entry[3]] then
        local lhs = M.renamed[entry[3]] or entry[2]
        if not lhs_taken[lhs] then
          table.insert(list, { entry[1], lhs, entry[3], entry[4] })
          lhs_taken[lhs] = true
        end
      end
    end
    out[pane] = list
  end
  return out
end

return M
