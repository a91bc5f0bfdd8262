-- The bb7 tab: chats and files on the left, preview over input on the right, the status line
-- as the preview's winbar. Listens to bb7.state and redraws the pane an event concerns.
local actions = require("bb7.actions")
local buffers = require("bb7.ui.buffers")
local chats = require("bb7.ui.chats")
local config = require("bb7.config")
local files = require("bb7.ui.files")
local input = require("bb7.ui.input")
local keymaps = require("bb7.keymaps")
local keys = require("bb7.ui.keys")
local notify = require("bb7.notify")
local preview = require("bb7.ui.preview")
local layouts = require("bb7.ui.layouts")
local restore = require("bb7.ui.restore")
local spinner = require("bb7.ui.spinner")
local state = require("bb7.state")
local statusline = require("bb7.ui.statusline")
local extra = require("bb7.ui.extra")
local views = require("bb7.ui.views")

local M = {}

local STOPPED = "The bb7 daemon stopped during the reply: what arrived is not saved."

M.wins = {} -- pane -> window
M.tab = nil -- the tab the UI is in (its own tab, or the tab of the float or side layout)
M.mode = "tab" -- the layout of the open UI (bb7.ui.layouts)
local subscribed = false

local function valid(win)
  return win and vim.api.nvim_win_is_valid(win)
end

function M.is_open()
  if M.tab == nil or not vim.api.nvim_tabpage_is_valid(M.tab) then
    return false
  end
  if M.mode == "tab" then
    return true
  end
  for _, win in pairs(M.wins) do
    if valid(win) then
      return true
    end
  end
  return false
end

-- Whether every pane still has its window (the user may have closed one).
local function complete()
  for _, pane in ipairs(layouts.PANES[M.mode] or layouts.PANES.tab) do
    if not valid(M.wins[pane]) then
      return false
    end
  end
  return true
end
M.complete = complete

function M.refresh_status()
  statusline.show(M.wins.preview, statusline.text(state.data, preview.rendered))
  layouts.update(M)
end

-- Draws the active chat (or the empty state) into the preview. `force` draws even while a
-- reply streams (used when the stream starts over a diff view).
local function render_chat(force)
  local data = state.data
  if data.stream and not force then
    -- the reply is streaming into the preview; the chat is drawn again when it ends
    M.refresh_status()
    return
  end
  if views.redraw() then
    -- a file or diff view of this chat stays up
    M.refresh_status()
    return
  end
  if data.chat then
    local limit
    local length = actions.context_length()
    if length then
      local fixed = 0
      if data.estimate then
        fixed = (tonumber(data.estimate.total) or 0) - (tonumber(data.estimate.history) or 0)
      end
      limit = length - fixed
    end
    local lost = data.lost_reply
    local notice = lost and lost.chat_id == data.chat.id and lost.text or nil
    preview.render_chat(data.chat, { limit = limit, usage = data.last_usage, notice = notice })
    if data.chat.id ~= M.shown_chat_id and preview.show_end() then
      -- another chat in view: its newest messages, not its first ones (reopening the tab
      -- on the same chat puts the cursor back where it was, bb7.ui.restore)
      M.shown_chat_id = data.chat.id
    end
    local banner = preview.rendered and preview.rendered.banner ~= nil
    if banner and not M.banner_shown and valid(M.wins.preview) then
      -- the instruction-error banner is at the top: show it when it first appears
      vim.api.nvim_win_set_cursor(M.wins.preview, { 1, 0 })
    end
    M.banner_shown = banner
    if data.diff_error then
      -- the failed edits stay listed (with the key to retry) until a send replaces them
      M.diff_error_notice(data.diff_error.errors)
    else
      extra.failed_notice(data.chat.messages)
    end
  elseif #data.chats == 0 then
    preview.show_empty("No chats yet.\n\nPress n in the chats pane to start one.")
  else
    preview.show_empty("No chat selected.\n\nPick one in the chats pane (<CR>) or press n for a new one.")
  end
  input.restore(data.chat)
  if data.diff_error and not data.diff_error.prefilled and data.chat then
    -- once per diff_error: the retry goes with whatever is sent next, so offer a message
    data.diff_error.prefilled = true
    if vim.trim(input.text()) == "" then
      input.set_text(config.options.retry_message)
    end
  end
  M.refresh_status()
end

--- Listens to the state's events (idempotent). Done before a `:BB7Split` send too, so the
--- preview follows a reply that started before the tab was first opened.
--- Lists failed file edits under the chat, with the retry key.
function M.diff_error_notice(errors)
  preview.stream_notice("error", "File edits failed to apply:")
  for _, err in ipairs(errors or {}) do
    preview.stream_notice("error", "  " .. err)
  end
  local abort = config.key("input", "cancel") or config.key("global", "cancel")
  preview.stream_notice("notice", "The retry goes with the next message you send (the input holds one)" .. (abort and ("; " .. abort .. " aborts it.") or "."))
  local retry = config.key("preview", "retry")
  if retry then
    preview.stream_notice("notice", "Press " .. retry .. " here to retry.")
  end
  preview.stream_finish()
