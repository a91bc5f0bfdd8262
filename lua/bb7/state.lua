-- What the plugin knows of the daemon's session, and a small event bus the panes listen on.
-- Panes read this table; only bb7.session and bb7.actions write it.
local M = {}

local function fresh()
  return {
    root = nil, -- project root (absolute)
    ready = false, -- `init` answered
    initialized = false, -- the root has `.bb7/`
    chats = {}, -- chat_list entries
    active_id = nil, -- the active chat's id
    chat = nil, -- the `chat` reply of the active chat
    files = {}, -- get_file_statuses entries with display_status
    model = nil, -- model for the next send
    models = nil, -- get_models entries (fetched on demand)
    estimate = nil, -- token_estimate reply
    balance = nil, -- balance reply
    stream = nil, -- the running send: { id = request_id, cancelled = bool }
    diff_error = nil, -- the last diff_error: { errors, tool_calls, content }
    trimmed = 0, -- pairs trimmed by the last send (`trimmed` of its `done`)
    global_only = false, -- no `.bb7/` here: the daemon runs with global chats only
    scope = "project", -- which chats the chats pane lists: "project" or "global"
    reasoning_effort = "none", -- none/low/medium/high, kept per chat
    models_at = nil, -- os.time() of the last get_models
    customization = nil, -- get_customization_info reply (instruction files)
    reask = nil, -- a re-ask in progress: { chat_id, index (0-based user message), last }
    started = os.date("%Y-%m-%dT%H:%M:%S"), -- this session's start, in usage.csv's format
  }
end

M.data = fresh()
local listeners = {}

function M.reset()
  M.data = fresh()
end

--- Calls `fn(payload)` whenever `event` is emitted. Returns a function that unsubscribes.
function M.on(event, fn)
  listeners[event] = listeners[event] or {}
  table.insert(listeners[event], fn)
  return function()
    for i, f in ipairs(listeners[event] or {}) do
      if f == fn then
        table.remove(listeners[event], i)
        return
      end
    end
  end
end

function M.emit(event, payload)
  for _, fn in ipairs(vim.list_slice(listeners[event] or {}, 1)) do
    local ok, err = pcall(fn, payload)
    if not ok then
      vim.notify("BB-7: internal error in " .. event .. " listener: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

function M.clear_listeners()
  listeners = {}
end

return M
