-- Context actions: add (files, sections, directories), remove, update, read-only, and the two
-- diff views of a file's output.
local common = require("bb7.actions.common")
local notify = require("bb7.notify")
local safepath = require("bb7.safepath")
local session = require("bb7.session")
local state = require("bb7.state")
local status = require("bb7.status")
local sync = require("bb7.actions.sync")

local M = {}
local done = common.done

local function section_label(path, first, last)
  if first then
    return string.format("%s:%d-%d", path, first, last)
  end
  return path
end

--- Adds a file (or, with `first`/`last`, a section of it) with `content`. `opts.quiet` skips
--- the success message (directory adds report once).
function M.add(path, content, opts, cb)
  opts = opts or {}
  -- refused before sending: a binary file was added as mojibake (and showed `~` for ever),
  -- and a file over the daemon's line limit got an error that answered no request
  local refusal = content and require("bb7.add_targets").refusal(content)
  if refusal then
    notify.error("Cannot add " .. section_label(path, opts.first, opts.last) .. ": " .. refusal)
    return done(cb, false)
  end
  local action, fields
  if opts.first then
    action = "context_add_section"
    fields = { path = path, content = content, start_line = opts.first, end_line = opts.last }
  else
    action = "context_add"
    fields = { path = path, content = content, readonly = opts.readonly == true }
  end
  session.request(action, fields, function(reply)
    if reply.type == "error" then
      if reply.message == "Context file already exists" then
        if not opts.quiet then
          notify.warn("File already in context")
        end
      else
        notify.daemon_error("add file", reply.message)
      end
      return done(cb, false)
    end
    if not opts.quiet then
      notify.info("Added " .. section_label(path, opts.first, opts.last))
      sync.reload()
    end
    done(cb, true)
  end)
end

--- Adds every file of a directory listing (`files`: `{path, content}`) one by one, then
--- reports once.
function M.add_many(files, opts, cb)
  local added, skipped = 0, 0
  local function step(i)
    if i > #files then
      local text = string.format("Added %d files", added)
      if skipped > 0 then
        text = text .. string.format(" (%d already in context or refused)", skipped)
      end
      notify.info(text)
      sync.load_chat()
      return done(cb, added)
    end
    M.add(files[i].path, files[i].content, { readonly = opts and opts.readonly, quiet = true }, function(ok)
      if ok then
        added = added + 1
      else
        skipped = skipped + 1
      end
      step(i + 1)
    end)
  end
  step(1)
end

function M.remove(path, opts, cb)
  opts = opts or {}
  local action, fields = "context_remove", { path = path }
  if opts.first then
    action = "context_remove_section"
    fields = { path = path, start_line = opts.first, end_line = opts.last }
  end
  session.request(action, fields, function(reply)
    if reply.type == "error" then
      if reply.message == "File not found" then
        notify.warn("File not in context")
      else
        notify.daemon_error("remove file", reply.message)
      end
      return done(cb, false)
    end
    notify.info("Removed " .. section_label(path, opts.first, opts.last))
    sync.reload()
    done(cb, true)
  end)
end

--- Re-snapshots a context file from its local content.
--- Updates the context snapshot of `path` from the local file (its buffer when loaded).
--- Refuses when the snapshot already equals it ("Already in sync"). `opts.quiet` (the watched
--- buffers) leaves out the "Already in sync" warning.
function M.update(path, cb, opts)
  opts = opts or {}
  local content, why = status.context_content(state.data.root, path)
  if content == nil then
    notify.error("Cannot read file " .. safepath.inert(path) .. (why and why ~= "missing" and (": " .. why) or ""))
    return done(cb, false)
  end
  local file = common.file_entry(path)
  if file and file.context_content ~= nil and file.context_content == content then
    if not opts.quiet then
      notify.info("Already in sync: " .. path)
    end
    return done(cb, false)
  end
  if M.resync_hides_edit(file) then
    notify.warn(M.resync_refusal(path))
    return done(cb, false)
  end
  session.request("context_update", { path = path, content = content }, function(reply)
    if reply.type == "error" then
      if reply.message == "File not found" then
        notify.warn("File not in context")
      else
        notify.daemon_error("update file", reply.message)
      end
      return done(cb, false)
    end
    notify.info((opts.quiet and "Re-synced " or "Updated ") .. path)
    sync.load_chat()
    done(cb, true)
  end)
end

--- Whether taking the local text of `file` as its context snapshot would hide a local edit: the
--- file has an output, and apply compares the local file with the snapshot to ask before
--- overwriting; after the re-sync they are equal and the edit would be overwritten silently.
function M.resync_hides_edit(file)
  return file ~= nil and file.has_output == true and file.status == "M"
end

--- Why `path` was not re-synced.
function M.resync_refusal(path)
  return "Not re-synced " .. path .. ": it has a pending output that would then overwrite your edit;"
    .. " apply or reject the output first (:BB7DiffLocal merges them)"
end

