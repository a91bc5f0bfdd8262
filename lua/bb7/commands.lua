-- The user commands, with the behaviour per state of the spec: not initialized, initialized
-- without chats, chats but none active, a chat active.
local actions = require("bb7.actions")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")
local target = require("bb7.target")

local M = {}

-- Calls fn() once the daemon is up with a project, or in global-only mode (no `.bb7/` here).
local function with_project(fn)
  session.ensure(function(ok)
    if not ok then
      return
    end
    if not state.data.initialized and not state.data.global_only then
      notify.warn("Not initialized. Run :BB7Init")
      return
    end
    fn()
  end)
end

M.with_project = with_project

-- Like with_project, and also needs an active chat.
local function with_chat(fn)
  with_project(function()
    if not state.data.active_id then
      notify.warn("No active chat")
      return
    end
    fn()
  end)
end
M.with_chat = with_chat

--- :BB7Init
function M.init()
  local root = session.root()
  session.ensure(function(ok)
    if not ok then
      return
    end
    -- commands run meanwhile wait for the project's session (a chat made at once went to
    -- the global store)
    session.hold()
    session.request("bb7_init", { project_root = root }, function(reply)
      if reply.type == "error" then
        notify.daemon_error("initialize", reply.message)
        return session.release()
      end
      -- Re-init so the daemon's session uses the new project store.
      session.release(function(ready)
        if ready then
          notify.info("Initialized in " .. root)
          if require("bb7.ui").is_open() then
            -- the open panes showed the global-only store: show the project's
            actions.refresh_chats()
            actions.load_chat()
            actions.refresh_customization()
          end
        end
      end)
    end)
  end)
end

