-- Links the plugin's highlight groups with `default = true`, so colorschemes and users win.
local M = {}

function M.setup(groups)
  for name, link in pairs(groups or {}) do
    if link then
      vim.api.nvim_set_hl(0, name, { link = link, default = true })
    end
  end
end

return M