end

local function subscribe()
  if subscribed then
    return
  end
  subscribed = true
  extra.subscribe()
  views.attach(function()
    return M.wins
  end)
  state.on("chats", function()
    chats.render(state.data.chats, state.data.active_id)
    layouts.update(M)
  end)
  state.on("files", function()
    files.render(state.data.files)
    layouts.update(M)
  end)
  state.on("chat", function()
    chats.render(state.data.chats, state.data.active_id)
    render_chat()
  end)
  state.on("status", M.refresh_status)
  state.on("retry_aborted", function()
    -- the prefilled retry message goes with the retry
    if vim.trim(input.text()) == vim.trim(config.options.retry_message) then
      input.set_text("")
      input.save_if_changed(actions.save_draft)
    end
  end)
  state.on("stream_start", function(info)
    state.data.lost_reply = nil
    if preview.mode ~= "chat" then
      render_chat(true)
    end
    preview.stream_start(info.content, info.model)
    spinner.start(preview.buf(), M.refresh_status)
    M.refresh_status()
  end)
  state.on("stream", function(msg)
    preview.stream_message(msg)
    spinner.receiving()
  end)
  state.on("stream_end", function(msg)
    spinner.stop()
    preview.stream_finish()
    if msg.cancelled then
      preview.stream_notice("notice", "Response aborted by user.")
    elseif msg.type == "diff_error" then
      M.diff_error_notice(msg.errors)
    elseif require("bb7.client").gone(msg) then
      -- no failed message to re-ask: the daemon died before it could record one; the notice
      -- stays under the chat when it is drawn again (from a restarted daemon)
      state.data.lost_reply = { chat_id = state.data.active_id, text = STOPPED }
      preview.stream_notice("error", STOPPED)
    elseif msg.type == "error" then
      preview.stream_notice("error", require("bb7.failed").display(msg.message))
      local keys = extra.failed_keys()
      if keys then
        preview.stream_notice("notice", keys)
      end
    end
    M.refresh_status()
  end)
end

M.subscribe = subscribe

-- Key handlers per pane ---------------------------------------------------------------------

local function with_chat_row(fn)
  return function()
    local chat = chats.current(M.wins.chats)
    if chat then
      fn(chat)
    end
  end
end

local function with_file_row(fn)
  return function()
    local file = files.current(M.wins.files)
    if file then
      fn(file)
    end
  end
end

