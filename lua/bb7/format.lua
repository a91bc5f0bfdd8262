-- Pure text formatting: the context counter, token counts, usage and balance.
local M = {}

--- The context counter of the WYSIWYG workflow: `X / Y` (pairs sent / pairs visible), or
--- `[X-T]/Y` after a send that trimmed T pairs.
function M.counter(included, total, trimmed)
  if trimmed and trimmed > 0 then
    return string.format("[%d-%d]/%d", included, trimmed, total)
  end
  return string.format("%d / %d", included, total)
end

--- 950 -> "950", 4200 -> "4.2k", 1250000 -> "1.25M".
function M.tokens(n)
  n = tonumber(n) or 0
  if n < 1000 then
    return tostring(math.floor(n))
  elseif n < 1000000 then
    local s = string.format("%.1fk", n / 1000)
    return (s:gsub("%.0k$", "k"))
  end
  local s = string.format("%.2fM", n / 1000000)
  return (s:gsub("0M$", "M"):gsub("%.0M$", "M"))
end

--- Dollars: two decimals, four below ten cents so the cost of one request stays readable.
function M.cost(value)
  value = tonumber(value) or 0
  if value > 0 and value < 0.1 then
    return string.format("$%.4f", value)
  end
  return string.format("$%.2f", value)
end

--- The `usage` object of `done`: "4.2k in (3.5k cached) · 890 out · $0.0120".
function M.usage(usage)
  if type(usage) ~= "table" then
    return ""
  end
  local parts = {}
  local input = M.tokens(usage.prompt_tokens or 0) .. " in"
  if (tonumber(usage.cached_tokens) or 0) > 0 then
    input = input .. " (" .. M.tokens(usage.cached_tokens) .. " cached)"
  end
  table.insert(parts, input)
  table.insert(parts, M.tokens(usage.completion_tokens or 0) .. " out")
  if usage.cost ~= nil then
    table.insert(parts, M.cost(usage.cost))
  end
  return table.concat(parts, " · ")
end

--- Seconds: 0.8 -> "0.8s", 12.3 -> "12s", 75 -> "1m 15s".
function M.duration(seconds)
  seconds = tonumber(seconds) or 0
  if seconds < 10 then
    return string.format("%.1fs", seconds)
  elseif seconds < 60 then
    return string.format("%ds", math.floor(seconds + 0.5))
  end
  local whole = math.floor(seconds + 0.5)
  return string.format("%dm %02ds", math.floor(whole / 60), whole % 60)
end

--- The usage line under an assistant message (its stored `usage`, `duration` included):
--- "3.2s · 4.2k in (3.5k cached) · 890 out · $0.0120". Empty without usage.
function M.usage_line(usage)
  if type(usage) ~= "table" or next(usage) == nil then
    return ""
  end
  local text = M.usage(usage)
  if tonumber(usage.duration) then
    text = M.duration(usage.duration) .. " · " .. text
  end
  return text
end

--- The `balance` reply: credits left.
function M.balance(balance)
  if type(balance) ~= "table" or balance.total_credits == nil then
    return nil
  end
  local left = (tonumber(balance.total_credits) or 0) - (tonumber(balance.total_usage) or 0)
  return M.cost(left) .. " left"
end

return M
