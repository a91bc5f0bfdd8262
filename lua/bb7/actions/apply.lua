-- Applying and rejecting outputs. The daemon records the apply and answers with the file's
-- new text; the plugin writes it (bb7.writeback). Nothing local is replaced without the user
-- saying so: a `!A` output (the model created a file that exists locally) asks where to write
-- or cancels, and a buffer with unsaved changes asks before its text is replaced.
local common = require("bb7.actions.common")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")
local status = require("bb7.status")
local sync = require("bb7.actions.sync")
local writeback = require("bb7.writeback")

local M = {}
local done = common.done

M.REPLACE = "Replace the unsaved changes"
M.OVERWRITE = "Overwrite it"
M.CANCEL = "Cancel"
M.REJECT = "Reject"
M.KEEP = "Keep"
M.THROUGH_LINK = "Write through the link"
M.OVERWRITE_LOCAL = "Overwrite the local changes"

--- Whether a file has output that differs from what it would replace.
local function pending_output(file)
  return file.has_output and (file.status == "M" or file.status == "A" or file.status == "!A")
end

local function absolute(path)
  return status.absolute(state.data.root, path)
end

local function outside(path)
  return writeback.outside(absolute(path), state.data.root)
end

-- cb(true) when the unsaved buffer changes of `dest` (if any) may be replaced.
local function may_write_buffer(dest, cb)
  if not writeback.unsaved(absolute(dest)) then
    return cb(true)
  end
  vim.ui.select({ M.REPLACE, M.CANCEL }, { prompt = "BB-7: " .. dest .. " has unsaved changes in Neovim." }, function(choice)
    if choice ~= M.REPLACE then
      notify.info("Apply cancelled")
    end
    cb(choice == M.REPLACE)
  end)
end

-- Whether the saved local file `path` (a context file) differs from its context snapshot: the
-- user edited it (~ or ~M) or it changed on disk since it was added. Unsaved buffer changes are
-- asked about on their own.
local function changed_locally(path)
  local file = common.file_entry(path)
  if not file or not file.in_context or file.context_content == nil then
    return false
  end
  -- not the buffer (asked about on its own); a FIFO or device is not read (it would block),
  -- and what cannot be read counts as changed: the user is asked
  local text, why = require("bb7.safepath").read(absolute(path), { follow = true })
  if text == nil then
    return why ~= "missing"
  end
  return text ~= file.context_content
end

-- cb(true) when the saved local changes of `path` (if any) may be overwritten.
local function may_overwrite_local(path, cb)
  if writeback.unsaved(absolute(path)) or not changed_locally(path) then
    return cb(true)
  end
  local prompt = "BB-7: " .. path .. " changed locally since it was added to the context (update it with u to keep both)."
  vim.ui.select({ M.OVERWRITE_LOCAL, M.CANCEL }, { prompt = prompt }, function(choice)
    if choice ~= M.OVERWRITE_LOCAL then
      notify.info("Apply cancelled")
    end
    cb(choice == M.OVERWRITE_LOCAL)
  end)
end

-- cb(true) when `dest` may be written: writable, a link out of the project confirmed, and its
-- unsaved buffer changes (if any) may be replaced.
local function may_write(dest, cb)
  local why = writeback.unwritable(absolute(dest))
  if why then
    notify.error("Cannot write file " .. dest .. ": " .. why)
    return cb(false)
  end
  local target = outside(dest)
  if target then
    local prompt = string.format("BB-7: %s is a link to %s, outside the project.", dest, target)
    return vim.ui.select({ M.THROUGH_LINK, M.CANCEL }, { prompt = prompt }, function(choice)
      if choice ~= M.THROUGH_LINK then
        notify.info("Apply cancelled")
        return cb(false)
      end
      may_write_buffer(dest, cb)
    end)
  end
  may_write_buffer(dest, cb)
end

