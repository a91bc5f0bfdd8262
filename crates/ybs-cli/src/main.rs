//! The `ybs` binary: parses the command line and hands it to [`ybs_cli::run`].

use std::process::ExitCode;

use ybs_cli::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse_with_tips(std::env::args_os()).unwrap_or_else(|error| error.exit());
    let host = match ybs_cli::Host::from_process() {
        Ok(host) => host,
        Err(err) => {
            eprintln!("ybs: error: cannot read the working directory: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = ybs_cli::run(
        &cli,
        &host,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(code)
}
