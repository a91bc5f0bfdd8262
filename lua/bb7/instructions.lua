-- The instruction-error banner: while the project's `.bb7/instructions` does not parse (the
-- `instructions_info.project_error` of the chat), the preview opens with the error and sending
-- is blocked, as in the first plugin. A send, or a write of the instruction file, checks again.
local M = {}

--- The project instruction error of `chat` (a chat_get reply), or nil.
function M.error(chat)
  local info = chat and chat.instructions_info
  local err = type(info) == "table" and info.project_error
  if type(err) == "string" and err ~= "" then
    return err
  end
  return nil
end

--- The banner text for `chat`, or nil when its instructions parse.
function M.banner(chat)
  local err = M.error(chat)
  if not err then
    return nil
  end
  return table.concat({
    "⚠ The project instructions (.bb7/instructions) do not parse:",
    "  " .. err,
    "  Sending waits until they are fixed (:BB7EditInstructions); write the file and send again.",
    "",
  }, "\n")
end

local GROUP = "bb7-instructions"

--- Reloads the chat (and the info pane's instruction state) when a `.bb7/instructions` file is
--- written, so the banner goes as soon as the file parses. While the UI is open.
function M.watch()
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    pattern = "*/.bb7/instructions",
    callback = function()
      local state = require("bb7.state")
      if not state.data.active_id or state.data.stream then
        return
      end
      local actions = require("bb7.actions")
      actions.load_chat()
      actions.refresh_customization()
    end,
  })
end

function M.unwatch()
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
end

return M
