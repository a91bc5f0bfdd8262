-- End to end with the classic preset (`keymaps = "classic"`): the real `bb7` and fake-llm, a
-- whole session driven by keys in the panes: new chat, add files, send, apply part of a file
-- (:BB7DiffLocal, one hunk taken), retry a diff error, fork, move the chat to global chats.
-- Runs only with BB7_BIN and FAKE_LLM set.
local t = require("helpers.assert")
local env = require("helpers.env")
local real = require("helpers.real")

if not real.available() then
  io.stdout:write("skip e2e_classic_spec.lua (set BB7_BIN and FAKE_LLM to run it)\n")
  return
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local function write_call(id, path, content)
  return { id = id, name = "write_file", arguments = { path = path, content = content } }
end

local TURNS = {
  -- 1: a rewrite of two separate lines of notes.txt
  { text = { "Capitalised." }, tool_calls = { write_call("c1", "notes.txt", "A\nb\nc\nd\nE\n") } },
  -- 2: an edit whose file id does not match: diff_error
  { text = { "Editing." }, tool_calls = { { id = "c2", name = "edit_file", arguments = { edits = { { path = "notes.txt", file_id = "00000000", old_string = "b", new_string = "B" } } } } } },
  -- 3: the retry
  { text = { "Fixed now." } },
}

local function ui()
  return require("bb7.ui")
end

local function cursor_on(pane, text)
  ui().focus(pane)
  local buf = vim.api.nvim_win_get_buf(0)
  for row, line in ipairs(lines(buf)) do
    if line:find(text, 1, true) then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
      return
    end
  end
  error("no " .. pane .. " line with " .. text .. ": " .. vim.inspect(lines(buf)))
end

local function scenario()
  real.start(TURNS, { keymaps = "classic" })
  env.write("notes.txt", { "a", "b", "c", "d", "e" })
  env.write("other.txt", { "x" })
  env.cmd("BB7")
  t.truthy(ui().is_open())

  -- new chat: `n` in the chats pane
  vim.ui.input = function(_, cb)
    cb("classic")
  end
  ui().focus("chats")
  feed("n")
  env.settle()
  local state = require("bb7.state")
  t.truthy(state.data.active_id, "a chat is active")
  t.eq({ "INFO BB-7: Created: classic" }, env.messages())
  env.notes = {}

  -- add files
  env.cmd("BB7Add notes.txt")
  env.cmd("BB7AddReadonly other.txt")
  t.eq({ "INFO BB-7: Added notes.txt", "INFO BB-7: Added other.txt" }, env.messages())

  -- send: <CR> in the input (normal mode)
  require("bb7.ui.input").set_text("Capitalise the first and last line")
  ui().focus("input")
  feed("<CR>")
  local ended = real.wait_stream_end()
  t.eq("done", ended.type, vim.inspect(ended))
  t.eq("M", require("bb7.actions.common").file_entry("notes.txt").status)

  -- apply part of the file: :BB7DiffLocal, take the first hunk only (`do` on the local side)
  env.notes = {}
  cursor_on("files", "notes.txt")
  feed("D")
  env.settle()
  local local_win
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)) == env.dir .. "/notes.txt" then
      local_win = win
    end
  end
  t.truthy(local_win, "the local side")
  vim.api.nvim_set_current_win(local_win)
  vim.api.nvim_win_set_cursor(local_win, { 1, 0 })
  vim.cmd("diffget")
  vim.cmd("tabclose")
  env.settle()
  t.eq({ "A", "b", "c", "d", "e" }, vim.fn.readfile(env.dir .. "/notes.txt"))
  t.eq({ "INFO BB-7: Applied part of notes.txt (the rest of the output stays)" }, env.messages())
  t.eq("M", require("bb7.actions.common").file_entry("notes.txt").status, "the rest stays")

  -- a diff error, retried with `r` in the preview
  ui().open()
  require("bb7.ui.input").set_text("Make b upper case")
  ui().focus("input")
  feed("<CR>")
  ended = real.wait_stream_end()
  t.eq("diff_error", ended.type, vim.inspect(ended))
  t.truthy(vim.tbl_contains(lines(require("bb7.ui.preview").buf()), "Press r here to retry."), vim.inspect(lines(require("bb7.ui.preview").buf())))
  ui().focus("preview")
  feed("r")
  ended = real.wait_stream_end()
  t.eq("done", ended.type, vim.inspect(ended))
  t.truthy(vim.tbl_contains(lines(require("bb7.ui.preview").buf()), "Fixed now."))

  -- fork from the first message: <C-f>
  local original = state.data.active_id
  env.notes = {}
  cursor_on("preview", "Capitalise the first and last line")
  feed("<C-f>")
  env.settle()
  t.eq("INFO BB-7: Forked chat", env.messages()[1])
  t.neq(original, state.data.active_id)
  t.eq("Capitalise the first and last line", require("bb7.ui.input").text())

  -- move the fork to global chats: `m` in the chats pane
  local fork = state.data.active_id
  require("bb7.actions").refresh_chats()
  env.settle()
  ui().focus("chats")
  local chats = require("bb7.ui.chats")
  for row, chat in pairs(chats.rows) do
    if chat.id == fork then
      vim.api.nvim_win_set_cursor(0, { row, 0 })
    end
  end
  env.notes = {}
  feed("m")
  env.settle()
  t.eq({ "INFO BB-7: Moved chat to global chats" }, env.messages())
  -- the open chat was moved: the chats pane follows it to the global chats
  t.eq("global", state.data.scope)
  t.truthy(vim.iter(state.data.chats):any(function(chat)
    return chat.id == fork
  end), "the fork is a global chat now")
end

describe("end to end with the classic keys", function()
  it("new chat, add, send, apply part of a file, retry a diff error, fork, move to global", function()
    real.run(scenario)
  end)
end)
