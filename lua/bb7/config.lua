-- Defaults as data, and the merge of the user's options over them.
--
-- Keymaps are lists of `{mode, lhs, action, desc}` entries per pane. A user replaces an entry by
-- giving the same action a new lhs (`keymaps = { files = { apply = "ga" } }`) or removes it with
-- `false` (`keymaps = { files = { apply = false } }`). `keymaps = "classic"` (or
-- `{ preset = "classic", ... }` with changes over it) starts from the first bb7 plugin's keys.
local M = {}

M.defaults = {
  -- Daemon command: a string or a list. nil means `bb7` on PATH, else the plugin's own
  -- `target/release/bb7`.
  cmd = nil,
  -- Log the raw daemon traffic to stdpath("log") .. "/bb7-traffic.log".
  debug = false,
  -- Project root: nil means the current working directory.
  root = nil,
  -- Text sent with a retry after a `diff_error`.
  retry_message = "Some of your file edits failed to apply. Fix them and try again.",
  -- Watched buffers: writing a context file open in Neovim also updates its context snapshot
  -- (as `u` in the files pane), while the bb7 UI is open. Off: the status shows `~` instead.
  watch = false,
  -- Auto-preview: the file under the cursor in the files pane is shown in the preview (its
  -- diff when the preview shows a diff); the chat comes back in the chats pane or the input.
  auto_preview = true,
  -- Fold reasoning blocks once they are complete.
  fold_thinking = true,
  -- Heuristic for the frontend context counter (see the WYSIWYG send workflow).
  chars_per_token = 3.5,
  user_request_allowance = 100,
  -- `layout = "float"` (the first plugin's floating panes), "left" or "right" (a side chat
  -- beside the code), or "tab" (its own tab); or a table with `mode` and the sizes.
  layout = {
    mode = "tab",
    side_width = 70,
    side_files_height = 6,
    sidebar_width = 36,
    input_height = 8,
    files_height = 12,
  },
  -- The look of the panes (the first plugin's `chat_style.bar_char`, its spinner frames, and
  -- the chats pane's marks).
  style = {
    bar_char = "▌", -- before "You" and "Assistant" in the preview
    icons = { active = "▶", pinned = "★", locked = "⊘" },
    spinner_frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" },
    spinner_interval = 100, -- ms between frames
  },
  -- Keys that move to the pane left of, below, above or right of the current one (as <C-w>h,
  -- j, k, l do), in every pane; false: none. E.g. "<C-h>" when those are mapped globally.
  nav_left = false,
  nav_down = false,
  nav_up = false,
  nav_right = false,
  keymaps = {
    chats = {
      { "n", "<CR>", "select", "Open the chat under the cursor" },
      { "n", "n", "new", "New chat" },
      { "n", "d", "delete", "Delete the chat under the cursor" },
      { "n", "R", "rename", "Rename the chat under the cursor" },
      { "n", "p", "pin", "Pin or unpin the chat under the cursor" },
      { "n", "/", "search", "Search chats" },
      { "n", "t", "title", "Regenerate the title of the chat under the cursor" },
      { "n", "s", "scope", "Switch between project and global chats" },
      { "n", "m", "move", "Move the chat under the cursor to global chats (or back to the project)" },
      { "n", "u", "unlock", "Force-unlock the locked chat under the cursor (asks first)" },
      { "n", "q", "close", "Close bb7" },
    },
    files = {
      { "n", "<CR>", "diff", "Show the context-to-output diff" },
      { "n", "d", "remove", "Remove from context" },
      { "n", "u", "update", "Update the context snapshot from the local file" },
      { "n", "U", "update_all", "Update every context file that changed locally" },
      { "n", "r", "readonly", "Toggle read-only" },
      { "n", "a", "apply", "Apply the output of the file under the cursor" },
      { "n", "A", "apply_all", "Apply every output" },
      { "n", "D", "diff_local", "Side-by-side diff of local file and output" },
      { "n", "x", "reject", "Reject (delete) the output of the file under the cursor" },
      { "n", "za", "toggle_dir", "Open or close the directory under the cursor (<CR> on it too)" },
      { "n", "<LocalLeader>h", "review", "Review the output hunk by hunk in the real buffer" },
      { "n", "q", "close", "Close bb7" },
    },
    info = {
      { "n", "r", "refresh", "Fetch the balance and the instruction files again" },
      -- the first plugin's <C-p> is prev_file in every pane here: P for the project's
      { "n", "<C-g>", "global_instructions", "Edit the global instructions" },
      { "n", "P", "project_instructions", "Edit the project instructions" },
      { "n", "R", "reset_cost", "Start the session's cost over from zero" },
      { "n", "q", "close", "Close bb7" },
    },
    preview = {
      { "n", "<C-c>", "cancel", "Cancel the running response" },
      { "n", "]]", "next_message", "Next message" },
      { "n", "[[", "prev_message", "Previous message" },
      { "n", "]u", "next_user_message", "Next user message" },
      { "n", "[u", "prev_user_message", "Previous user message" },
      { "n", "K", "message_info", "Details of the message under the cursor" },
      { "n", "<CR>", "toggle_thinking", "Open or close the reasoning block" },
      { "n", "<C-r>", "new_with_context", "New chat with this chat's context files" },
      { "n", "<C-f>", "fork", "Fork the chat from the user message under the cursor" },
      -- not <C-e>/e (Vim's scroll and word motion): <LocalLeader> is for a buffer's own keys
      { "n", "<LocalLeader>e", "edit", "Edit the user message under the cursor (asks first: the chat is cut there)" },
      { "n", "r", "retry", "Retry after failed file edits" },
      { "n", "<LocalLeader>a", "reask", "Re-ask the failed message under the cursor" },
      { "n", "d", "delete_failed", "Delete the failed message under the cursor" },
      { "n", "gb", "boundary", "Jump to the oldest message still sent (the prediction boundary)" },
      { "n", "q", "close", "Close bb7" },
    },
    -- keys of every pane: the preview's views, help, moving between files
    global = {
      { "n", "?", "help", "Show the keys of this pane" },
      { "n", "gc", "view_chat", "Show the chat in the preview" },
      { "n", "gf", "view_file", "Show the selected file in the preview" },
      { "n", "gd", "view_diff", "Show the selected file's diff in the preview" },
      { "n", "zd", "toggle_full_diff", "Toggle the diff between hunks and whole files" },
      { "n", "<C-n>", "next_file", "Next file in the file or diff view" },
      { "n", "<C-p>", "prev_file", "Previous file in the file or diff view" },
    },
    -- the hunk review in the real buffer (:BB7Review), mapped in that buffer while it runs
    review = {
      { "n", "<LocalLeader>a", "accept", "Take the output's hunk under the cursor" },
      { "n", "<LocalLeader>r", "reject", "Keep the local lines of the hunk under the cursor" },
      { "n", "]h", "next", "Next hunk" },
      { "n", "[h", "prev", "Previous hunk" },
      { "n", "<LocalLeader>q", "finish", "Finish the review (undecided hunks stay in the output)" },
    },
    -- the :BB7Split! composer
    split = {
      { { "n", "i" }, "<C-s>", "send", "Send and close the split" },
      { "n", "<CR>", "send", "Send and close the split" },
      { "n", "q", "close", "Close the split" },
    },
    input = {
      { "n", "<CR>", "send", "Send the message" },
      { "i", "<C-s>", "send", "Send the message" },
      { "n", "<C-s>", "send", "Send the message" },
      -- insert-mode <C-c> stays Vim's (leave insert mode); gm/ge stay motions
      { "n", "<C-c>", "cancel", "Cancel the running response (or abort a pending retry)" },
      { "n", "<LocalLeader>m", "model", "Pick a model" },
      { "n", "<LocalLeader>e", "effort", "Cycle the reasoning effort (none, low, medium, high)" },
      { "n", "q", "close", "Close bb7" },
    },
  },
  -- Chat picker: nil picks telescope, then snacks, then vim.ui.select; or force one of
  -- "telescope", "snacks", "select".
  picker = nil,
  -- Highlight groups, linked with `default = true` so a colorscheme can override them.
  highlights = {
    BB7User = "Title",
    BB7Assistant = "Function",
    BB7Thinking = "Comment",
    BB7Event = "Special",
    BB7Dim = "NonText",
    BB7Error = "DiagnosticError",
    BB7Usage = "Comment",
    BB7StatusM = "DiffChange",
    BB7StatusA = "DiffAdd",
    BB7StatusConflict = "DiagnosticError",
    BB7StatusS = "Constant",
    BB7StatusR = "Comment",
    BB7StatusSync = "DiagnosticWarn",
    BB7Pinned = "Special",
    BB7Locked = "Comment",
    BB7Directory = "Directory",
    BB7DiffAdd = "DiffAdd",
    BB7DiffDelete = "DiffDelete",
    BB7DiffHeader = "Title",
  },
}

M.options = vim.deepcopy(M.defaults)

--- The first lhs of `action` in `pane` (nil when it has none), for messages naming a key.
function M.key(pane, action)
  for _, entry in ipairs((M.options.keymaps or {})[pane] or {}) do
    if entry[3] == action then
      return entry[2]
    end
  end
end

-- Merges one pane's keymap overrides. `overrides` maps an action to a new lhs, to `false`
-- (disabled), or is a list of full entries appended as extra mappings.
local function merge_keymaps(entries, overrides)
  if overrides == nil then
    return vim.deepcopy(entries)
  end
  local out = {}
  for _, entry in ipairs(entries) do
    local change = overrides[entry[3]]
    if type(change) == "string" then
      table.insert(out, { entry[1], change, entry[3], entry[4] })
    elseif change ~= false then
      table.insert(out, vim.deepcopy(entry))
    end
  end
  for _, extra in ipairs(overrides) do
    table.insert(out, extra)
  end
  return out
end

--- Merges `opts` over the defaults and returns the result (also kept in `M.options`).
function M.setup(opts)
  opts = opts or {}
  local keymaps = opts.keymaps
  local rest = vim.deepcopy(opts)
  rest.keymaps = nil
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), rest)
  if type(merged.layout) == "string" then
    merged.layout = vim.tbl_extend("force", vim.deepcopy(M.defaults.layout), { mode = merged.layout })
  end
  merged.keymaps = {}
  local base = M.defaults.keymaps
  if keymaps == "classic" or (type(keymaps) == "table" and keymaps.preset == "classic") then
    base = require("bb7.keymaps_classic").build(M.defaults.keymaps)
    keymaps = type(keymaps) == "table" and keymaps or nil
  end
  for pane, entries in pairs(base) do
    merged.keymaps[pane] = merge_keymaps(entries, keymaps and keymaps[pane])
  end
  M.options = merged
  return merged
end

return M
