-- Hunk-by-hunk review of an output in the real buffer (`:BB7Review`, `<LocalLeader>h` in the
-- files pane): the local file opens in a new tab with each hunk of the output shown inline (the
-- lines it replaces marked as removed, the output's lines as virtual lines under them). Keys of
-- the `review` keymaps accept or reject the hunk under (or after) the cursor and jump between
-- hunks; when none is left undecided (or on `finish`) the buffer is written and the daemon told
-- (`diff_local_done`), which records a full or partial apply as `:BB7DiffLocal` does. The
-- mappings and marks are removed when the review ends.
local config = require("bb7.config")
local keymaps = require("bb7.keymaps")
local notify = require("bb7.notify")
local rejections = require("bb7.rejections")
local safepath = require("bb7.safepath")
local session = require("bb7.session")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-review")
M.ns = ns

M.active = nil -- { buf, path, output = {lines}, rejected = {key = true}, hunks = {...} }

local OUTCOME = {
  full = "Applied %s in full",
  partial = "Applied part of %s (the rest of the output stays)",
  none = "Took nothing from the output of %s",
}

local REVIEWED = "Reviewed %s: the accepted hunks are in the file, the rejected ones dropped with the output"
local KEPT_REJECTED = "The hunks of %s you rejected are remembered: apply all skips the file, and"
  .. " its next review starts with them rejected"

local function buffer_lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- A hunk's identity across recomputations: its removed and added text.
local function key(hunk)
  return table.concat(hunk.old, "\n") .. "\0" .. table.concat(hunk.new, "\n")
end

--- The hunks turning `before` into `after` (lists of lines): `{ start, count, old, new }`,
--- `start` the 1-based first line replaced (for an insertion: the line after which it goes,
--- 0 at the top). Pure.
function M.hunks(before, after)
  local a = table.concat(before, "\n") .. "\n"
  local b = table.concat(after, "\n") .. "\n"
  local out = {}
  for _, h in ipairs(vim.diff(a, b, { result_type = "indices" }) or {}) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    table.insert(out, {
      start = sa,
      count = ca,
      old = ca > 0 and vim.list_slice(before, sa, sa + ca - 1) or {},
      new = cb > 0 and vim.list_slice(after, sb, sb + cb - 1) or {},
    })
  end
  return out
end

-- The undecided hunks of the review now.
local function open_hunks(r)
  local out = {}
  for _, hunk in ipairs(M.hunks(buffer_lines(r.buf), r.output)) do
    if not r.rejected[key(hunk)] then
      table.insert(out, hunk)
    end
  end
  return out
end

local function hint()
  local parts = {}
  for _, action in ipairs({ "accept", "reject", "next", "prev", "finish" }) do
    local lhs = config.key("review", action)
    if lhs then
      local leader = vim.g.maplocalleader or "\\"
      table.insert(parts, lhs:gsub("<[Ll]ocal[Ll]eader>", function()
        return leader == " " and "<Space>" or leader
      end) .. " " .. action)
    end
  end
  return table.concat(parts, " · ")
end

local function draw(r)
  vim.api.nvim_buf_clear_namespace(r.buf, ns, 0, -1)
  r.hunks = open_hunks(r)
  local total = #r.hunks
  local count = vim.api.nvim_buf_line_count(r.buf)
  for i, hunk in ipairs(r.hunks) do
    local virt = {}
    for _, line in ipairs(hunk.new) do
      table.insert(virt, { { "+ " .. line, "BB7DiffAdd" } })
    end
    local label = { { string.format(" bb7 hunk %d/%d  %s ", i, total, i == 1 and hint() or ""), "BB7DiffHeader" } }
    if hunk.count > 0 then
      local first = hunk.start - 1
      for row = first, first + hunk.count - 1 do
        vim.api.nvim_buf_set_extmark(r.buf, ns, row, 0, { line_hl_group = "BB7DiffDelete", sign_text = "-", sign_hl_group = "BB7DiffDelete" })
      end
      vim.api.nvim_buf_set_extmark(r.buf, ns, first, 0, { virt_text = label, virt_text_pos = "eol" })
      if #virt > 0 then
        vim.api.nvim_buf_set_extmark(r.buf, ns, first + hunk.count - 1, 0, { virt_lines = virt })
      end
    elseif hunk.start == 0 or count == 0 then
      table.insert(virt, 1, label)
      vim.api.nvim_buf_set_extmark(r.buf, ns, 0, 0, { virt_lines = virt, virt_lines_above = true })
    else
      table.insert(virt, 1, label)
      vim.api.nvim_buf_set_extmark(r.buf, ns, math.min(hunk.start, count) - 1, 0, { virt_lines = virt })
    end
  end
end

-- A new tab copies the window options of the window it was opened from (from the files pane:
-- no sign column, no numbers, its key hints): opened from a bb7 pane, the review window gets
-- the user's own settings back. Always: a sign column that stays (the removed-line markers are
-- signs; one that came and went shifted the text), and a bar naming the keys and the way out.
local INHERITED = { "number", "relativenumber", "wrap", "linebreak", "cursorline", "winfixwidth", "foldmethod", "foldtext", "statusline" }

