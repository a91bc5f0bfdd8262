-- `:BB7Add` of a directory or from an oil.nvim buffer: collects the files, asks once with
-- their count and estimated tokens (and what is left of the model's context), then adds them.
local actions = require("bb7.actions")
local config = require("bb7.config")
local format = require("bb7.format")
local notify = require("bb7.notify")
local state = require("bb7.state")
local status = require("bb7.status")
local targets = require("bb7.add_targets")

local M = {}

M.ADD = "Add"
M.CANCEL = "Cancel"

--- The absolute paths `cmd` names when they are more than one plain file: a directory
--- argument, or the entries of an oil buffer. nil otherwise.
function M.paths(cmd)
  local arg = vim.trim(cmd.args or "")
  if arg ~= "" then
    local abs = vim.fn.fnamemodify(status.absolute(state.data.root, arg), ":p"):gsub("/$", "")
    if vim.fn.isdirectory(abs) == 1 then
      return { abs }
    end
    return nil
  end
  if cmd.range and cmd.range > 0 then
    return targets.oil(cmd.line1, cmd.line2)
  end
  return targets.oil()
end

local function context_path(abs)
  if state.data.global_only or (state.data.chat and state.data.chat.global) then
    return abs
  end
  return require("bb7.target").relative(state.data.root, abs)
end

--- Adds every file under `paths` after one confirmation.
function M.run(paths, readonly, cb)
  local files, skipped = {}, 0
  for _, abs in ipairs(paths) do
    if vim.fn.isdirectory(abs) == 1 then
      local listing = targets.directory(abs)
      vim.list_extend(files, listing.files)
      skipped = skipped + listing.skipped
    else
      local text = status.local_content(abs)
      if text then
        table.insert(files, { abs = abs, content = text })
      else
        skipped = skipped + 1
      end
    end
  end
  if #files == 0 then
    notify.warn("No text files to add" .. (skipped > 0 and string.format(" (%d binary, too large or unreadable)", skipped) or ""))
    return cb and cb(false)
  end
  local tokens = targets.tokens(files, config.options.chars_per_token)
  local prompt = string.format("BB-7: add %d file%s (~%s tokens)", #files, #files == 1 and "" or "s", format.tokens(tokens))
  local length = actions.context_length()
  if length then
    local used = state.data.estimate and tonumber(state.data.estimate.total) or 0
    local left = math.max(length - used, 0)
    if tokens > left then
      prompt = prompt .. string.format("; more than the ~%s tokens left of the model's %s", format.tokens(left), format.tokens(length))
    end
  end
  if skipped > 0 then
    prompt = prompt .. string.format("; %d binary or too large left out", skipped)
  end
  vim.ui.select({ M.ADD, M.CANCEL }, { prompt = prompt .. "?" }, function(choice)
    if choice ~= M.ADD then
      notify.info("Add cancelled")
      return cb and cb(false)
    end
    local entries = vim.tbl_map(function(file)
      return { path = context_path(file.abs), content = file.content }
    end, files)
    actions.add_many(entries, { readonly = readonly }, cb)
  end)
end

return M
