-- Chat actions: list, select, create, delete, rename, pin, title, search, and the project /
-- global scope (switching the list, moving a chat between the stores).
local common = require("bb7.actions.common")
local notify = require("bb7.notify")
local pins = require("bb7.pins")
local session = require("bb7.session")
local state = require("bb7.state")
local sync = require("bb7.actions.sync")

local M = {}
local done, scoped = common.done, common.scoped

--- Where the pins of the shown scope live: the project root, or the home directory.
function M.pins_dir()
  if state.data.scope == "global" then
    return vim.env.HOME or vim.fn.expand("~")
  end
  return state.data.root
end

function M.refresh_chats(cb)
  session.request("chat_list", scoped(), function(reply)
    if reply.type ~= "chat_list" then
      notify.daemon_error("list chats", reply.message)
      return done(cb, false)
    end
    state.data.chats = pins.sort(reply.chats or {}, pins.load(M.pins_dir()))
    state.emit("chats")
    done(cb, true)
  end)
end

function M.select_chat(id, cb)
  session.request("chat_select", scoped({ id = id }), function(reply)
    if reply.type == "error" then
      notify.daemon_error("open the chat", reply.message)
      return done(cb, false)
    end
    state.data.active_id = id
    state.data.last_usage, state.data.trimmed, state.data.reask = nil, 0, nil
    sync.load_chat(cb)
  end)
end

--- A new chat, with the model in use (as the first plugin did), in the shown store.
function M.new_chat(name, cb)
  local fields = scoped()
  if name and name ~= "" then
    fields.name = name
  end
  if state.data.model and state.data.model ~= "" then
    fields.model = state.data.model
  end
  session.request("chat_new", fields, function(reply)
    if reply.type == "error" then
      notify.daemon_error("create a chat", reply.message)
      return done(cb, false)
    end
    state.data.active_id = reply.id
    -- the last reply's usage line belongs to the chat it came from, not to this empty one
    state.data.last_usage, state.data.trimmed, state.data.reask = nil, 0, nil
    M.refresh_chats()
    sync.load_chat(cb)
  end)
end

function M.delete_chat(id, cb)
  session.request("chat_delete", scoped({ id = id }), function(reply)
    if reply.type == "error" then
      notify.daemon_error("delete the chat", reply.message)
      return done(cb, false)
    end
    notify.info("Deleted chat")
    if state.data.active_id == id then
      state.data.active_id, state.data.chat, state.data.files = nil, nil, {}
      -- the estimate and the last reply's usage were the deleted chat's
      state.data.estimate, state.data.last_usage = nil, nil
      state.emit("chat")
      state.emit("files")
    end
    M.refresh_chats(cb)
  end)
end

function M.rename_chat(id, name, cb)
  session.request("chat_rename", scoped({ id = id, name = name }), function(reply)
    if reply.type == "error" then
      notify.daemon_error("rename the chat", reply.message)
      return done(cb, false)
    end
    if state.data.chat and state.data.chat.id == id then
      state.data.chat.name = name
      state.emit("status")
    end
    M.refresh_chats(cb)
  end)
end

function M.toggle_pin(id, cb)
  local dir = M.pins_dir()
  local pinned, err = pins.toggle(dir, id)
  if pinned == nil then
    notify.error("Cannot write file " .. pins.path(dir) .. ": " .. tostring(err))
    return done(cb, false)
  end
  M.refresh_chats(cb)
end

--- Asks the daemon for a new title of the active chat from its first user message.
function M.regenerate_title(cb)
  local chat = state.data.chat
  local first
  for _, message in ipairs(chat and chat.messages or {}) do
    if message.role == "user" then
      first = require("bb7.failed").text_of(message)
      break
    end
  end
  if not first then
    notify.warn("No message to make a title from")
    return done(cb, false)
  end
  session.request("generate_title", { chat_id = chat.id, content = first }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("generate a title", reply.message)
      return done(cb, false)
    end
    done(cb, true)
  end)
end

function M.search(query, cb)
  session.request("search_chats", scoped({ query = query }), function(reply)
    if reply.type ~= "search_results" then
      notify.daemon_error("search chats", reply.message)
      return done(cb, nil)
    end
    done(cb, reply.results or {})
  end)
end

--- Removes the lock another bb7 process holds on chat `id` (of the shown store).
function M.force_unlock(id, cb)
  session.request("chat_force_unlock", scoped({ id = id }), function(reply)
    if reply.type == "error" then
      notify.daemon_error("unlock the chat", reply.message)
      return done(cb, false)
    end
    notify.info("Chat unlocked")
    M.refresh_chats(cb)
  end)
end

--- Shows the other store's chats in the chats pane (project <-> global).
function M.switch_scope(cb)
  if state.data.global_only then
    notify.warn("No project here: only global chats (run :BB7Init for project chats)")
    return done(cb, false)
  end
  state.data.scope = state.data.scope == "global" and "project" or "global"
  notify.info(state.data.scope == "global" and "Showing global chats" or "Showing project chats")
  M.refresh_chats(cb)
end

--- Moves chat `id` from the shown store to the other one. The daemon makes the moved chat its
--- active one (unless a reply streams), and a send goes to the daemon's active chat: so the chat
--- the user sees is selected again afterwards, and a moved open chat is followed into its new
--- store (the chats pane shows that store, its pin goes with it).
function M.move_chat(id, cb)
  if state.data.global_only then
    notify.warn("No project here: only global chats (run :BB7Init for project chats)")
    return done(cb, false)
  end
  local to = state.data.scope == "global" and "project" or "global"
  local from_pins = M.pins_dir()
  local shown = state.data.chat
  session.request("chat_move", { id = id, to = to }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("move the chat", reply.message)
      return done(cb, false)
    end
    notify.info(to == "global" and "Moved chat to global chats" or "Moved chat to project chats")
    local to_pins = to == "global" and (vim.env.HOME or vim.fn.expand("~")) or state.data.root
    local carried, err = pins.carry(from_pins, to_pins, id)
    if not carried then
      notify.error("Cannot write file " .. pins.path(to_pins) .. ": " .. tostring(err))
    end
    if state.data.active_id == id then
      state.data.scope = to
      return sync.load_chat(function()
        M.refresh_chats(cb)
      end)
    end
    if shown and shown.id and not state.data.stream then
      return session.request("chat_select", { id = shown.id, global = shown.global or nil }, function(selected)
        if selected.type == "error" then
          notify.daemon_error("open the chat", selected.message)
          state.data.active_id, state.data.chat = nil, nil
          state.emit("chat")
        end
        M.refresh_chats(cb)
      end)
    end
    M.refresh_chats(cb)
  end)
end

return M
