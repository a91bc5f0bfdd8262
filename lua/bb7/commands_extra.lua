-- The commands the first bb7 plugin had that ours lacked: :BB7NewChat, :BB7EditInstructions,
-- :BB7Version, :BB7RefreshModels.
local actions = require("bb7.actions")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")

local M = {}
local with_project = require("bb7.commands").with_project

--- :BB7NewChat [name]: as the first plugin's, it creates the chat and makes it the active one
--- without opening the UI (so the next :BB7 opens it on the new chat); when the bb7 tab is
--- the current one, the input is focused in insert mode.
function M.new_chat(cmd)
  with_project(function()
    actions.new_chat(vim.trim(cmd.args or ""), function(ok)
      if not ok then
        return
      end
      local chat = state.data.chat
      notify.info("Created: " .. ((chat and chat.name) or state.data.active_id or "new chat"))
      local ui = require("bb7.ui")
      if ui.is_open() and vim.api.nvim_get_current_tabpage() == ui.tab and ui.complete() then
        ui.focus("input")
        vim.cmd("startinsert")
      end
    end)
  end)
end

--- :BB7EditInstructions [project|global] (project by default; global-only mode: global)
function M.edit_instructions(cmd)
  with_project(function()
    local level = vim.trim(cmd.args or ""):lower()
    if level ~= "" and level ~= "project" and level ~= "global" then
      notify.warn("Usage: :BB7EditInstructions [project|global]")
      return
    end
    if level == "" then
      level = state.data.global_only and "global" or "project"
    end
    if level == "project" and state.data.global_only then
      notify.warn("Not initialized. Run :BB7Init")
      return
    end
    session.request("prepare_instructions", { level = level }, function(reply)
      if reply.type ~= "instructions_path" then
        notify.daemon_error("open the instructions", reply.message)
        return
      end
      local ui = require("bb7.ui")
      local safepath = require("bb7.safepath")
      if ui.is_open() and vim.api.nvim_get_current_tabpage() == ui.tab then
        local _, refused = safepath.open_in_tab(reply.path)
        if refused then
          notify.error("Cannot open " .. safepath.inert(reply.path) .. ": " .. refused)
        end
        return
      end
      -- the file name as data: a project directory's name can hold any character
      local buf, refused = safepath.load_buffer(reply.path)
      if not buf then
        notify.error("Cannot open " .. safepath.inert(reply.path) .. ": " .. refused)
        return
      end
      vim.api.nvim_win_set_buf(0, buf)
    end)
  end)
end

--- :BB7Version
function M.version()
  session.ensure(function(ok)
    if not ok then
      return
    end
    session.request("version", {}, function(reply)
      if reply.type ~= "version" then
        notify.daemon_error("ask the version", reply.message)
        return
      end
      notify.info("daemon " .. tostring(reply.version) .. ", plugin " .. require("bb7").version)
    end)
  end)
end

--- :BB7RefreshModels
function M.refresh_models()
  session.ensure(function(ok)
    if ok then
      actions.refresh_models()
    end
  end)
end

return M