-- Shows a chat picker over `chats` (bb7.picker); on a choice selects it and calls after().
-- `always` is called instead when the picker is cancelled.
local function pick_chat(chats, prompt, after, always)
  require("bb7.picker").chats(chats, prompt, function(chat)
    if chat and chat.locked then
      -- as <CR> in the chats pane says (the daemon's refusal named a protocol action)
      notify.warn(require("bb7.ui.chats").locked_message())
      chat = nil
    end
    if chat then
      actions.select_chat(chat.id, function(ok)
        if ok and after then
          after()
        elseif always then
          always()
        end
      end)
    elseif always then
      always()
    end
  end)
end

--- What :BB7 loads besides the chat, for the other commands that open the tab (:BB7Search,
--- :BB7Chat, :BB7File, :BB7Diff, :BB7Split): the chat list, the models (context length) and
--- the balance. As the first command of a session they showed "No chats yet: press n" beside
--- the chat they had opened.
function M.load_around()
  actions.refresh_chats()
  actions.fetch_models(nil, true)
  actions.refresh_balance()
end

--- :BB7 (closes the bb7 tab when it is the current one)
function M.open()
  local ui = require("bb7.ui")
  if ui.is_open() and vim.api.nvim_get_current_tabpage() == ui.tab and ui.complete() then
    ui.close()
    return
  end
  with_project(function()
    actions.refresh_chats(function(ok)
      if not ok then
        return
      end
      actions.fetch_models(nil, true)
      if state.data.active_id then
        ui.open()
        actions.load_chat()
        actions.refresh_balance()
      elseif #state.data.chats == 0 then
        ui.open()
        actions.refresh_balance() -- the info pane said "Balance -" until the first reply
      else
        local function open()
          ui.open()
          actions.refresh_balance()
        end
        -- cancelled: the UI opens with no chat selected, as the first plugin's did
        pick_chat(state.data.chats, "BB-7: Select a chat", open, open)
      end
    end)
  end)
end

local function context_command(cmd, readonly)
  with_chat(function()
    local paths = require("bb7.add_many").paths(cmd)
    if paths then
      require("bb7.add_many").run(paths, readonly)
      return
    end
    local t, err = target.resolve(state.data.root, cmd, true)
    if not t then
      notify.error(err)
      return
    end
    local global = state.data.global_only or (state.data.chat and state.data.chat.global)
    actions.add(global and t.abs or t.path, t.content, { readonly = readonly, first = t.first, last = t.last })
  end)
end

--- :BB7Add [path[:start:end]] (with a range: those lines of the current buffer)
function M.add(cmd)
  context_command(cmd, false)
end

--- :BB7AddReadonly
function M.add_readonly(cmd)
  context_command(cmd, true)
end

-- The context entries (whole files and sections) at or under the absolute paths `paths`.
local function entries_under(paths)
  local status = require("bb7.status")
  local out = {}
  for _, file in ipairs(state.data.files) do
    if file.in_context ~= false then
      local abs = status.absolute(state.data.root, file.path)
      for _, p in ipairs(paths) do
        if abs == p or abs:sub(1, #p + 1) == p .. "/" then
          table.insert(out, file)
          break
        end
      end
    end
  end
  return out
end

-- :BB7Remove from an oil.nvim buffer: the entry under the cursor (or the range's entries); a
-- directory removes every context file under it, after one question.
local function remove_oil(paths)
  local files = entries_under(paths)
  if #files == 0 then
    notify.warn("File not in context")
    return
  end
  local function run()
    for _, file in ipairs(files) do
      actions.remove(file.path, { first = file.start_line, last = file.end_line })
    end
  end
  if #files == 1 and vim.fn.isdirectory(paths[1]) == 0 then
    return run()
  end
  local prompt = string.format("BB-7: remove %d file%s from the context?", #files, #files == 1 and "" or "s")
  vim.ui.select({ "Remove", "Cancel" }, { prompt = prompt }, function(choice)
    if choice == "Remove" then
      run()
    end
  end)
end

--- :BB7Remove [path[:start:end]] (from an oil.nvim buffer: the entries there)
function M.remove(cmd)
  with_chat(function()
    if vim.trim(cmd.args or "") == "" then
      local targets = require("bb7.add_targets")
      local paths = cmd.range and cmd.range > 0 and targets.oil(cmd.line1, cmd.line2) or targets.oil()
      if paths then
        return remove_oil(paths)
      end
    end
    local t, err = target.resolve(state.data.root, cmd, false)
    if not t then
      notify.error(err)
      return
    end
    actions.remove(t.path, { first = t.first, last = t.last })
  end)
end

--- :BB7DiffLocal [path]
function M.diff_local(cmd)
  with_chat(function()
    local t, err = target.resolve(state.data.root, { args = cmd.args }, false)
    if not t then
      notify.error(err)
      return
    end
    actions.diff_local(t.path)
  end)
end

--- :BB7Review [path]: the output's hunks, accepted or rejected one by one in the real buffer
function M.review(cmd)
  with_chat(function()
    local t, err = target.resolve(state.data.root, { args = cmd.args }, false)
    if not t then
      notify.error(err)
      return
    end
    require("bb7.review").start(t.path)
  end)
end

--- :BB7Search [query]
function M.search(cmd)
  with_project(function()
    local function run(query)
      if query == nil then
        return
      end
      actions.search(query, function(results)
        if not results then
          return
        end
        if #results == 0 then
          notify.info("No chats match " .. query)
          return
        end
        pick_chat(results, "BB-7: Search results", function()
          require("bb7.ui").open()
          M.load_around()
        end)
      end)
    end
    local query = vim.trim(cmd.args or "")
    if query ~= "" then
      run(query)
    else
      vim.ui.input({ prompt = "BB-7 search: " }, run)
    end
  end)
end

--- :BB7Model [model] (picker without an argument); :BB7Model! model toggles a favorite.
function M.model(cmd)
  local favorites = require("bb7.favorites")
  local arg = vim.trim(cmd.args or "")
  if cmd.bang then
    local model = arg ~= "" and arg or state.data.model
    if not model then
      notify.warn("No model to mark")
      return
    end
    local now, err = favorites.toggle(model)
    if now == nil then
      notify.error("Cannot write file " .. favorites.path() .. ": " .. tostring(err))
    else
      notify.info((now and "Added favorite " or "Removed favorite ") .. model)
    end
    return
  end
  session.ensure(function(ok)
    if not ok then
      return
    end
    if arg ~= "" then
      actions.set_model(arg)
      return
    end
    actions.fetch_models(function(models)
      if not models then
        return
      end
      require("bb7.ui.model_picker").open(models, state.data.model, actions.set_model)
    end)
  end)
end

return M
