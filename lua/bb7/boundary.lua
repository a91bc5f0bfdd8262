-- The prediction boundary of the WYSIWYG send workflow, as the preview shows it: walking from
-- the newest pair to the oldest, pairs are included while their tokens plus the user request
-- allowance fit the model's limit. Older pairs are out of context (dimmed).
local M = {}

--- Estimated tokens of `text` at `chars_per_token`.
function M.estimate(text, chars_per_token)
  return math.ceil(#(text or "") / (chars_per_token or 3.5))
end

--- `pair_tokens` lists each pair's tokens, oldest first. Returns how many of the newest pairs
--- fit `limit` with `allowance` reserved. A nil limit includes everything.
function M.predict(pair_tokens, limit, allowance)
  local n = #pair_tokens
  if not limit then
    return n
  end
  local used = 0
  local included = 0
  for i = n, 1, -1 do
    if used + pair_tokens[i] + (allowance or 0) > limit then
      break
    end
    used = used + pair_tokens[i]
    included = included + 1
  end
  return included
end

return M