local function dress(win, from_pane)
  if from_pane then
    for _, option in ipairs(INHERITED) do
      vim.wo[win][option] = vim.go[option]
    end
  end
  vim.wo[win].signcolumn = "yes"
  vim.wo[win].winbar = (" bb7 review: " .. hint() .. "  (finish ends it, writing what you took)"):gsub("%%", "%%%%")
end

-- The hunk at or after the cursor row (the last one before it when none is after).
local function current(r)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local best
  for i, hunk in ipairs(r.hunks) do
    local last = hunk.start + math.max(hunk.count, 1) - 1
    if row <= last then
      return hunk, i
    end
    best = i
  end
  return best and r.hunks[best], best
end

local function goto_hunk(hunk)
  if hunk then
    local row = math.max(1, math.min(hunk.start, vim.api.nvim_buf_line_count(0)))
    vim.api.nvim_win_set_cursor(0, { row, 0 })
  end
end

local function finish_if_done(r)
  draw(r)
  if #r.hunks == 0 then
    M.finish()
  else
    local hunk = current(r)
    goto_hunk(hunk)
  end
end

--- Takes the output's lines of the hunk under (or after) the cursor into the buffer.
function M.accept()
  local r = M.active
  local hunk = r and current(r)
  if not hunk then
    return
  end
  if hunk.count == 0 then
    vim.api.nvim_buf_set_lines(r.buf, hunk.start, hunk.start, false, hunk.new)
  else
    vim.api.nvim_buf_set_lines(r.buf, hunk.start - 1, hunk.start - 1 + hunk.count, false, hunk.new)
  end
  finish_if_done(r)
end

--- Keeps the local lines of the hunk under (or after) the cursor.
function M.reject()
  local r = M.active
  local hunk = r and current(r)
  if not hunk then
    return
  end
  r.rejected[key(hunk)] = true
  finish_if_done(r)
end

