-- One action per key in every pane, in the default and the classic preset: the `global` keys
-- are mapped in each pane's buffer too, so a pane key equal to a global one (or a key that is
-- the start of another, which `nowait` makes unreachable) would silently hide an action.
-- Also: every action of the preset is mapped in the open tab, `?` lists the actions of both
-- branches' features, and the classic keys of global chats, effort, reject and g3 work.
local t = require("helpers.assert")
local env = require("helpers.env")

local function key(lhs)
  return vim.api.nvim_replace_termcodes(lhs, true, false, true)
end

local function modes(mode)
  return type(mode) == "table" and mode or { mode }
end

-- Every (mode, key) of `pane` with the actions bound to it, global keys first.
local function bindings(keymaps, pane)
  local out = {}
  local lists = { keymaps[pane] }
  if pane ~= "split" and pane ~= "review" then
    table.insert(lists, 1, keymaps.global)
  end
  for _, list in ipairs(lists) do
    for _, entry in ipairs(list or {}) do
      for _, mode in ipairs(modes(entry[1])) do
        out[mode] = out[mode] or {}
        local k = key(entry[2])
        out[mode][k] = out[mode][k] or {}
        out[mode][k][entry[3]] = entry[2]
      end
    end
  end
  return out
end

local function collisions(keymaps)
  local found = {}
  for pane in pairs(keymaps) do
    if pane ~= "global" then
      for mode, keys in pairs(bindings(keymaps, pane)) do
        for k, actions in pairs(keys) do
          local names = vim.tbl_keys(actions)
          if #names > 1 then
            table.sort(names)
            table.insert(found, string.format("%s %s %s: %s", pane, mode, vim.fn.keytrans(k), table.concat(names, ", ")))
          end
          for other in pairs(keys) do
            if other ~= k and other:sub(1, #k) == k then
              table.insert(found, string.format("%s %s %s is the start of %s", pane, mode, vim.fn.keytrans(k), vim.fn.keytrans(other)))
            end
          end
        end
      end
    end
  end
  table.sort(found)
  return found
end

local PRESETS = { default = {}, classic = { keymaps = "classic" } }

describe("keys", function()
  for name, opts in pairs(PRESETS) do
    it("no pane has two actions on one key (" .. name .. ")", function()
      local keymaps = require("bb7.config").setup(opts).keymaps
      t.eq({}, collisions(keymaps))
      t.truthy(keymaps.info, "the info pane has keys")
    end)

    it("maps every action of the " .. name .. " preset in the open tab", function()
      local fake = env.reset({ initialized = true, setup = opts })
      env.cmd("BB7Init")
      fake:new_chat("c")
      fake.active = "0000000001"
      require("bb7.state").data.ready = false
      env.cmd("BB7")
      local keymaps = require("bb7.config").options.keymaps
      local buffers = require("bb7.ui.buffers")
      local missing = {}
      for _, pane in ipairs({ "chats", "files", "info", "preview", "input" }) do
        local mapped = {}
        for _, mode in ipairs({ "n", "i" }) do
          for _, m in ipairs(vim.api.nvim_buf_get_keymap(buffers.get(pane), mode)) do
            mapped[mode .. key(m.lhs)] = m.desc
          end
        end
        for _, list in ipairs({ keymaps.global, keymaps[pane] }) do
          for _, entry in ipairs(list) do
            for _, mode in ipairs(modes(entry[1])) do
              if mapped[mode .. key(entry[2])] ~= "bb7: " .. entry[4] then
                table.insert(missing, pane .. " " .. mode .. " " .. entry[2] .. " " .. entry[3])
              end
            end
          end
        end
      end
      t.eq({}, missing)
    end)
  end

  it("finds a collision and a key hidden by a longer one", function()
    local keymaps = require("bb7.config").setup({ keymaps = { files = { apply = "d" }, preview = { boundary = "g" } } }).keymaps
    t.eq({ "files n d: apply, remove", "preview n g is the start of gc", "preview n g is the start of gd", "preview n g is the start of gf" }, collisions(keymaps))
  end)

  it("? lists the keys of global chats, reject, effort, re-ask, delete and the boundary", function()
    local help = require("bb7.ui.help")
    local expected = {
      default = { chats = { "s", "m" }, files = { "x", "U" }, input = { "<LocalLeader>e" }, preview = { "<LocalLeader>a", "d", "gb" }, info = { "r" } },
      classic = { chats = { "<C-s>", "m" }, files = { "x" }, input = { "R" }, preview = { "e", "d", "gb" }, info = { "r" } },
    }
    local descs = {
      chats = { "Switch between project and global chats", "Move the chat under the cursor" },
      input = { "Cycle the reasoning effort" },
      preview = { "Re-ask the failed message", "Delete the failed message", "prediction boundary" },
    }
    for name, opts in pairs(PRESETS) do
      require("bb7.config").setup(opts)
      for pane, keys in pairs(expected[name]) do
        local text = table.concat(help.lines(pane), "\n")
        for _, lhs in ipairs(keys) do
          t.truthy(text:find("\n  " .. vim.pesc(lhs) .. " ", 1), name .. " " .. pane .. " help lists " .. lhs)
        end
        for _, desc in ipairs(descs[pane] or {}) do
          t.truthy(text:find(desc, 1, true), name .. " " .. pane .. " help says " .. desc)
        end
      end
    end
  end)
end)

describe("classic keys of the plugin's actions", function()
  local function press(keys)
    vim.api.nvim_feedkeys(key(keys), "x", false)
    env.settle()
  end

  local function setup()
    local fake = env.reset({ initialized = true, setup = { keymaps = "classic" } })
    env.cmd("BB7Init")
    fake:new_chat("c")
    fake.active = "0000000001"
    require("bb7.state").data.ready = false
    env.cmd("BB7")
    env.notes = {}
    return fake
  end

  it("g3 goes to the info pane and <Tab> goes on from it", function()
    setup()
    local ui = require("bb7.ui")
    t.truthy(ui.wins.info and vim.api.nvim_win_is_valid(ui.wins.info))
    ui.focus("chats")
    press("g3")
    t.eq(ui.wins.info, vim.api.nvim_get_current_win())
    press("<Tab>")
    t.eq(ui.wins.preview, vim.api.nvim_get_current_win())
    press("g3")
    press("g1")
    t.eq(ui.wins.chats, vim.api.nvim_get_current_win(), "the pane jumps work from the info pane")
  end)

  it("<C-s> switches to global chats, R cycles the effort", function()
    setup()
    local ui = require("bb7.ui")
    local state = require("bb7.state")
    ui.focus("chats")
    press("<C-s>")
    t.eq("global", state.data.scope)
    press("<C-s>")
    t.eq("project", state.data.scope)
    ui.focus("input")
    local before = state.data.reasoning_effort or "none"
    press("R")
    t.eq(require("bb7.actions").next_effort(before), state.data.reasoning_effort, "R cycled the effort")
  end)

  it("x rejects an output after asking, and removes a context file without one", function()
    local fake = setup()
    local chat = fake:chat()
    table.insert(chat.context, { path = "math.cs", content = "old\n", readonly = false })
    table.insert(chat.context, { path = "utils.cs", content = "u\n", readonly = false })
    chat.outputs["math.cs"] = "new\n"
    local function in_context(path)
      for _, file in ipairs(fake:chat().context) do
        if file.path == path then
          return true
        end
      end
      return false
    end
    require("bb7.actions").load_chat()
    env.settle()
    local ui = require("bb7.ui")
    local files = require("bb7.ui.files")
    local function cursor_on(path)
      for row, file in pairs(files.rows) do
        if file.path == path then
          vim.api.nvim_win_set_cursor(ui.wins.files, { row, 0 })
          return
        end
      end
      error("no row for " .. path)
    end
    ui.focus("files")
    local asked
    vim.ui.select = function(items, opts, cb)
      asked = opts.prompt
      cb(items[1])
    end
    cursor_on("math.cs")
    press("x")
    t.matches("reject the output of math.cs", asked)
    t.eq(nil, fake:chat().outputs["math.cs"], "the output is gone")
    t.truthy(in_context("math.cs"), "the context file stays")
    asked = nil
    cursor_on("utils.cs")
    press("x")
    t.eq(nil, asked, "no question for a context file")
    t.falsy(in_context("utils.cs"), "removed from context")
  end)
end)
