-- Syntax highlighting of code that is not a buffer of its own (a fenced block in a reply, a
-- file shown in the preview): parses the text with treesitter, injections included, and puts
-- the captures on the preview buffer as extmarks. Without a parser for the language the block
-- gets one plain group.
local M = {}

-- fence language (or file name) -> treesitter language, cached; false when none is installed
local cache = {}

--- The treesitter language for a fence word ("lua", "py", "sh") or a file path, or nil.
function M.lang(word, path)
  local key = (word or "") .. "\0" .. (path or "")
  if cache[key] ~= nil then
    return cache[key] or nil
  end
  local ft
  if path and path ~= "" then
    ft = vim.filetype.match({ filename = path })
  end
  if not ft and word and word ~= "" then
    ft = vim.filetype.match({ filename = "x." .. word }) or word:lower()
  end
  local lang = ft and (vim.treesitter.language.get_lang(ft) or ft)
  local ok = false
  if lang then
    -- `add` errors (0.10) or returns nil (0.12) without a parser; `inspect` tells either way
    pcall(vim.treesitter.language.add, lang)
    ok = pcall(vim.treesitter.language.inspect, lang)
  end
  cache[key] = ok and lang or false
  return ok and lang or nil
end

--- Highlights `lines` that sit in `buf` from `row` (0-based) in language `lang` (a treesitter
--- language or nil). Returns true when treesitter did it, false for the plain fallback
--- (`fallback` group over each line).
function M.apply(buf, ns, row, lines, lang, fallback)
  local ok = lang ~= nil
    and pcall(function()
      local text = table.concat(lines, "\n")
      local parser = vim.treesitter.get_string_parser(text, lang)
      parser:parse(true)
      parser:for_each_tree(function(tree, ltree)
        local tlang = ltree:lang()
        local query = vim.treesitter.query.get(tlang, "highlights")
        if not query then
          return
        end
        for id, node in query:iter_captures(tree:root(), text, 0, -1) do
          local name = query.captures[id]
          if name ~= "spell" and name ~= "nospell" and not name:match("^_") then
            local sr, sc, er, ec = node:range()
            if er > #lines - 1 then
              er, ec = #lines - 1, #lines[#lines]
            end
            vim.api.nvim_buf_set_extmark(buf, ns, row + sr, sc, {
              end_row = row + er,
              end_col = ec,
              hl_group = "@" .. name .. "." .. tlang,
              priority = 110,
            })
          end
        end
      end)
    end)
  if ok then
    return true
  end
  if fallback then
    for i, line in ipairs(lines) do
      vim.api.nvim_buf_set_extmark(buf, ns, row + i - 1, 0, { end_col = #line, hl_group = fallback, priority = 110 })
    end
  end
  return false
end

return M
