//! A deliberately slow request, for the tests that show the reader answering `ping` and
//! `cancel` while the worker is busy: in debug builds, `BB7_TEST_SLOW_ACTION=<action>=<ms>`
//! makes the worker wait that long before it handles each `<action>` request. Release builds
//! compile none of it, so nothing in production can slow a request this way.

/// The variable that names the slow action and its delay.
#[cfg(debug_assertions)]
const VARIABLE: &str = "BB7_TEST_SLOW_ACTION";

/// Waits before `action` when the debug variable asks for it.
#[cfg(debug_assertions)]
pub(super) fn pause_before(action: &str) {
    let Some(setting) = std::env::var_os(VARIABLE) else {
        return;
    };
    let setting = setting.to_string_lossy();
    let Some((slow, millis)) = setting.split_once('=') else {
        return;
    };
    if slow == action {
        if let Ok(millis) = millis.parse::<u64>() {
            std::thread::sleep(std::time::Duration::from_millis(millis));
        }
    }
}

/// Release builds never wait.
#[cfg(not(debug_assertions))]
pub(super) fn pause_before(_action: &str) {}
