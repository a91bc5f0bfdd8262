-- Keeps the frontend statuses (~, ~M, R) current while the bb7 UI is open: an edit, a write or
-- a focus change of a buffer whose file is in the context recomputes them, debounced; other
-- buffers cost one table lookup. With `watch = true` in the options a write of a context file
-- also updates its context snapshot (`context_update`), as `u` in the files pane does.
-- Attached when the UI opens, removed when it closes.
local config = require("bb7.config")
local state = require("bb7.state")
local status = require("bb7.status")

local M = {}

M.DELAY = 150 -- ms of quiet before the statuses are recomputed
local timer = nil
local GROUP = "bb7-local-files"

-- The context path of buffer `buf` when its file is a whole file in the context, else nil.
function M.context_path(buf)
  if vim.bo[buf].buftype ~= "" or not state.data.root then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  local abs = vim.fn.resolve(vim.fn.fnamemodify(name, ":p"))
  for _, file in ipairs(state.data.files) do
    if file.in_context and vim.fn.resolve(status.absolute(state.data.root, file.path)) == abs then
      return file.path
    end
  end
  return nil
end

--- Recomputes the statuses once the edits have paused for M.DELAY ms.
function M.schedule()
  if timer then
    timer:stop()
  else
    timer = (vim.uv or vim.loop).new_timer()
  end
  timer:start(M.DELAY, 0, vim.schedule_wrap(function()
    require("bb7.actions").recompute_statuses()
  end))
end

local function on_save(buf)
  local path = M.context_path(buf)
  if not path then
    return
  end
  if not config.options.watch then
    return M.schedule()
  end
  local file = require("bb7.actions.common").file_entry(path)
  if file and file.context_content ~= nil and file.context_content == status.buffer_text(buf) then
    return M.schedule()
  end
  if state.data.stream then
    -- the daemon refuses context changes while a reply streams: the status shows ~ meanwhile
    return M.schedule()
  end
  require("bb7.actions").update(path, function()
    M.schedule()
  end, { quiet = true })
end

function M.attach()
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "InsertLeave" }, {
    group = group,
    callback = function(ev)
      if M.context_path(ev.buf) then
        M.schedule()
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(ev)
      on_save(ev.buf)
    end,
  })
  -- the tab closed some other way than `q` (:tabclose): stop watching too
  vim.api.nvim_create_autocmd("TabClosed", {
    group = group,
    callback = function()
      local ui = require("bb7.ui")
      if not ui.is_open() then
        M.detach()
      end
    end,
  })
  -- files changed outside Neovim (a shell, git): the first plugin's FocusGained refresh
  vim.api.nvim_create_autocmd("FocusGained", {
    group = group,
    callback = function()
      if state.data.active_id and not state.data.stream then
        require("bb7.actions").refresh_files()
      end
    end,
  })
end

function M.detach()
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

return M
