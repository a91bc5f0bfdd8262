-- A fresh plugin per test: unloads every bb7 module, closes extra tabs and windows, wipes
-- buffers, makes a new project directory as the cwd, captures vim.notify, and plugs a fake
-- daemon in as the transport.
local Fake = require("helpers.fake_daemon")

local M = {}

M.notes = {}

local real_notify = vim.notify
local real_select = vim.ui.select
local real_input = vim.ui.input

function M.reset(opts)
  opts = opts or {}
  local ok_session, session = pcall(require, "bb7.session")
  if ok_session then
    pcall(session.stop)
  end
  for name in pairs(package.loaded) do
    if name == "bb7" or name:match("^bb7%.") then
      package.loaded[name] = nil
    end
  end
  for _, group in ipairs({ "bb7", "bb7-input", "bb7-local-files", "bb7-float", "bb7-autopreview", "bb7-instructions", "bb7-complete", "bb7-tab" }) do
    pcall(vim.api.nvim_del_augroup_by_name, group)
  end
  vim.cmd("silent! tabonly!")
  vim.cmd("silent! only!")
  vim.cmd("enew!")
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if buf ~= vim.api.nvim_get_current_buf() then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  M.notes = {}
  vim.ui.select = real_select
  vim.ui.input = real_input
  vim.notify = function(msg, level)
    table.insert(M.notes, { msg = msg, level = level })
  end
  M.dir = vim.fn.tempname()
  vim.fn.mkdir(M.dir, "p")
  M.dir = vim.fn.resolve(M.dir)
  vim.cmd("cd " .. vim.fn.fnameescape(M.dir))
  if opts.initialized then
    vim.fn.mkdir(M.dir .. "/.bb7/chats", "p")
  end
  M.fake = Fake.new()
  require("bb7").setup(opts.setup or {})
  require("bb7.session").transport = M.fake:transport()
  return M.fake
end

function M.restore_notify()
  vim.notify = real_notify
end

--- Writes a file under the project and returns its absolute path.
function M.write(rel, lines)
  local abs = M.dir .. "/" .. rel
  vim.fn.mkdir(vim.fn.fnamemodify(abs, ":h"), "p")
  vim.fn.writefile(lines, abs)
  return abs
end

--- The messages notified so far as "LEVEL text" strings.
function M.messages()
  local names = { [vim.log.levels.INFO] = "INFO", [vim.log.levels.WARN] = "WARN", [vim.log.levels.ERROR] = "ERROR" }
  local out = {}
  for _, note in ipairs(M.notes) do
    table.insert(out, (names[note.level] or tostring(note.level)) .. " " .. note.msg)
  end
  return out
end

--- Waits until a notification equal to `text` ("LEVEL message") arrived.
function M.wait_message(text, ms)
  local ok = vim.wait(ms or 2000, function()
    return vim.tbl_contains(M.messages(), text)
  end, 5)
  if not ok then
    error("no notification " .. vim.inspect(text) .. "; got " .. vim.inspect(M.messages()), 2)
  end
end

--- Runs the event loop until no request is waiting for its reply (chains of requests are
--- sent from reply callbacks, so a chain keeps something pending until it ends).
function M.settle(ms)
  local session = require("bb7.session")
  vim.wait(ms or 2000, function()
    local client = session.client
    return client == nil or not client:is_running() or next(client.pending) == nil
  end, 2)
  vim.wait(10, function()
    return false
  end, 2)
end

--- Runs an ex command (e.g. "BB7Add") and lets the replies arrive.
function M.cmd(text)
  vim.cmd(text)
  M.settle()
end

return M
