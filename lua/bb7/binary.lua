-- Finds the daemon: `opts.cmd`, else `bb7` on PATH, else the plugin's own
-- `target/release/bb7` (what the lazy.nvim `build` step produces).
local M = {}

--- The plugin's root directory (the one holding `lua/`).
function M.plugin_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

--- Returns the command as a list, or nil and the list of places looked at.
function M.find(cmd)
  if type(cmd) == "string" and cmd ~= "" then
    return { cmd }
  end
  if type(cmd) == "table" and #cmd > 0 then
    return vim.deepcopy(cmd)
  end
  if vim.fn.executable("bb7") == 1 then
    return { vim.fn.exepath("bb7") }
  end
  local own = M.plugin_root() .. "/target/release/bb7"
  if vim.fn.executable(own) == 1 then
    return { own }
  end
  return nil, { "opts.cmd", "bb7 on PATH", own }
end

--- The message shown when no daemon can be found.
function M.not_found_message(looked)
  return "BB-7: Cannot find the bb7 daemon (looked at "
    .. table.concat(looked, ", ")
    .. "). Build it with `cargo build --release -p bb7-daemon` or set opts.cmd"
end

return M