local function send()
  -- ensure: a daemon that died (and was not restarted) is started again for the send
  require("bb7.session").ensure(function(ok)
    if not ok then
      return
    end
    local command, ran = require("bb7.slash").run(input.text())
    if command then
      -- a /command instead of a send; one that could not run leaves its text
      if ran then
        input.set_text("")
        actions.save_draft("")
      end
      return
    end
    -- after failed file edits, any send carries the retry context (the first plugin's way)
    local running = state.data.stream
    actions.send(input.text(), actions.retry_context())
    -- cleared only when this send started (refused while another reply runs: the text stays)
    if state.data.stream and state.data.stream ~= running then
      input.set_text("")
      actions.save_draft("")
    end
  end)
end

local function message_action(fn)
  return function()
    local entry = preview.message_under_cursor(M.wins.preview)
    if not entry then
      notify.warn("Cursor is not on a user message")
      return
    end
    fn(entry.index)
  end
end

M.handlers = {
  chats = {
    select = with_chat_row(function(chat)
      if chat.locked then
        notify.warn(chats.locked_message(true))
        return
      end
      actions.select_chat(chat.id)
    end),
    unlock = with_chat_row(function(chat)
      if not chat.locked then
        notify.info("Chat is not locked")
        return
      end
      local prompt = "BB-7: force unlock " .. (chat.name or chat.id) .. "? Another bb7 process holds it; both could then write it."
      vim.ui.select({ "Force unlock", "Cancel" }, { prompt = prompt }, function(choice)
        if choice == "Force unlock" then
          actions.force_unlock(chat.id)
        end
      end)
    end),
    new = function()
      vim.ui.input({ prompt = "BB-7 new chat name (empty for default): " }, function(name)
        if name ~= nil then
          -- as :BB7NewChat and the first plugin's `n`: says "Created: ..." and puts you in the
          -- input in insert mode (the focus stayed here, so the next keys ran chats-pane keys)
          require("bb7.commands_extra").new_chat({ args = name })
        end
      end)
    end,
    delete = with_chat_row(function(chat)
      vim.ui.select({ "Delete", "Keep" }, { prompt = "BB-7: delete " .. (chat.name or chat.id) .. "?" }, function(choice)
        if choice == "Delete" then
          actions.delete_chat(chat.id)
        end
      end)
    end),
    rename = with_chat_row(function(chat)
      vim.ui.input({ prompt = "BB-7 rename: ", default = chat.name }, function(name)
        if name and name ~= "" then
          actions.rename_chat(chat.id, name)
        end
      end)
    end),
    pin = with_chat_row(function(chat)
      actions.toggle_pin(chat.id)
    end),
    search = function()
      require("bb7.commands").search({ args = "" })
    end,
    title = with_chat_row(function(chat)
      if chat.id == state.data.active_id then
        actions.regenerate_title()
      else
        actions.select_chat(chat.id, function(ok)
          if ok then
            actions.regenerate_title()
          end
        end)
      end
    end),
    close = function()
      M.close()
    end,
  },
  files = {
    diff = function()
      if files.toggle(M.wins.files) then
        return -- <CR> on a directory opens or closes it
      end
      with_file_row(function(file)
        actions.show_diff(file.path)
      end)()
    end,
    toggle_dir = function()
      files.toggle(M.wins.files)
    end,
    remove = with_file_row(function(file)
      actions.remove(file.path, { first = file.start_line, last = file.end_line })
    end),
    update = with_file_row(function(file)
      actions.update(file.path)
    end),
    update_all = function()
      actions.update_all()
    end,
    readonly = with_file_row(function(file)
      actions.set_readonly(file.path, not file.readonly)
    end),
    apply = with_file_row(function(file)
      actions.apply(file.path)
    end),
    apply_all = function()
      actions.apply_all()
    end,
    diff_local = with_file_row(function(file)
      actions.diff_local(file.path)
    end),
    review = with_file_row(function(file)
      require("bb7.review").start(file.path)
    end),
    close = function()
      M.close()
    end,
  },
  preview = {
    cancel = function()
      actions.cancel()
    end,
    -- the message to edit is in the input then: go there, as re-ask and the first plugin do
    fork = message_action(function(index)
      actions.fork(index, function(ok)
        if ok then
          M.focus("input")
        end
      end)
    end),
    retry = function()
      actions.retry()
    end,
    close = function()
      M.close()
    end,
  },
  input = {
    send = send,
    cancel = function()
      actions.cancel()
    end,
    model = function()
      require("bb7.commands").model({ args = "", bang = false })
    end,
    close = function()
      M.close()
    end,
  },
}

extra.extend(M.handlers, M)

local function setup_buffers()
  for _, pane in ipairs({ "chats", "files", "info", "preview", "input" }) do
    local buf = buffers.get(pane)
    if not vim.b[buf].bb7_keymaps then
      vim.b[buf].bb7_keymaps = true
      keymaps.apply(buf, config.options.keymaps.global, keys.global(M))
      keymaps.apply(buf, config.options.keymaps[pane], vim.tbl_extend("keep", M.handlers[pane], keys.extra(pane)))
      keys.nav(buf)
    end
  end
  local buf = input.buf()
  vim.bo[buf].filetype = "markdown"
  require("bb7.complete").attach(buf)
  require("bb7.complete.cmp").register(buf)
  require("bb7.complete.blink").register()
  require("bb7.ui.info").attach(buf)
  local group = vim.api.nvim_create_augroup("bb7-input", { clear = true })
  -- TextChanged: a change made in normal mode (`dd`, `p`, `u`) is saved too; it was kept only
  -- until the next insert or leaving the pane, so `:qa` right after it lost it
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave", "TextChanged" }, {
    group = group,
    buffer = buf,
    callback = function()
      input.save_if_changed(actions.save_draft)
    end,
  })
  require("bb7.ui.watch").attach()
  require("bb7.ui.autopreview").attach(M)
  require("bb7.instructions").watch()
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = chats.buf(),
    callback = function()
      layouts.update(M) -- the chats footer's "N of M"
    end,
  })
end

local function window_options(win, pane)
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].winfixwidth = pane == "chats" or pane == "files"
  vim.wo[win].wrap = pane == "preview" or pane == "input"
  vim.wo[win].linebreak = pane == "preview"
  vim.wo[win].cursorline = pane == "chats" or pane == "files"
  if pane == "preview" then
    vim.wo[win].foldmethod = "manual"
    vim.wo[win].foldtext = ""
  end
end