---@class bb7.ApplyReply  the reply to `apply_file` / `apply_file_as`
---@field type "ok"|"error"
---@field content string|nil the file's full new text, for the plugin to write
---@field message string|nil

-- Sends `apply_file` (dest == path) or `apply_file_as`, then writes the reply's text to
-- `dest`. cb(ok, message).
local function apply_to(path, dest, cb)
  local action, fields = "apply_file", { path = path }
  if dest ~= path then
    action, fields = "apply_file_as", { path = path, destination = dest }
  end
  session.request(action, fields, function(reply)
    if reply.type == "error" then
      return cb(false, reply.message)
    end
    if type(reply.content) ~= "string" then
      return cb(false, "the daemon sent no content to write")
    end
    local ok, err = writeback.write(absolute(dest), reply.content)
    if not ok then
      -- the daemon already took the output: keep the text where the user can save it
      vim.fn.setreg('"', reply.content)
      return cb(false, string.format("cannot write %s (%s); its new text is in the \" register", dest, tostring(err)))
    end
    cb(true)
  end)
end

local function report(path, dest, cb)
  return function(ok, message)
    if not ok then
      if message == "File not found" then
        notify.warn("No output to apply")
      else
        notify.daemon_error("apply " .. path, message)
      end
      return done(cb, false)
    end
    notify.info(dest == path and ("Applied " .. path) or ("Applied " .. path .. " as " .. dest))
    sync.load_chat()
    done(cb, true)
  end
end

--- Writes the output of `path` to `dest` (relative to the root, or absolute) with
--- `apply_file_as`, asking before replacing an existing file.
function M.apply_as(path, dest, cb)
  dest = vim.trim(dest or "")
  if dest == "" then
    notify.info("Apply cancelled")
    return done(cb, false)
  end
  local function go()
    may_write(dest, function(ok)
      if not ok then
        return done(cb, false)
      end
      apply_to(path, dest, report(path, dest, cb))
    end)
  end
  if vim.fn.filereadable(absolute(dest)) == 1 then
    vim.ui.select({ M.OVERWRITE, M.CANCEL }, { prompt = "BB-7: " .. dest .. " exists." }, function(choice)
      if choice == M.OVERWRITE then
        go()
      else
        notify.info("Apply cancelled")
        done(cb, false)
      end
    end)
    return
  end
  go()
end

-- Whether a review left rejected hunks in the output of `file` (bb7.rejections).
local function has_rejections(file)
  return file ~= nil and require("bb7.rejections").get(state.data.active_id, file.path, file.output_content) ~= nil
end

M.APPLY_REJECTED = "Apply the whole output (the rejected hunks too)"

--- Applies the output of `path`. A `!A` output asks for the destination (the local path is
--- offered; keeping it asks once more before overwriting). An output with hunks rejected in a
--- review asks first.
function M.apply(path, cb, confirmed)
  local file = common.file_entry(path)
  if not confirmed and has_rejections(file) then
    local prompt = "BB-7: you rejected hunks of " .. path .. " in a review; the output still holds them."
    return vim.ui.select({ M.APPLY_REJECTED, M.CANCEL }, { prompt = prompt }, function(choice)
      if choice ~= M.APPLY_REJECTED then
        notify.info("Apply cancelled")
        return done(cb, false)
      end
      M.apply(path, cb, true)
    end)
  end
  if file and file.has_output and not pending_output(file) then
    notify.info("File already applied")
    return done(cb, false)
  end
  if file and not file.has_output then
    notify.warn("No output to apply")
    return done(cb, false)
  end
  if file and file.status == "!A" then
    vim.ui.input({ prompt = "BB-7: " .. path .. " exists locally. Write the output to: ", default = path }, function(dest)
      if dest == nil then
        notify.info("Apply cancelled")
        return done(cb, false)
      end
      M.apply_as(path, dest, cb)
    end)
    return
  end
  may_write(path, function(ok)
    if not ok then
      return done(cb, false)
    end
    may_overwrite_local(path, function(overwrite)
      if not overwrite then
        return done(cb, false)
      end
      apply_to(path, path, report(path, path, cb))
    end)
  end)
