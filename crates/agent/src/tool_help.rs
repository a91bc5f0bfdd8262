//! The tools and hooks as `ybs --help` and `/help` list them.

/// The tools the model has and the hooks around them, for the help texts.
pub const TOOLS_HELP: &str = "\
Tools the model has (tools.builtin.NAME.enabled turns one on or off):
  read_file, list_files, search_files  read the project; calls of one reply run at once
  write_file, edit_file, run_shell     change it (asks first; rules in safety.permissions)
  todo_write                           its task list, shown as it changes
  web_fetch                            a web page as text; asks once per host, loopback too
  web_search                           the provider's hosted search (anthropic, responses,
                                       openrouter); off unless enabled
  task                                 a read-only sub-agent that returns its report
Hooks (config `hooks`): before_tool (may refuse a call), after_tool (formatters), and
lint/test after a turn that changed files (failures go back to the model, max_rounds).
";