--- Moves to the next (`delta` 1) or previous (-1) hunk.
function M.jump(delta)
  local r = M.active
  if not r or #r.hunks == 0 then
    return
  end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local pick
  if delta > 0 then
    for _, hunk in ipairs(r.hunks) do
      if hunk.start > row and not pick then
        pick = hunk
      end
    end
    pick = pick or r.hunks[1]
  else
    for _, hunk in ipairs(r.hunks) do
      if math.max(hunk.start, 1) < row then
        pick = hunk
      end
    end
    pick = pick or r.hunks[#r.hunks]
  end
  goto_hunk(pick)
end

local function unmap(r)
  for _, entry in ipairs(config.options.keymaps.review or {}) do
    for _, mode in ipairs(type(entry[1]) == "table" and entry[1] or { entry[1] }) do
      pcall(vim.keymap.del, mode, entry[2], { buffer = r.buf })
    end
  end
end

-- Whether the review's tab can close: still there, not the last one, showing only the
-- reviewed buffer with nothing unsaved.
local function ok_to_close(r)
  if not (r.tab and vim.api.nvim_tabpage_is_valid(r.tab)) or #vim.api.nvim_list_tabpages() < 2 then
    return false
  end
  local wins = vim.api.nvim_tabpage_list_wins(r.tab)
  return #wins == 1 and vim.api.nvim_win_get_buf(wins[1]) == r.buf and not vim.bo[r.buf].modified
end

--- Ends the review: writes the buffer when it changed and records the outcome with the daemon.
--- The hunks left undecided stay in the output.
function M.finish(cb)
  local r = M.active
  if not r then
    return cb and cb(false)
  end
  M.active = nil
  local rejected = next(r.rejected) ~= nil
  local undecided = vim.api.nvim_buf_is_valid(r.buf) and #open_hunks(r) or 0
  if rejected and undecided > 0 then
    -- the output keeps them (the daemon cannot rewrite it): remembered by the plugin
    local ok, err = rejections.record(r.chat_id, r.path, table.concat(r.output, "\n"), vim.tbl_keys(r.rejected))
    if not ok then
      notify.error("Cannot remember the rejected hunks: " .. tostring(err))
    end
  else
    rejections.forget(r.chat_id, r.path)
  end
  if r.win and vim.api.nvim_win_is_valid(r.win) then
    vim.wo[r.win].winbar = ""
    vim.wo[r.win].signcolumn = vim.go.signcolumn
  end
  if vim.api.nvim_buf_is_valid(r.buf) then
    vim.api.nvim_buf_clear_namespace(r.buf, ns, 0, -1)
    unmap(r)
    if vim.bo[r.buf].modified then
      local ok, err = pcall(vim.api.nvim_buf_call, r.buf, function()
        vim.cmd("silent keepalt write ++p") -- ++p: a new file's directories too
      end)
      if not ok then
        notify.error("Cannot write " .. r.path .. ": " .. tostring(err))
        return cb and cb(false)
      end
    end
  end
  -- the review's tab is done with once the file is written (a tab left per review piled up)
  if ok_to_close(r) then
    vim.cmd(vim.api.nvim_tabpage_get_number(r.tab) .. "tabclose")
  end
  local function ended(ok)
    require("bb7.actions").load_chat()
    if cb then
      cb(ok)
    end
  end
  session.request("diff_local_done", { path = r.path }, function(result)
    if result.type == "error" then
      notify.daemon_error("record the review of " .. r.path, result.message)
      return ended(false)
    end
    if rejected and undecided == 0 then
      -- every hunk was decided: what the output still holds beyond the file is what was
      -- rejected, and an apply would write it; the output is done
      return session.request("output_delete", { path = r.path }, function(deleted)
        if deleted.type == "error" then
          notify.daemon_error("drop the rejected hunks of " .. r.path, deleted.message)
          return ended(false)
        end
        notify.info(string.format(REVIEWED, r.path))
        ended(true)
      end)
    end
    if OUTCOME[result.outcome] then
      notify.info(string.format(OUTCOME[result.outcome], r.path))
    end
    if rejected then
      notify.warn(string.format(KEPT_REJECTED, r.path))
    end
    ended(true)
  end)
end

--- Starts the review of the output of context path `path`.
function M.start(path, cb)
  if M.active then
    local key = config.key("review", "finish")
    notify.warn("A review is running (of " .. M.active.path .. "): finish it first ("
      .. (key and (key .. " in its buffer, or ") or "") .. ":q its window)")
    return cb and cb(false)
  end
  session.request("get_diff_paths", { path = path }, function(reply)
    if reply.type ~= "diff_paths" then
      if reply.message == "File not found" then
        notify.warn("No output to apply")
      else
        notify.daemon_error("review " .. path, reply.message)
      end
      return cb and cb(false)
    end
    -- exact names (see bb7.status): `a.c` must not find `a.cpp`
    local loaded = require("bb7.status").loaded_buffers()[vim.fn.resolve(vim.fn.fnamemodify(reply.local_path, ":p"))]
    if loaded and vim.bo[loaded].modified then
      notify.warn("Save or undo the changes to " .. path .. " first")
      return cb and cb(false)
    end
    -- the model's text, read as data; the local file opened by name as data, modelines off
    local text, why = safepath.read(reply.output_path)
    if text == nil and why ~= "missing" then
      notify.error("Cannot read the output of " .. safepath.inert(path) .. ": " .. why)
      return cb and cb(false)
    end
    local output = vim.split(text or "", "\n", { plain = true })
    if output[#output] == "" then
      table.remove(output)
    end
    -- relative to the working directory when inside it, as a file you open shows in the tab line
    local from_pane = require("bb7.ui.buffers").pane_of() ~= nil
    local buf, refused = safepath.open_in_tab(vim.fn.fnamemodify(reply.local_path, ":."))
    if not buf then
      notify.error("Cannot open " .. safepath.inert(path) .. ": " .. refused)
      return cb and cb(false)
    end
    local win = vim.api.nvim_get_current_win()
    local chat_id = require("bb7.state").data.active_id
    local r = {
      buf = buf, path = path, output = output, hunks = {}, win = win, tab = vim.api.nvim_get_current_tabpage(), chat_id = chat_id,
      -- the hunks rejected in an earlier review of this output stay rejected
      rejected = rejections.get(chat_id, path, table.concat(output, "\n")) or {},
    }
    dress(win, from_pane)
    M.active = r
    keymaps.apply(buf, config.options.keymaps.review, {
      accept = M.accept,
      reject = M.reject,
      next = function()
        M.jump(1)
      end,
      prev = function()
        M.jump(-1)
      end,
      finish = function()
        M.finish()
      end,
    })
    vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, { buffer = buf, callback = function()
      -- edits of your own move the hunks: show them where they are now
      if M.active == r then
        draw(r)
      else
        return true -- the review ended: drop this autocmd
      end
    end })
    vim.api.nvim_create_autocmd("BufWipeout", { buffer = buf, once = true, callback = function()
      if M.active == r then
        M.active = nil
      end
    end })
    -- `:q` in the review's window is a way out too: the review finishes as `finish` does (it
    -- stayed running with no window, and the next review was refused)
    vim.api.nvim_create_autocmd("WinClosed", { pattern = tostring(win), once = true, callback = function()
      vim.schedule(function()
        if M.active == r then
          r.win, r.tab = nil, nil
          M.finish()
        end
      end)
    end })
    draw(r)
    if #r.hunks == 0 then
      notify.info("The output of " .. path .. " is what the file holds")
      M.finish(cb)
      return
    end
    goto_hunk(r.hunks[1])
    if cb then
      cb(true)
    end
  end)
end

return M