end

--- Applies every pending output except `!A` ones and files with unsaved buffer changes, which
--- are counted and named.
function M.apply_all(cb)
  local todo, conflicts, unsaved, linked, changed, reviewed = {}, {}, {}, {}, {}, {}
  for _, file in ipairs(state.data.files) do
    if pending_output(file) then
      if file.status == "!A" then
        table.insert(conflicts, file.path)
      elseif has_rejections(file) then
        table.insert(reviewed, file.path)
      elseif outside(file.path) then
        table.insert(linked, file.path)
      elseif writeback.unsaved(absolute(file.path)) then
        table.insert(unsaved, file.path)
      elseif changed_locally(file.path) then
        table.insert(changed, file.path)
      else
        table.insert(todo, file.path)
      end
    end
  end
  if #conflicts > 0 then
    notify.warn(string.format("Skipped %d %s locally (!A): %s; apply each with its own key", #conflicts, #conflicts == 1 and "file that exists" or "files that exist", table.concat(conflicts, ", ")))
  end
  if #unsaved > 0 then
    notify.warn(string.format("Skipped %d file%s with unsaved changes: %s", #unsaved, #unsaved == 1 and "" or "s", table.concat(unsaved, ", ")))
  end
  if #changed > 0 then
    notify.warn(string.format("Skipped %d file%s changed locally since added: %s; apply each with its own key", #changed, #changed == 1 and "" or "s", table.concat(changed, ", ")))
  end
  if #linked > 0 then
    notify.warn(string.format("Skipped %d file%s linked outside the project: %s; apply each with its own key", #linked, #linked == 1 and "" or "s", table.concat(linked, ", ")))
  end
  if #reviewed > 0 then
    notify.warn(string.format("Skipped %d file%s with hunks you rejected in a review: %s; review %s again or apply it with its own key", #reviewed, #reviewed == 1 and "" or "s", table.concat(reviewed, ", "), #reviewed == 1 and "it" or "each"))
  end
  if #todo == 0 then
    if #conflicts == 0 and #unsaved == 0 and #linked == 0 and #changed == 0 and #reviewed == 0 then
      notify.warn("No output to apply")
    end
    return done(cb, false)
  end
  local applied, failed = 0, {}
  local function step(i)
    if i > #todo then
      if #failed > 0 then
        notify.error("Failed to apply " .. table.concat(failed, "; "))
      end
      if applied > 0 then
        notify.info(string.format("Applied %d file%s", applied, applied == 1 and "" or "s"))
      end
      sync.load_chat()
      return done(cb, #failed == 0)
    end
    local path = todo[i]
    local why = writeback.unwritable(absolute(path))
    if why then
      table.insert(failed, path .. ": " .. why)
      return step(i + 1)
    end
    apply_to(path, path, function(ok, message)
      if ok then
        applied = applied + 1
      else
        table.insert(failed, path .. ": " .. tostring(message))
      end
      step(i + 1)
    end)
  end
  step(1)
end

--- Rejects (deletes) the output of `path` after a confirmation.
function M.reject(path, cb)
  local file = common.file_entry(path)
  if file and not file.has_output then
    notify.warn("No output to reject")
    return done(cb, false)
  end
  vim.ui.select({ M.REJECT, M.KEEP }, { prompt = "BB-7: reject the output of " .. path .. "?" }, function(choice)
    if choice ~= M.REJECT then
      return done(cb, false)
    end
    session.request("output_delete", { path = path }, function(reply)
      if reply.type == "error" then
        if reply.message == "File not found" then
          notify.warn("No output to reject")
        else
          notify.daemon_error("reject " .. path, reply.message)
        end
        return done(cb, false)
      end
      notify.info("Rejected " .. path)
      sync.load_chat()
      done(cb, true)
    end)
  end)
end

return M