-- Opens the float or side layout `mode` in the current tab.
local function open_layout(mode)
  local bufs = {}
  for _, pane in ipairs(layouts.PANES[mode]) do
    bufs[pane] = buffers.get(pane)
  end
  if mode == "float" then
    layouts.open_float(M, bufs)
  else
    layouts.open_side(M, bufs, mode)
  end
  M.tab = vim.api.nvim_get_current_tabpage()
  for pane, win in pairs(M.wins) do
    window_options(win, pane)
  end
  if M.wins.info then
    require("bb7.ui.info").render()
    actions.refresh_customization()
  end
  require("bb7.ui.help").decorate(M.wins)
  layouts.update(M)
end

--- Opens the bb7 UI (or goes to it) and draws every pane from the current state. The layout
--- is the options' (`layout`), or `opts.layout` ("tab", "float", "left", "right").
function M.open(opts)
  opts = opts or {}
  subscribe()
  setup_buffers()
  local mode = opts.layout or layouts.mode()
  if M.is_open() and (not complete() or M.mode ~= mode or (mode ~= "tab" and M.tab ~= vim.api.nvim_get_current_tabpage())) then
    M.close()
  end
  if M.is_open() then
    vim.api.nvim_set_current_tabpage(M.tab)
  elseif mode ~= "tab" then
    M.mode = mode
    M.wins = {}
    open_layout(mode)
  else
    M.mode = "tab"
    local layout = config.options.layout
    vim.cmd("tabnew")
    M.tab = vim.api.nvim_get_current_tabpage()
    local scratch = vim.api.nvim_get_current_buf()
    M.wins.preview = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(M.wins.preview, preview.buf())
    if vim.api.nvim_buf_is_valid(scratch) and scratch ~= preview.buf() then
      pcall(vim.api.nvim_buf_delete, scratch, { force = true })
    end
    M.wins.input = vim.api.nvim_open_win(input.buf(), false, { split = "below", win = M.wins.preview, height = extra.input_height() })
    M.wins.chats = vim.api.nvim_open_win(chats.buf(), false, { split = "left", win = -1, width = layout.sidebar_width })
    M.wins.files = vim.api.nvim_open_win(files.buf(), false, { split = "below", win = M.wins.chats, height = layout.files_height })
    for pane, win in pairs(M.wins) do
      window_options(win, pane)
    end
    M.wins.info = extra.open_info(M.wins.files)
    extra.fit_column(M.wins)
    require("bb7.ui.help").decorate(M.wins)
    vim.api.nvim_create_autocmd("VimResized", {
      group = vim.api.nvim_create_augroup("bb7-tab", { clear = true }),
      callback = M.fit_tab,
    })
  end
  require("bb7.indicator").seen()
  chats.render(state.data.chats, state.data.active_id)
  files.render(state.data.files)
  render_chat()
  local focus = (state.data.active_id or not M.wins.chats) and M.wins.input or M.wins.chats
  local pane = restore.apply(M)
  if pane and valid(M.wins[pane]) then
    focus = M.wins[pane]
  end
  if valid(focus) then
    vim.api.nvim_set_current_win(focus)
  end
end

--- Gives the panes of the bb7 tab their configured sizes again and fits each pane's key hints
--- to its width (after the editor was resized: shrinking took the input and files panes down
--- to a line, and growing gave the room to the others; the hints were cut from the left).
function M.fit_tab()
  if M.mode ~= "tab" or not M.is_open() then
    return
  end
  local layout = config.options.layout
  local sizes = {
    { "chats", "width", layout.sidebar_width },
    { "input", "height", extra.input_height() },
  }
  for _, size in ipairs(sizes) do
    local win = M.wins[size[1]]
    if valid(win) and size[3] then
      local set = size[2] == "width" and vim.api.nvim_win_set_width or vim.api.nvim_win_set_height
      pcall(set, win, size[3])
    end
  end
  extra.fit_column(M.wins)
  require("bb7.ui.help").decorate(M.wins)
end

--- Closes the bb7 tab (the daemon keeps running).
function M.close()
  if buffers.peek("input") then
    input.save_if_changed(actions.save_draft)
  end
  if M.is_open() then
    restore.capture(M)
    if M.mode ~= "tab" then
      if vim.api.nvim_get_current_tabpage() ~= M.tab then
        vim.api.nvim_set_current_tabpage(M.tab)
      end
      layouts.close(M)
    else
      if #vim.api.nvim_list_tabpages() == 1 then
        vim.cmd("tabnew")
      end
      local number = vim.api.nvim_tabpage_get_number(M.tab)
      vim.cmd(number .. "tabclose")
    end
  end
  M.tab = nil
  M.wins = {}
  require("bb7.ui.watch").detach()
  require("bb7.ui.autopreview").detach()
  require("bb7.instructions").unwatch()
end

--- Focuses one pane ("chats", "files", "preview", "input").
function M.focus(pane)
  if valid(M.wins[pane]) then
    vim.api.nvim_set_current_win(M.wins[pane])
  end
end

return M
