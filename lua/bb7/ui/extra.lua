-- The pane keys and listeners of the data side of the bb7 tab: project/global scope and moving
-- chats, rejecting outputs, reasoning effort, re-ask and deletion of failed pairs, the jump to
-- the prediction boundary, and the info pane.
local actions = require("bb7.actions")
local config = require("bb7.config")
local info = require("bb7.ui.info")
local notify = require("bb7.notify")
local render = require("bb7.render")
local state = require("bb7.state")

local M = {}

--- The row (0-based) of the oldest pair still sent, or nil with `all` true when every pair is.
function M.boundary_row(rendered, messages)
  if not rendered or not rendered.total or rendered.total == 0 or rendered.included >= rendered.total then
    return nil, true
  end
  local pairs_ = render.pairs(messages or {}, config.options.chars_per_token)
  local pair = pairs_[#pairs_ - rendered.included + 1]
  if not pair then
    return nil, false
  end
  for _, entry in ipairs(rendered.messages or {}) do
    if entry.index == pair.first - 1 then
      return entry.row, false
    end
  end
  return nil, false
end

--- Adds the handlers to `handlers` (the bb7.ui table of pane -> action -> function).
function M.extend(handlers, ui)
  local chats = require("bb7.ui.chats")
  local files = require("bb7.ui.files")
  local preview = require("bb7.ui.preview")
  local input = require("bb7.ui.input")
  local function chat_row(fn)
    return function()
      local chat = chats.current(ui.wins.chats)
      if chat then
        fn(chat)
      end
    end
  end
  local function message_index()
    local entry = preview.message_under_cursor(ui.wins.preview)
    return entry and entry.index
  end
  handlers.chats.scope = function()
    actions.switch_scope()
  end
  handlers.chats.move = chat_row(function(chat)
    actions.move_chat(chat.id)
  end)
  handlers.files.reject = function()
    local file = files.current(ui.wins.files)
    if file then
      actions.reject(file.path)
    end
  end
  -- the classic preset's `x`: like the first plugin, an output goes first, then the context file
  handlers.files.reject_or_remove = function()
    local file = files.current(ui.wins.files)
    if not file then
      return
    end
    if file.has_output then
      actions.reject(file.path)
    else
      handlers.files.remove()
    end
  end
  handlers.info = handlers.info or {}
  handlers.info.refresh = function()
    actions.refresh_balance()
    actions.refresh_customization()
  end
  handlers.info.close = function()
    ui.close()
  end
  handlers.info.global_instructions = function()
    require("bb7.commands_extra").edit_instructions({ args = "global" })
  end
  handlers.info.project_instructions = function()
    require("bb7.commands_extra").edit_instructions({ args = "project" })
  end
  handlers.info.reset_cost = function()
    -- the session's spend counts the usage rows since `started`
    state.data.started = os.date("%Y-%m-%dT%H:%M:%S")
    info.render()
    notify.info("Session cost reset")
  end
  handlers.input.effort = function()
    actions.cycle_effort()
  end
  handlers.preview.reask = function()
    local index = message_index()
    local text = index and actions.reask(index)
    if not index then
      notify.warn("Cursor is not on a failed message")
    end
    if not text then
      return
    end
    local function take()
      input.set_text(text)
      input.saved = ""
      ui.focus("input")
    end
    local draft = vim.trim(input.text())
    if draft == "" or draft == vim.trim(text) then
      return take()
    end
    vim.ui.select({ "Replace the draft", "Cancel" }, { prompt = "BB-7: the input holds a draft." }, function(choice)
      if choice == "Replace the draft" then
        take()
      else
        state.data.reask = nil
      end
    end)
  end
  -- Edit cuts the chat at a user message and puts it in the input, over the draft there: the
  -- question says so, and the draft is kept in the unnamed register (`p` brings it back).
  handlers.preview.edit = function()
    local index = message_index()
    local chat = state.data.chat
    local message = index and chat and chat.messages and chat.messages[index + 1]
    if not message or message.role ~= "user" then
      return actions.edit(index or -1) -- says why not
    end
    local after = #chat.messages - index - 1
    local prompt = string.format("BB-7: edit this message? The chat is cut here: %d later message%s and the outputs not applied yet are deleted.", after, after == 1 and "" or "s")
    local draft = input.text()
    local keep = vim.trim(draft) ~= "" and vim.trim(draft) ~= vim.trim(require("bb7.failed").text_of(message))
    if keep then
      prompt = prompt .. " Your draft in the input is replaced: it is kept in the unnamed register (p pastes it)."
    end
    vim.ui.select({ "Edit (cut the chat here)", "Cancel" }, { prompt = prompt }, function(choice)
      if choice ~= "Edit (cut the chat here)" then
        return
      end
      if keep then
        vim.fn.setreg('"', draft)
      end
      actions.edit(index, function(ok)
        if ok then
          ui.focus("input")
          if keep then
            notify.info("Your draft is in the unnamed register: p pastes it")
          end
        end
      end)
    end)
  end
  handlers.preview.delete_failed = function()
    local index = message_index()
    if not index then
      notify.warn("Cursor is not on a failed message")
      return
    end
    actions.delete_failed(index)
  end
  handlers.preview.boundary = function()
    if preview.mode == "file" or preview.mode == "diff" then
      -- the boundary is a place in the chat: leave the file view first
      require("bb7.ui.views").chat()
    end
    local row, all = M.boundary_row(preview.rendered, state.data.chat and state.data.chat.messages)
    if all then
      notify.info("All messages are in context")
      return
    end
    if row and ui.wins.preview and vim.api.nvim_win_is_valid(ui.wins.preview) then
      vim.api.nvim_win_set_cursor(ui.wins.preview, { row + 1, 0 })
    end
  end
end

local subscribed = false

--- "Press <LocalLeader>a on it to re-ask, d to delete it." (nil when either key is off).
function M.failed_keys()
  local reask, delete = config.key("preview", "reask"), config.key("preview", "delete_failed")
  if reask and delete then
    return string.format("Press %s on it to re-ask, %s to delete it.", reask, delete)
  end
end

--- Under a chat that ends with a failed pair, the keys that re-ask or delete it (shown when the
--- send failed; the reload of the chat right after it took them away).
function M.failed_notice(messages)
  local found = require("bb7.failed").find(messages)
  local last = found[#found]
  local keys = M.failed_keys()
  if last and last.last and keys then
    local preview = require("bb7.ui.preview")
    preview.stream_notice("notice", keys)
    preview.stream_finish()
  end
end

--- Redraws the info pane on state changes (once per Neovim).
function M.subscribe()
  if subscribed then
    return
  end
  subscribed = true
  for _, event in ipairs({ "status", "chat", "chats", "stream_end" }) do
    state.on(event, function()
      info.render()
    end)
  end
end

M.INFO_HEIGHT = 6 -- rows of the info pane in the bb7 tab

--- The input pane's rows: `input_height`, but not much more than a third of the editor's
--- lines (at 80x20 the preview above it had 3 rows), and at least 3.
function M.input_height()
  local wanted = config.options.layout.input_height or config.defaults.layout.input_height
  return math.max(3, math.min(wanted, math.floor((vim.o.lines - vim.o.cmdheight) * 0.35)))
end

--- Gives the left column of the bb7 tab its sizes: the files pane `files_height` rows, the
--- info pane M.INFO_HEIGHT, the chats pane the rest (as far as the column has room). Opening
--- the info pane below the files pane took its rows from the files pane, and a terminal
--- shrunk and grown again left the info pane with none.
function M.fit_column(wins)
  local chats, files, info_win = wins.chats, wins.files, wins.info
  for _, win in ipairs({ chats, files, info_win }) do
    if not (win and vim.api.nvim_win_is_valid(win)) then
      return
    end
  end
  local height = vim.api.nvim_win_get_height
  local total = height(chats) + height(files) + height(info_win)
  local info_h = math.min(M.INFO_HEIGHT, math.max(1, total - 2))
  local files_wanted = config.options.layout.files_height or config.defaults.layout.files_height
  local files_h = math.max(1, math.min(files_wanted, total - info_h - 1))
  -- without 'winfixheight' each resize moves rows only to or from the window below it
  local fixed = {}
  for _, win in ipairs({ chats, files, info_win }) do
    fixed[win] = vim.wo[win].winfixheight
    vim.wo[win].winfixheight = false
  end
  pcall(vim.api.nvim_win_set_height, chats, total - info_h - files_h)
  pcall(vim.api.nvim_win_set_height, files, files_h)
  for win, was in pairs(fixed) do
    vim.wo[win].winfixheight = was
  end
end

--- Opens the info window below `files_win`; returns it.
function M.open_info(files_win)
  local win = vim.api.nvim_open_win(info.buf(), false, { split = "below", win = files_win, height = M.INFO_HEIGHT })

  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].winfixheight = true
  vim.wo[win].wrap = false
  info.render()
  actions.refresh_customization()
  return win
end

return M
