-- What the commands and pane keys do, one module per domain under bb7.actions (sync, chats,
-- context, apply, messages, models); this table gathers them so callers need one require.
-- Each action talks to the daemon through bb7.session, updates bb7.state, emits an event for
-- the panes, and tells the user the result in the spec's words.
local M = {}

for _, name in ipairs({ "sync", "chats", "context", "apply", "messages", "models" }) do
  for key, fn in pairs(require("bb7.actions." .. name)) do
    if type(fn) == "function" then
      assert(M[key] == nil, "bb7.actions: two modules define " .. key)
      M[key] = fn
    end
  end
end

return M
