-- Applies `{mode, lhs, action, desc}` entries to a buffer, calling `handlers[action]`.
local M = {}

function M.apply(buf, entries, handlers)
  for _, entry in ipairs(entries or {}) do
    local mode, lhs, action, desc = entry[1], entry[2], entry[3], entry[4]
    local handler = type(action) == "function" and action or handlers[action]
    if lhs and handler then
      vim.keymap.set(mode, lhs, handler, { buffer = buf, nowait = true, silent = true, desc = "bb7: " .. (desc or tostring(action)) })
    end
  end
end

return M
