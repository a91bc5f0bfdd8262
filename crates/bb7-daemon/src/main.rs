//! `bb7`: the daemon binary. Reads requests on stdin, writes replies on stdout, logs to
//! `~/.bb7/logs/bb7.log` (rotated at 1 MiB, one previous file kept) or to stderr with
//! `BB7_LOG_STDERR=1`; the level comes from `BB7_LOG`, default `warn`. As in the first bb7,
//! `BB7_DEBUG=1` or a file `~/.bb7/debug` turns on the debug log: the daemon's own debug
//! lines and every request and reply to the model in full.

use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};

use bb7_daemon::server;
use bb7_daemon::{Home, Session};

fn main() {
    if let Some(flag) = std::env::args().nth(1) {
        if flag == "--version" || flag == "-v" {
            println!("bb7 {}", env!("CARGO_PKG_VERSION"));
            return;
        }
    }
    let home = Home::from_env();
    init_logging(&home);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("bb7: cannot start the async runtime: {err}");
            std::process::exit(1);
        }
    };
    let output: server::Output = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    // Read from the descriptor itself (no second buffer), watched before each blocking read.
    let input = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => bb7_daemon::server::input::Watched::new(std::fs::File::from(fd)),
        Err(err) => {
            eprintln!("bb7: cannot read stdin: {err}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(server::serve(Session::new(home), input, output));
    // The blocking stdin reader may still be parked in read(); do not wait for it.
    std::process::exit(code);
}

fn init_logging(home: &Home) {
    let debug = std::env::var_os("BB7_DEBUG").is_some_and(|value| value == "1")
        || home.bb7_dir().join("debug").exists();
    let default = if debug {
        "warn,bb7=debug,bb7_daemon=debug"
    } else {
        "warn"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("BB7_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    if std::env::var_os("BB7_LOG_STDERR").is_some_and(|value| value == "1") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(|| bb7_daemon::store::logfile::Escaped(std::io::stderr()))
            .try_init();
        return;
    }
    let dir = home.logs_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = bb7_daemon::store::logfile::RotatingFile::open(
        &dir.join("bb7.log"),
        bb7_daemon::store::logfile::MAX_LOG_BYTES,
    ) else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(bb7_daemon::store::logfile::Escaped(file)))
        .try_init();
}
