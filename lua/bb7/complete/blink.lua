-- The blink.cmp source of the input's completion (bb7.complete). `register` adds it as the
-- provider "bb7" for markdown buffers (it answers only in the bb7 input) when blink.cmp is
-- loaded; users of an older blink.cmp without `add_source_provider` can name the module
-- `bb7.complete.blink` in their providers.
local complete = require("bb7.complete")

local Source = {}
Source.__index = Source

function Source.new()
  return setmetatable({}, Source)
end

function Source:enabled()
  return require("bb7.ui.buffers").pane_of() == "input"
end

function Source:get_trigger_characters()
  return { "@", "/" }
end

function Source:get_completions(ctx, callback)
  local row, col = ctx.cursor[1], ctx.cursor[2]
  local before = (ctx.line or ""):sub(1, col)
  local found = complete.context(before, row - 1)
  local items = {}
  for _, item in ipairs(complete.items(found)) do
    local found_edit = found and {
      newText = item.word,
      range = { start = { line = row - 1, character = found.start }, ["end"] = { line = row - 1, character = col } },
    }
    table.insert(items, {
      label = item.abbr,
      insertText = item.word,
      filterText = item.word,
      -- replaces what follows the "@" or "/" (a path's slashes included)
      textEdit = found_edit,
      detail = item.menu,
      kind = item.kind == "file" and 17 or 14,
      data = { bb7 = item.kind, path = item.path },
    })
  end
  callback({ items = items, is_incomplete_forward = false, is_incomplete_backward = false })
  return function() end
end

function Source:execute(_, item, callback, default)
  if default then
    default()
  end
  if item.data and item.data.bb7 == "file" then
    complete.accept({ kind = "file", path = item.data.path })
  end
  if callback then
    callback()
  end
end

local registered = false

--- Adds the provider when blink.cmp is loaded (once). Returns whether it did.
function Source.register()
  local ok, blink = pcall(require, "blink.cmp")
  if not ok or type(blink) ~= "table" or type(blink.add_source_provider) ~= "function" then
    return false
  end
  if not registered then
    registered = true
    blink.add_source_provider("bb7", { name = "bb7", module = "bb7.complete.blink" })
    if type(blink.add_filetype_source) == "function" then
      blink.add_filetype_source("markdown", "bb7")
    end
  end
  return true
end

return Source
