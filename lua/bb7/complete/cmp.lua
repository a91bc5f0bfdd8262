-- The nvim-cmp source of the input's completion (bb7.complete): registered as "bb7" and put
-- first in the input buffer's sources, only when nvim-cmp is loaded.
local complete = require("bb7.complete")

local M = {}

local source = {}
source.__index = source

function source:is_available()
  return vim.bo.filetype == "markdown" and require("bb7.ui.buffers").pane_of() == "input"
end

function source:get_trigger_characters()
  return { "@", "/" }
end

function source:complete(params, callback)
  local before = params.context.cursor_before_line
  local ctx = complete.context(before, params.context.cursor.row - 1)
  local items = {}
  local row = params.context.cursor.row - 1
  for _, item in ipairs(complete.items(ctx)) do
    local found_edit = ctx and {
      newText = item.word,
      range = { start = { line = row, character = ctx.start }, ["end"] = { line = row, character = #before } },
    }
    table.insert(items, {
      label = item.abbr,
      insertText = item.word,
      filterText = item.word,
      -- replaces what follows the "@" or "/" (a path's slashes included)
      textEdit = found_edit,
      detail = item.menu,
      kind = item.kind == "file" and 17 or 14, -- File, Keyword
      data = { bb7 = item.kind, path = item.path },
    })
  end
  callback({ items = items, isIncomplete = false })
end

function source:execute(item, callback)
  local data = item.data or (item.completion_item and item.completion_item.data)
  if data and data.bb7 == "file" then
    complete.accept({ kind = "file", path = data.path })
  end
  callback(item)
end

M.source = source
local registered = false

--- Registers the source (once) and adds it to the sources of buffer `buf`, when nvim-cmp is
--- loaded. Returns whether it did.
function M.register(buf)
  local ok, cmp = pcall(require, "cmp")
  if not ok or type(cmp) ~= "table" or type(cmp.register_source) ~= "function" then
    return false
  end
  if not registered then
    registered = true
    cmp.register_source("bb7", setmetatable({}, source))
  end
  if cmp.setup and type(cmp.setup.buffer) == "function" then
    vim.api.nvim_buf_call(buf, function()
      cmp.setup.buffer({ sources = { { name = "bb7" }, { name = "buffer" } } })
    end)
  end
  return true
end

return M
