-- The preview's file and diff views as data (same shape as bb7.render's chat): one context or
-- output file with its warnings, or its diffs (context -> output, and local -> output when
-- both you and the model changed it), as hunks or as the whole file. Pure.
local inert = require("bb7.safepath").inert

local M = {}

local WARNINGS = {
  ["~"] = "~  Your local file differs from the snapshot the model sees (u in the files pane updates it).",
  ["~M"] = "~M Both you and the model changed this file: applying the output replaces your local changes.",
  ["!A"] = "!A The model created this file but it already exists locally.",
}

local function empty()
  return { lines = {}, hls = {}, spans = {}, code = {}, folds = {}, messages = {} }
end

local function push(out, line, group)
  table.insert(out.lines, line)
  if group then
    table.insert(out.hls, { #out.lines - 1, group })
  end
end

local function split(text)
  local lines = vim.split(text or "", "\n", { plain = true })
  if lines[#lines] == "" and #lines > 1 then
    table.remove(lines)
  end
  return lines
end

--- The status of a files-pane entry as shown (frontend statuses included).
function M.status(file)
  return file.display_status or file.status or ""
end

--- The file view of `file` (a get_file_statuses entry): the output when there is one, else the
--- context snapshot; a header, the warning for its status, then the text, highlighted by
--- its file type (the `code` entry carries the path).
function M.file(file)
  local out = empty()
  local status = M.status(file)
  local which = file.has_output and "output" or "context"
  local text = file.has_output and file.output_content or file.context_content
  local title = inert(file.path)
  if file.start_line then
    title = string.format("%s:%d-%d", title, file.start_line, file.end_line)
  end
  push(out, string.format("%s  [%s]%s", title, which, status ~= "" and ("  " .. status) or ""), "BB7DiffHeader")
  if WARNINGS[status] then
    push(out, WARNINGS[status], "BB7Warning")
  end
  push(out, "", nil)
  if text == nil then
    push(out, "(no content)", "BB7Dim")
    return out
  end
  local first = #out.lines
  vim.list_extend(out.lines, split(text))
  table.insert(out.code, { first = first, last = #out.lines - 1, path = file.path })
  return out
end

-- Appends the unified diff of `before` -> `after` under a header naming both sides.
local function push_diff(out, from, to, before, after, full)
  push(out, string.format("--- %s", from), "BB7DiffHeader")
  push(out, string.format("+++ %s", to), "BB7DiffHeader")
  local ctxlen = full and math.max(#split(before), #split(after)) + 1 or 3
  local diff = vim.diff(before or "", after or "", { result_type = "unified", ctxlen = ctxlen })
  if diff == "" then
    push(out, "(no differences)", "BB7Dim")
    return
  end
  for _, line in ipairs(vim.split(diff, "\n", { plain = true, trimempty = true })) do
    local first = line:sub(1, 1)
    local group = (first == "+" and "BB7DiffAdd") or (first == "-" and "BB7DiffDelete") or (first == "@" and "BB7DiffHeader") or nil
    push(out, line, group)
  end
end

--- The diff view of `file`: context -> output, and for `~M` and `!A` (with `local_text`) also
--- local -> output. `full` shows whole files instead of hunks.
function M.diff(file, local_text, full)
  local out = empty()
  local status = M.status(file)
  push(out, string.format("diff %s  (%s)%s", inert(file.path), full and "full file" or "hunks", status ~= "" and ("  " .. status) or ""), "BB7DiffHeader")
  if WARNINGS[status] then
    push(out, WARNINGS[status], "BB7Warning")
  end
  local output = file.output_content or ""
  if not file.has_output then
    push(out, "(no output: the model did not change this file)", "BB7Dim")
    return out
  end
  local shown = inert(file.path)
  push_diff(out, "context/" .. shown, "output/" .. shown, file.context_content or "", output, full)
  if (status == "~M" or status == "!A") and local_text ~= nil then
    push(out, "", nil)
    push_diff(out, "local/" .. shown, "output/" .. shown, local_text, output, full)
  end
  return out
end

return M
