-- Picking a chat: through telescope or snacks.nvim when installed (with a live preview of the
-- chat under the cursor, read from its `chat.json`), else vim.ui.select. `picker` in the
-- options forces one: "telescope", "snacks" or "select".
local config = require("bb7.config")
local render = require("bb7.render")
local state = require("bb7.state")

local M = {}

--- The label of a chat in a list: pin mark, name, excerpt of a content match.
function M.label(chat)
  local text = (chat.pinned and "★ " or "") .. (chat.name or chat.id) .. (chat.locked and require("bb7.ui.chats").locked_mark() or "")
  if chat.excerpt and chat.excerpt ~= "" then
    text = text .. "  " .. chat.excerpt:gsub("\n", " ")
  end
  return text
end

-- The text of `chat`'s file: the project's `.bb7/chats/<id>/chat.json` (a repository may ship
-- it as a link to `/dev/zero`: read only as a regular file reached without links, bounded), or
-- the global one.
local function chat_text(chat)
  local safepath = require("bb7.safepath")
  if state.data.root and not chat.global then
    local abs = safepath.context_abs(state.data.root, ".bb7/chats/" .. chat.id .. "/chat.json")
    local text = abs and safepath.read(abs)
    if text then
      return text
    end
  end
  return (safepath.read(vim.fn.expand("~/.bb7/chats") .. "/" .. chat.id .. "/chat.json"))
end

--- The preview of `chat`: its messages rendered as in the preview pane, or what is known of it
--- when its file cannot be read.
function M.preview_lines(chat)
  local text = chat_text(chat)
  if text then
    local ok, decoded = pcall(function()
      return vim.json.decode(text, { luanil = { object = true, array = true } })
    end)
    if ok and type(decoded) == "table" then
      local lines = render.chat(decoded, { chars_per_token = config.options.chars_per_token }).lines
      if #lines > 0 then
        return lines
      end
      return { "(no messages yet)" }
    end
  end
  local lines = { chat.name or chat.id }
  if chat.excerpt and chat.excerpt ~= "" then
    table.insert(lines, "")
    vim.list_extend(lines, vim.split(chat.excerpt, "\n", { plain = true }))
  end
  return lines
end

--- Which picker is used: the `picker` option, else telescope, snacks, select in that order.
function M.backend()
  local forced = config.options.picker
  if forced then
    return forced
  end
  if pcall(require, "telescope.pickers") then
    return "telescope"
  end
  if pcall(require, "snacks.picker") then
    return "snacks"
  end
  return "select"
end

local function telescope(chats, prompt, on_choice)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local previewers = require("telescope.previewers")
  local sorters = require("telescope.config").values
  local tactions = require("telescope.actions")
  local action_state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = prompt,
      finder = finders.new_table({
        results = chats,
        entry_maker = function(chat)
          local label = M.label(chat)
          return { value = chat, display = label, ordinal = label }
        end,
      }),
      sorter = sorters.generic_sorter({}),
      previewer = previewers.new_buffer_previewer({
        title = "Chat",
        define_preview = function(self, entry)
          vim.api.nvim_buf_set_lines(self.state.bufnr, 0, -1, false, M.preview_lines(entry.value))
          vim.bo[self.state.bufnr].filetype = "markdown"
        end,
      }),
      attach_mappings = function(prompt_bufnr)
        tactions.select_default:replace(function()
          local entry = action_state.get_selected_entry()
          tactions.close(prompt_bufnr)
          on_choice(entry and entry.value or nil)
        end)
        return true
      end,
    })
    :find()
end

local function snacks(chats, prompt, on_choice)
  local items = {}
  for i, chat in ipairs(chats) do
    table.insert(items, { idx = i, text = M.label(chat), chat = chat })
  end
  require("snacks.picker").pick({
    title = prompt,
    items = items,
    format = "text",
    preview = function(ctx)
      ctx.preview:set_lines(M.preview_lines(ctx.item.chat))
      ctx.preview:highlight({ ft = "markdown" })
    end,
    confirm = function(picker, item)
      picker:close()
      on_choice(item and item.chat or nil)
    end,
  })
end

--- Lets the user pick one of `chats`; calls `on_choice(chat)` (nil when cancelled).
function M.chats(chats, prompt, on_choice)
  local backend = M.backend()
  if backend == "telescope" then
    return telescope(chats, prompt, on_choice)
  elseif backend == "snacks" then
    return snacks(chats, prompt, on_choice)
  end
  vim.ui.select(chats, { prompt = prompt, format_item = M.label }, on_choice)
end

return M
