-- File statuses: the backend's (`M`, `A`, `!A`, `S`, blank) combined with the frontend's
-- (`R`, `~`, `~M`), which compare the local file (its open buffer if loaded, else the disk)
-- with the context snapshot.
local safepath = require("bb7.safepath")

local M = {}

--- The text of a loaded buffer as it would be written (with the final newline when 'eol').
function M.buffer_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. "\n"
  end
  return text
end

--- The absolute path of a context path (relative to `root` unless absolute).
function M.absolute(root, path)
  if path:sub(1, 1) == "/" then
    return path
  end
  return root .. "/" .. path
end

--- The loaded file buffers by their resolved absolute path (exact names: `vim.fn.bufnr`
--- matches parts of names, so `a.c` would find `a.cpp`).
function M.loaded_buffers()
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" then
        out[vim.fn.resolve(vim.fn.fnamemodify(name, ":p"))] = buf
      end
    end
  end
  return out
end

--- The local content of `abs`: its loaded buffer, else the file on disk, else nil. `buffers`
--- (from M.loaded_buffers) saves listing the buffers again for each of many files.
function M.local_content(abs, buffers)
  buffers = buffers or M.loaded_buffers()
  local buf = buffers[vim.fn.resolve(vim.fn.fnamemodify(abs, ":p"))]
  if buf and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) then
    return M.buffer_text(buf)
  end
  -- a file the user named: links are followed, but a FIFO or device would block or never end
  return (safepath.read(abs, { follow = true }))
end

--- The local content of context entry `path` of project `root`, as M.local_content but never
--- through a link and only from a regular file (a pulled change may have made the entry a link
--- to a secret, or a shipped chat may name `/dev/zero`): the text, or nil and why ("missing"
--- when the file is gone).
function M.context_content(root, path, buffers)
  local abs, why = safepath.context_abs(root, path)
  if not abs then
    return nil, why
  end
  buffers = buffers or M.loaded_buffers()
  local buf = buffers[vim.fn.resolve(vim.fn.fnamemodify(abs, ":p"))]
  if buf and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) then
    return M.buffer_text(buf)
  end
  return safepath.read(abs)
end

--- The status to show for one `get_file_statuses` entry, given the local content (nil when
--- the file does not exist locally: `~`, as for any other local change).
function M.compute(file, local_text)
  local backend = file.status or ""
  if backend == "S" or backend == "A" or backend == "!A" then
    return backend
  end
  -- a file deleted locally is out of sync too (the model still sees its snapshot)
  if file.in_context and file.context_content ~= nil and local_text ~= file.context_content then
    if backend == "M" then
      return "~M"
    end
    return "~"
  end
  if backend == "" and file.readonly then
    return "R"
  end
  return backend
end

--- Every entry of `files` with `display_status` set, using the buffers and disk under `root`.
function M.compute_all(root, files)
  local buffers = M.loaded_buffers()
  for _, file in ipairs(files) do
    local text, why = M.context_content(root, file.path, buffers)
    file.display_status = M.compute(file, text)
    -- only a file that is really gone is "missing"; a refused link or device is not
    file.missing = why == "missing" and file.in_context == true or nil
  end
  return files
end

-- The first plugin's statusline API lived in this module; configs calling
-- `require("bb7.status").status()` keep working (see bb7.indicator).

--- The statusline symbol ("" when idle).
function M.status()
  return require("bb7.indicator").text()
end

--- The highlight group of the symbol (BB7StatusStreaming, BB7StatusUnread) or nil.
function M.status_hl()
  return require("bb7.indicator").highlight()
end

--- "streaming", "unread" or nil.
function M.raw_status()
  return require("bb7.indicator").raw()
end

return M