--- Updates every whole context file whose local text differs from its snapshot (`U`).
function M.update_all(cb)
  local todo, refused, unreadable = {}, 0, {}
  local buffers = status.loaded_buffers()
  for _, file in ipairs(state.data.files) do
    if file.in_context and not file.start_line and file.context_content ~= nil then
      local text, why = status.context_content(state.data.root, file.path, buffers)
      if text ~= nil and text ~= file.context_content and M.resync_hides_edit(file) then
        notify.warn(M.resync_refusal(file.path))
        refused = refused + 1
      elseif text ~= nil and text ~= file.context_content then
        table.insert(todo, { path = file.path, content = text })
      elseif text == nil and why ~= "missing" then
        table.insert(unreadable, safepath.inert(file.path) .. ": " .. tostring(why))
      end
    end
  end
  if #unreadable > 0 then
    notify.error("Not updated " .. table.concat(unreadable, "; "))
  end
  if #todo == 0 then
    if refused == 0 and #unreadable == 0 then
      notify.info("All context files are in sync")
    end
    return done(cb, false)
  end
  local updated, failed = 0, {}
  local function step(i)
    if i > #todo then
      if #failed > 0 then
        notify.error("Failed to update " .. table.concat(failed, "; "))
      end
      notify.info(string.format("Updated %d file%s", updated, updated == 1 and "" or "s"))
      sync.load_chat()
      return done(cb, #failed == 0)
    end
    session.request("context_update", { path = todo[i].path, content = todo[i].content }, function(reply)
      if reply.type == "error" then
        table.insert(failed, todo[i].path .. ": " .. tostring(reply.message))
      else
        updated = updated + 1
      end
      step(i + 1)
    end)
  end
  step(1)
end

function M.set_readonly(path, readonly, cb)
  session.request("context_set_readonly", { path = path, readonly = readonly }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("set read-only", reply.message)
      return done(cb, false)
    end
    notify.info((readonly and "Set read-only " or "Set writable ") .. path)
    sync.load_chat(cb)
  end)
end

--- The context-to-output diff of a file, shown in the preview.
function M.show_diff(path)
  local file = common.file_entry(path)
  if not file then
    notify.warn("File not in context")
    return
  end
  if not file.has_output then
    notify.warn("No output to apply")
    return
  end
  require("bb7.ui.preview").show_diff(path, file.context_content or "", file.output_content or "")
end

local OUTCOME = {
  full = "Applied %s in full",
  partial = "Applied part of %s (the rest of the output stays)",
  none = "Took nothing from the output of %s",
}

--- `:BB7DiffLocal`: the local file and the output side by side in a new tab, native diff mode
--- (`dp` on the output side or `do` on the local side takes a hunk). The output side is
--- read-only. Closing the tab writes the local buffer when it changed, then tells the daemon
--- (`diff_local_done`), which records a full or partial apply; the outcome is reported.
function M.diff_local(path, cb)
  session.request("get_diff_paths", { path = path }, function(reply)
    if reply.type ~= "diff_paths" then
      if reply.message == "File not found" then
        notify.warn("No output to apply")
      else
        notify.daemon_error("diff " .. path, reply.message)
      end
      return done(cb, false)
    end
    -- the output is the model's text: read as data into a scratch buffer (no modeline of it is
    -- applied, no character of its name is a command)
    local output, why = safepath.read(reply.output_path)
    if output == nil and why ~= "missing" then
      notify.error("Cannot read the output of " .. safepath.inert(path) .. ": " .. why)
      return done(cb, false)
    end
    -- relative to the working directory when inside it, as a file you open shows in the tab line
    local local_buf, refused = safepath.open_in_tab(vim.fn.fnamemodify(reply.local_path, ":."))
    if not local_buf then
      notify.error("Cannot open " .. safepath.inert(path) .. ": " .. refused)
      return done(cb, false)
    end
    vim.cmd.diffthis()
    local output_buf = safepath.text_buffer(reply.output_path, output or "")
    vim.bo[output_buf].filetype = vim.bo[local_buf].filetype
    vim.bo[output_buf].modifiable = false
    vim.bo[output_buf].readonly = true
    vim.cmd("vertical rightbelow split")
    vim.api.nvim_win_set_buf(0, output_buf)
    vim.cmd.diffthis()
    vim.cmd("wincmd p")
    local tab = vim.api.nvim_get_current_tabpage()
    local group = vim.api.nvim_create_augroup("bb7-diff-local-" .. tostring(tab), { clear = true })
    vim.api.nvim_create_autocmd("TabClosed", {
      group = group,
      callback = function()
        if vim.api.nvim_tabpage_is_valid(tab) then
          return
        end
        vim.api.nvim_del_augroup_by_id(group)
        if vim.api.nvim_buf_is_valid(local_buf) and vim.bo[local_buf].modified then
          local ok, err = pcall(vim.api.nvim_buf_call, local_buf, function()
            vim.cmd("silent keepalt write")
          end)
          if not ok then
            notify.error("Cannot write " .. path .. ": " .. tostring(err))
          end
        end
        if vim.api.nvim_buf_is_valid(output_buf) then
          pcall(vim.api.nvim_buf_delete, output_buf, { force = true })
        end
        session.request("diff_local_done", { path = path }, function(result)
          if result.type == "error" then
            notify.daemon_error("record the diff of " .. path, result.message)
          elseif OUTCOME[result.outcome] then
            notify.info(string.format(OUTCOME[result.outcome], path))
          end
          sync.load_chat()
        end)
      end,
    })
    done(cb, true)
  end)
end

return M
