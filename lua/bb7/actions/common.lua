-- Helpers shared by the action modules.
local state = require("bb7.state")

local M = {}

--- Calls `cb(...)` when there is a callback.
function M.done(cb, ...)
  if cb then
    cb(...)
  end
end

--- `fields` with `global = true` added when the chats pane shows global chats.
function M.scoped(fields)
  fields = fields or {}
  if state.data.scope == "global" then
    fields.global = true
  end
  return fields
end

--- `fields` with `global = true` when the active chat is a global one (whatever store the chats
--- pane shows): for requests naming the active chat (fork, new chat with its context).
function M.active_store(fields)
  fields = fields or {}
  if state.data.chat and state.data.chat.global then
    fields.global = true
  end
  return fields
end

--- Shows the store of the active chat in the chats pane (after a fork, which lands there).
function M.show_active_store()
  if state.data.global_only then
    return
  end
  state.data.scope = (state.data.chat and state.data.chat.global) and "global" or "project"
end

--- The whole-file entry of `path` in the files pane, or nil.
function M.file_entry(path)
  for _, file in ipairs(state.data.files) do
    if file.path == path and not file.start_line then
      return file
    end
  end
end

return M
