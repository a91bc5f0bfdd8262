-- bb7: a Neovim front end for the bb7 daemon (chats with an LLM over explicit file context).
-- `require("bb7").setup(opts)` merges options (see `:help bb7-config`); the commands work
-- without calling it, with the defaults.
local M = {}

-- The plugin's version (`:BB7Version`), the workspace's version.
M.version = "0.1.0"

local did_setup = false

function M.setup(opts)
  local config = require("bb7.config")
  config.setup(opts)
  require("bb7.highlights").setup(config.options.highlights)
  require("bb7.indicator").attach()
  did_setup = true
  local group = vim.api.nvim_create_augroup("bb7", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      if package.loaded["bb7.actions"] then
        pcall(require("bb7.actions").save_before_exit)
      end
      require("bb7.session").stop()
    end,
  })
  -- `:cd` chooses another project (the next command starts over there); `:lcd`, `:tcd` and
  -- 'autochdir' ("window", "tabpage", "auto") do not.
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    pattern = "global",
    callback = function()
      if not vim.v.event.changed_window then
        require("bb7.session").chosen = nil
      end
    end,
  })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = group,
    callback = function()
      require("bb7.highlights").setup(config.options.highlights)
    end,
  })
  return config.options
end

--- Statusline component: a symbol while a reply streams or waits unread, else "".
function M.status()
  return require("bb7.indicator").text()
end

--- The highlight group for `status()` (nil when it is empty).
function M.status_hl()
  return require("bb7.indicator").highlight()
end

--- Runs setup with the defaults unless the user already called it.
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

return M
