//! How a command ends: a failure already worded for the user (exit code 1), and the other
//! exit codes a turn or a usage error gives.

use ybs_agent::Stop;

/// A failure already worded for the user; the exit code is 1.
pub struct Failed(pub String);

/// The exit code of a usage error (as clap's own).
pub const USAGE_ERROR: u8 = 2;
/// The exit code of a cancelled turn.
pub const CANCELLED: u8 = 130;

/// The exit code of a turn that ended with `stop`.
pub fn exit_code(stop: Stop) -> u8 {
    match stop {
        Stop::Finished => 0,
        Stop::Cancelled => CANCELLED,
        Stop::MaxIterations | Stop::Stuck => 1,
    }
}
