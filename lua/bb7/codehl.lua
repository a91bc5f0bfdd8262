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

--- Parses `lines` as `lang` (a treesitter language), injections included. Returns a handle
--- for M.highlight, or nil when there is no parser (or the parse fails).
function M.parse(lines, lang)
  if not lang then
    return nil
  end
  local ok, handle = pcall(function()
    local text = table.concat(lines, "\n")
    local parser = vim.treesitter.get_string_parser(text, lang)
    parser:parse(true)
    local trees = {}
    parser:for_each_tree(function(tree, ltree)
      local query = vim.treesitter.query.get(ltree:lang(), "highlights")
      if query then
        table.insert(trees, { root = tree:root(), lang = ltree:lang(), query = query })
      end
    end)
    return { text = text, trees = trees, parser = parser, count = #lines, last_len = #lines[#lines] }
  end)
  return ok and handle or nil
end

--- Puts the captures of `handle` whose start lies in rows `from`..`to` (relative to the
--- block, inclusive) on `buf`, the block starting at buffer row `row`.
function M.highlight(buf, ns, row, handle, from, to)
  for _, t in ipairs(handle.trees) do
    for id, node in t.query:iter_captures(t.root, handle.text, from, to + 1) do
      local name = t.query.captures[id]
      local sr, sc, er, ec = node:range()
      if sr >= from and sr <= to and name ~= "spell" and name ~= "nospell" and not name:match("^_") then
        if er > handle.count - 1 then
          er, ec = handle.count - 1, handle.last_len
        end
        pcall(vim.api.nvim_buf_set_extmark, buf, ns, row + sr, sc, {
          end_row = row + er,
          end_col = ec,
          hl_group = "@" .. name .. "." .. t.lang,
          priority = 110,
        })
      end
    end
  end
end

--- Highlights all of `lines` (in `buf` from `row`) as `lang`; without a parser each line gets
--- `fallback` (when given). Returns true when treesitter did it.
function M.apply(buf, ns, row, lines, lang, fallback)
  local handle = M.parse(lines, lang)
  if handle then
    M.highlight(buf, ns, row, handle, 0, #lines - 1)
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
