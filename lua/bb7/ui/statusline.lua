-- The status line of the bb7 tab (the preview window's winbar): model, token estimate,
-- balance, and the context counter.
local format = require("bb7.format")

local M = {}

--- The text for `data` (bb7.state's data) and the last render (`included`, `total`).
function M.text(data, rendered)
  local parts = {}
  if data.chat and data.chat.name then
    table.insert(parts, data.chat.name)
  end
  local model = data.model or "no model"
  if data.reasoning_effort and data.reasoning_effort ~= "none" then
    model = model .. " · reasoning " .. data.reasoning_effort
  end
  table.insert(parts, model)
  if data.estimate and data.estimate.total then
    table.insert(parts, "~" .. format.tokens(data.estimate.total) .. " tokens")
  end
  local balance = format.balance(data.balance)
  if balance then
    table.insert(parts, balance)
  end
  if data.stream then
    local spinner = require("bb7.ui.spinner")
    local elapsed = spinner.elapsed()
    local time = elapsed and (" " .. spinner.duration(elapsed)) or ""
    -- the spinner's word: "waiting…" until the first piece arrives
    local label = data.stream.cancelled and "cancelling…" or (spinner.waiting() and "waiting…" or "streaming…")
    table.insert(parts, label .. time)
  end
  if rendered and rendered.total and rendered.total > 0 then
    table.insert(parts, format.counter(rendered.included, rendered.total, data.trimmed))
  end
  return table.concat(parts, " │ ")
end

--- Sets the winbar of `win`.
function M.show(win, text)
  if win and vim.api.nvim_win_is_valid(win) then
    -- cut at the end when too long (by default the start went: the chat's name)
    vim.wo[win].winbar = " " .. text:gsub("%%", "%%%%") .. "%<"
  end
end

return M
