//! `/jobs` and the end of a session's background jobs: the list a person reads (id, state,
//! running time, command, last lines) and what `/exit` says when it stops those still running.

use std::time::Duration;

use ybs_tools::{JobView, Jobs};

use crate::render::{inert, wrap};

/// The `/jobs` text, wrapped to `width`.
pub(super) fn listing(jobs: &Jobs, width: Option<usize>) -> String {
    let all = jobs.list();
    if all.is_empty() {
        return "no background jobs in this session (run_shell starts one with background: true)"
            .to_owned();
    }
    let mut lines = Vec::new();
    for job in &all {
        // The command and its output come from the model and the command.
        let head = format!(
            "job {}  {}  {}",
            job.id,
            state(job),
            inert(job.command.lines().next().unwrap_or(""))
        );
        lines.push(wrap::hanging(&head, width, 4));
        for line in &job.last_lines {
            lines.push(wrap::hanging(&format!("    | {}", inert(line)), width, 6));
        }
    }
    lines.join("\n")
}

/// The line `/exit` prints after stopping the jobs that still ran; `None` when none did.
pub(super) fn stopped_at_exit(stopped: &[JobView]) -> Option<String> {
    if stopped.is_empty() {
        return None;
    }
    let named: Vec<String> = (stopped.iter())
        .map(|job| {
            format!(
                "{} ({})",
                job.id,
                inert(job.command.lines().next().unwrap_or(""))
            )
        })
        .collect();
    Some(format!(
        "stopped {} still running: {}",
        ybs_tools::summary::counted(stopped.len() as u64, "background job", "background jobs"),
        named.join(", ")
    ))
}

/// The `/status` row: how many jobs run, of how many.
pub(super) fn status_row(jobs: &Jobs) -> String {
    let all = jobs.list();
    if all.is_empty() {
        return "none".to_owned();
    }
    let running = all.iter().filter(|job| job.running).count();
    format!("{running} running, {} ended", all.len() - running)
}

fn state(job: &JobView) -> String {
    let time = duration(job.running_for);
    match job.exit_code {
        None => format!("running {time}"),
        Some(_) if job.stopped => format!("stopped after {time}"),
        Some(code) => format!("exited {code} after {time}"),
    }
}

/// `45s`, `3m05s`, `2h04m`.
fn duration(time: Duration) -> String {
    let seconds = time.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_times_read_as_a_person_writes_them() {
        assert_eq!(duration(Duration::from_secs(45)), "45s");
        assert_eq!(duration(Duration::from_secs(185)), "3m05s");
        assert_eq!(duration(Duration::from_secs(7440)), "2h04m");
    }

    #[test]
    fn an_empty_table_says_how_to_start_a_job() {
        assert!(listing(&Jobs::new(), None).contains("background: true"));
        assert_eq!(stopped_at_exit(&[]), None);
    }
}
