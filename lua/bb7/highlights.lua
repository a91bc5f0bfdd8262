-- Links the plugin's highlight groups with `default = true`, so colorschemes and users win.
-- Also answers to the first bb7 plugin's group names: a user who styled `BB7ThinkingText` there
-- keeps that style here (our group follows theirs); otherwise their name links to ours.
local M = {}

-- Groups of the preview's views (markdown, code, thinking, warnings) and of the hint line and
-- status component; `highlights` in the options can change each like the others.
M.extra = {
  BB7ThinkingHeader = "Special",
  BB7Bold = { bold = true },
  BB7Italic = { italic = true },
  BB7InlineCode = "String",
  BB7Heading = "Title",
  BB7ListBullet = "Special",
  BB7Quote = "Comment",
  BB7Code = "Identifier",
  BB7CodeFence = "NonText",
  BB7Warning = "DiagnosticWarn",
  BB7HintKey = "Special",
  BB7HintText = "Comment",
  BB7StatusStreaming = "DiagnosticWarn",
  BB7SpinnerWaiting = "Comment",
  BB7SpinnerStreaming = "DiagnosticInfo",
  BB7StatusUnread = "DiagnosticInfo",
}

-- our group -> the first plugin's names for the same thing (names both share need nothing)
M.aliases = {
  BB7User = { "BB7UserMessageBar" },
  BB7Assistant = { "BB7AssistantMessageBar" },
  BB7Thinking = { "BB7ThinkingText" },
  BB7ThinkingHeader = { "BB7ThinkingBar" },
  BB7Error = { "BB7ErrorText", "BB7ErrorBar" },
  BB7Event = { "BB7UserActionText", "BB7AssistantActionText", "BB7SystemMessageText" },
  BB7Code = { "BB7AssistantCodeText", "BB7UserCodeText" },
  BB7CodeFence = { "BB7AssistantCodeLang", "BB7UserCodeLang" },
  BB7DiffDelete = { "BB7DiffRemove" },
  BB7DiffHeader = { "BB7DiffHunk" },
  BB7StatusConflict = { "BB7StatusConflictA" },
}

local function spec(value)
  if type(value) == "table" then
    return vim.tbl_extend("force", value, { default = true })
  end
  return { link = value, default = true }
end

-- Whether `name` still has the definition this module gave it (or none): then a user's style
-- of an alias may take it over.
local function ours_untouched(name, value)
  local hl = vim.api.nvim_get_hl(0, { name = name, create = false })
  if next(hl) == nil then
    return true
  end
  if type(value) == "table" then
    for key, v in pairs(value) do
      if hl[key] ~= v then
        return false
      end
    end
    return hl.link == nil
  end
  return hl.link == value
end

function M.setup(groups)
  groups = vim.tbl_extend("keep", groups or {}, M.extra)
  for name, value in pairs(groups) do
    if value then
      vim.api.nvim_set_hl(0, name, spec(value))
    end
  end
  for name, classics in pairs(M.aliases) do
    local taken = false
    for _, classic in ipairs(classics) do
      local hl = vim.api.nvim_get_hl(0, { name = classic, create = false })
      local styled = next(hl) ~= nil and hl.link ~= name
      if styled and not taken and groups[name] and ours_untouched(name, groups[name]) then
        vim.api.nvim_set_hl(0, name, { link = classic })
        taken = true
      elseif not styled then
        vim.api.nvim_set_hl(0, classic, { link = name, default = true })
      end
    end
  end
end

return M
