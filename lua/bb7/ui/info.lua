-- The info pane, under the files pane: balance and spend, the project, the instruction files
-- and the context estimate (`~X / limit (pct%)`, re-estimated while the user types, with a
-- warning near and over the limit).
local buffers = require("bb7.ui.buffers")
local format = require("bb7.format")
local usage = require("bb7.usage")

local M = {}

local ns = vim.api.nvim_create_namespace("bb7-info")
M.NEAR = 0.8 -- share of the context window from which the estimate warns
M.DEBOUNCE_MS = 400

function M.buf()
  return buffers.get("info")
end

local function home_relative(path)
  local home = vim.env.HOME
  if home and home ~= "" and path:sub(1, #home + 1) == home .. "/" then
    return "~" .. path:sub(#home + 1)
  end
  return path
end

--- `Context ~X / limit (pct%)`, and a warning line with its highlight group near (NEAR) and
--- over the limit (nil below).
function M.context_text(total, limit)
  if not total then
    return "Context -"
  end
  if not limit or limit <= 0 then
    return "Context ~" .. format.tokens(total)
  end
  local share = total / limit
  local text = string.format("Context ~%s / %s (%d%%)", format.tokens(total), format.tokens(limit), math.floor(share * 100 + 0.5))
  if share > 1 then
    return text, "⚠ over the model's context limit", "DiagnosticError"
  elseif share >= M.NEAR then
    return text, "⚠ near the model's context limit", "DiagnosticWarn"
  end
  return text
end

--- The lines and `{row, group}` highlights for `data` (bb7.state's data), the spend
--- (`{today, session}`) and the model's context length. Short lines: the pane is as narrow as
--- the sidebar. Pure.
function M.lines(data, spend, limit)
  local lines, hls = {}, {}
  table.insert(lines, "Balance " .. (format.balance(data.balance) or "-"))
  table.insert(lines, string.format("Today %s · session %s", format.cost(spend.today), format.cost(spend.session)))
  if data.global_only then
    table.insert(lines, "Global chats only (no .bb7/ here)")
  else
    table.insert(lines, (data.scope == "global" and "[global] " or "") .. home_relative(data.root or ""))
  end
  local c = data.customization
  if not c then
    table.insert(lines, "Instructions -")
  elseif c.project_instructions_error and c.project_instructions_error ~= "" then
    table.insert(hls, { #lines, "DiagnosticError" })
    table.insert(lines, "Instructions: project error: " .. c.project_instructions_error)
  else
    table.insert(lines, string.format("Instructions global %s project %s", c.global_instructions and "✓" or "-", c.project_instructions and "✓" or "-"))
  end
  local total = data.estimate and tonumber(data.estimate.total) or nil
  local text, warning, group = M.context_text(total, limit)
  table.insert(lines, text)
  if warning then
    table.insert(hls, { #lines - 1, group })
    table.insert(hls, { #lines, group })
    table.insert(lines, warning)
  end
  return lines, hls
end

--- Redraws the pane from the current state.
function M.render()
  local state = require("bb7.state")
  local data = state.data
  local root = data.global_only and "" or data.root
  local lines, hls = M.lines(data, usage.current(data.started, root), require("bb7.actions").context_length())
  local buf = M.buf()
  buffers.set_lines(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, hl in ipairs(hls) do
    vim.api.nvim_buf_set_extmark(buf, ns, hl[1], 0, { line_hl_group = hl[2] })
  end
end

local timer = nil

--- Re-estimates the context with `text` (the draft) once typing pauses for DEBOUNCE_MS.
function M.estimate_later(text)
  if timer then
    timer:stop()
    timer:close()
  end
  timer = (vim.uv or vim.loop).new_timer()
  timer:start(M.DEBOUNCE_MS, 0, vim.schedule_wrap(function()
    if timer then
      timer:close()
      timer = nil
    end
    if require("bb7.state").data.active_id then
      require("bb7.actions").refresh_estimate(text)
    end
  end))
end

--- Re-estimates while the user types in the input buffer `buf`.
function M.attach(buf)
  local group = vim.api.nvim_create_augroup("bb7-info", { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = group,
    buffer = buf,
    callback = function()
      M.estimate_later(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
    end,
  })
end

return M
