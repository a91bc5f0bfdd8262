-- The view commands: `:BB7Chat`, `:BB7File [path]`, `:BB7Diff [path]` (open the bb7 tab when
-- needed and switch its preview) and `:BB7Split` (the side chat; with ! the small composer).
local actions = require("bb7.actions")
local notify = require("bb7.notify")
local state = require("bb7.state")

local M = {}

local function with_chat(fn)
  require("bb7.commands").with_chat(fn)
end

-- Opens the bb7 tab if needed, with the active chat and its files loaded, then calls fn().
local function with_tab(fn)
  with_chat(function()
    local ui = require("bb7.ui")
    local was_open = ui.is_open()
    ui.open()
    if was_open and state.data.chat then
      return fn()
    end
    if not was_open then
      require("bb7.commands").load_around()
    end
    actions.load_chat(function(ok)
      if ok then
        actions.refresh_files(function()
          fn()
        end)
      end
    end)
  end)
end

-- The files entry for the argument of a command (relative to the root, or absolute).
local function entry_for(arg)
  arg = vim.trim(arg or "")
  if arg == "" then
    return nil, true
  end
  local root = state.data.root or ""
  local abs = vim.fn.fnamemodify(arg, ":p")
  for _, file in ipairs(state.data.files) do
    if file.path == arg or file.path == abs or (root .. "/" .. file.path) == abs then
      return file
    end
  end
  return nil, false
end

local function show(mode, cmd)
  with_tab(function()
    local file, no_arg = entry_for(cmd and cmd.args)
    if not file and not no_arg then
      notify.warn("File not in context")
      return
    end
    require("bb7.ui.views").show(mode, file)
  end)
end

--- :BB7Chat
function M.chat()
  with_tab(function()
    require("bb7.ui.views").chat()
  end)
end

--- :BB7File [path]
function M.file(cmd)
  show("file", cmd)
end

--- :BB7Diff [path]
function M.diff(cmd)
  show("diff", cmd)
end

--- The side of the side chat: the options' when they name one, else the right.
local function side()
  local mode = require("bb7.ui.layouts").mode()
  return (mode == "left" or mode == "right") and mode or "right"
end

--- :BB7Split opens the side chat (files, preview and input in a column beside the code);
--- :BB7Split! the small composer that sends without any of the UI.
function M.split(cmd)
  if not (cmd and cmd.bang) then
    require("bb7.commands").with_project(function()
      local ui = require("bb7.ui")
      ui.open({ layout = side() })
      require("bb7.commands").load_around()
      if state.data.active_id then
        actions.load_chat()
      end
    end)
    return
  end
  with_chat(function()
    local split = require("bb7.ui.split")
    if state.data.chat and state.data.chat.id == state.data.active_id then
      return split.open()
    end
    actions.load_chat(function(ok)
      if ok then
        split.open()
      end
    end)
  end)
end

return M
