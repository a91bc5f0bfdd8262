-- What a context command acts on: the current buffer, its selected lines, or a
-- `path[:start:end]` argument. Produces the path as the daemon wants it (relative to the root
-- when inside it) and the content to snapshot.
local status = require("bb7.status")

local M = {}

--- Path relative to `root` when inside it, else absolute.
function M.relative(root, abs)
  abs = vim.fn.fnamemodify(abs, ":p")
  local prefix = root:sub(-1) == "/" and root or (root .. "/")
  if abs:sub(1, #prefix) == prefix then
    return abs:sub(#prefix + 1)
  end
  return abs
end

--- Parses "path:start:end" -> path, start, end (numbers); "path" -> path.
function M.parse_arg(arg)
  local path, first, last = arg:match("^(.-):(%d+):(%d+)$")
  if path and path ~= "" then
    return path, tonumber(first), tonumber(last)
  end
  return arg
end

local function lines_of(text, first, last)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return table.concat(vim.list_slice(lines, first, last), "\n") .. "\n"
end

--- Resolves a command invocation (`args`, `range`, `line1`, `line2` of nvim_create_user_command)
--- against `root`. Returns `{path, abs, content, first, last}` or nil and the error text.
--- `need_content` false skips reading (for removal).
function M.resolve(root, cmd, need_content)
  local abs, first, last
  local arg = vim.trim(cmd.args or "")
  if arg ~= "" then
    local path
    path, first, last = M.parse_arg(arg)
    abs = vim.fn.fnamemodify(status.absolute(root, path), ":p")
  else
    local name = vim.api.nvim_buf_get_name(0)
    if name == "" or vim.bo.buftype ~= "" then
      return nil, "Cannot read file [No Name]"
    end
    abs = vim.fn.fnamemodify(name, ":p")
    if cmd.range and cmd.range > 0 then
      first, last = cmd.line1, cmd.line2
    end
  end
  local path = M.relative(root, abs)
  local result = { path = path, abs = abs, first = first, last = last }
  if first and last and first > last then
    return nil, string.format("Invalid section %s:%d:%d (start after end)", path, first, last)
  end
  if need_content == false then
    return result
  end
  local text = status.local_content(abs)
  if text == nil then
    return nil, "Cannot read file " .. path
  end
  if first then
    result.content = lines_of(text, first, last)
  else
    result.content = text
  end
  return result
end

return M
