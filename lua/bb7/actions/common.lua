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

--- The whole-file entry of `path` in the files pane, or nil.
function M.file_entry(path)
  for _, file in ipairs(state.data.files) do
    if file.path == path and not file.start_line then
      return file
    end
  end
end

return M
