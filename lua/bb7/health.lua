-- :checkhealth bb7 — Neovim version, the daemon and its version, config file and API key
-- (never printing the key), and whether the project is initialized.
local M = {}

local health = vim.health

--- The daemon's config file path (honours XDG_CONFIG_HOME like the daemon does).
function M.config_path()
  local base = vim.env.XDG_CONFIG_HOME
  if not base or base == "" then
    base = (vim.env.HOME or "~") .. "/.config"
  end
  return base .. "/bb7/config.json"
end

--- "present" / "missing" / "unreadable" for the config's `api_key`, or "provider NAME" for a
--- provider other than OpenRouter.
function M.api_key_state(path)
  local file = io.open(path, "rb")
  if not file then
    return "no config"
  end
  local text = file:read("*a")
  file:close()
  local ok, data = pcall(vim.json.decode, text)
  if not ok or type(data) ~= "table" then
    return "unreadable"
  end
  if type(data.api_key) == "string" and data.api_key ~= "" then
    return "present"
  end
  -- Another provider may be a local server without a key, or read it from its variable:
  -- the daemon knows which, and says so when a send needs one.
  if type(data.provider) == "string" and data.provider ~= "" and data.provider ~= "openrouter" then
    return "provider " .. data.provider
  end
  return "missing"
end

function M.check()
  health.start("bb7")
  local v = vim.version()
  local version = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old: bb7 needs 0.10 or newer")
  end

  local config = require("bb7.config")
  local cmd, looked = require("bb7.binary").find(config.options.cmd)
  if not cmd then
    health.error("bb7 daemon not found (looked at " .. table.concat(looked, ", ") .. ")", {
      "Build it: cargo build --release -p bb7-daemon",
      "Or set `cmd` in require('bb7').setup()",
    })
  else
    local args = vim.list_extend(vim.deepcopy(cmd), { "--version" })
    local ok, result = pcall(function()
      return vim.system(args, { text = true }):wait(5000)
    end)
    if ok and result.code == 0 then
      health.ok("daemon " .. table.concat(cmd, " ") .. ": " .. vim.trim(result.stdout or ""))
    else
      health.error("daemon " .. table.concat(cmd, " ") .. " does not run: " .. vim.trim(ok and (result.stderr or "") or tostring(result)))
    end
  end

  local path = M.config_path()
  local key = M.api_key_state(path)
  if key == "no config" then
    health.warn("config file not found: " .. path, { "Create it with at least {\"api_key\": \"...\"}" })
  else
    health.ok("config file: " .. path)
    if key == "present" then
      health.ok("API key is set")
    elseif key:find("^provider ") then
      health.ok(key .. ": its key, if it needs one, from the config or its environment variable")
    elseif key == "unreadable" then
      health.error("config file is not valid JSON: " .. path)
    else
      health.error("API key not set in config", { "Add \"api_key\" to " .. path })
    end
  end

  local root = require("bb7.session").root()
  if vim.fn.isdirectory(root .. "/.bb7") == 1 then
    health.ok("project initialized: " .. root .. "/.bb7")
  else
    health.info("no project here (" .. root .. " has no .bb7/): bb7 works with your global chats; :BB7Init makes it a project")
  end
end

return M
