-- bb7: load guard and user commands. Everything else loads on first use.
if vim.g.loaded_bb7 then
  return
end
vim.g.loaded_bb7 = true

local function run(name)
  return function(cmd)
    require("bb7").ensure_setup()
    require("bb7.commands")[name](cmd)
  end
end

local command = vim.api.nvim_create_user_command
command("BB7Init", run("init"), { desc = "bb7: create .bb7/ in the current directory" })
command("BB7", run("open"), { desc = "bb7: open or close the UI" })
command("BB7Add", run("add"), { nargs = "?", range = true, complete = "file", desc = "bb7: add the current file, a range, or path:start:end to the chat" })
command("BB7AddReadonly", run("add_readonly"), { nargs = "?", range = true, complete = "file", desc = "bb7: add read-only" })
command("BB7Remove", run("remove"), { nargs = "?", range = true, complete = "file", desc = "bb7: remove from the chat's context (in oil.nvim: the entry under the cursor)" })
command("BB7DiffLocal", run("diff_local"), { nargs = "?", complete = "file", desc = "bb7: diff the local file against the output" })
command("BB7Review", run("review"), { nargs = "?", complete = "file", desc = "bb7: accept or reject the output's hunks one by one in the real buffer" })
command("BB7Search", run("search"), { nargs = "?", desc = "bb7: search chats" })
local function run_views(name)
  return function(cmd)
    require("bb7").ensure_setup()
    require("bb7.viewcmds")[name](cmd)
  end
end
command("BB7Chat", run_views("chat"), { desc = "bb7: show the chat in the preview" })
command("BB7File", run_views("file"), { nargs = "?", complete = "file", desc = "bb7: show a context or output file in the preview" })
command("BB7Diff", run_views("diff"), { nargs = "?", complete = "file", desc = "bb7: show a file's diff in the preview" })
command("BB7Split", run_views("split"), { bang = true, desc = "bb7: the chat beside the code (! a small composer instead)" })
command("BB7Model", run("model"), { nargs = "?", bang = true, desc = "bb7: pick the model (! toggles a favorite)" })
local function run_extra(name)
  return function(cmd)
    require("bb7").ensure_setup()
    require("bb7.commands_extra")[name](cmd)
  end
end
command("BB7NewChat", run_extra("new_chat"), { nargs = "?", desc = "bb7: start a new chat and make it active (the UI stays as it is)" })
command("BB7EditInstructions", run_extra("edit_instructions"), { nargs = "?", complete = function()
  return { "project", "global" }
end, desc = "bb7: edit the project or global instructions" })
command("BB7Version", run_extra("version"), { desc = "bb7: daemon and plugin versions" })
command("BB7RefreshModels", run_extra("refresh_models"), { desc = "bb7: fetch the model list again" })
