//! The animated "waiting for the model" mark shown on a terminal from the moment a request
//! is sent until the first streamed event: a thread draws a braille frame about ten times a
//! second on one line, and [`Spinner::stop`] erases that line (carriage return, clear line)
//! so the reply starts on a clean line. Unlike the rest of `render`, this does I/O; the
//! caller decides whether there is a terminal to draw on.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The frames, in order.
pub const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Back to the start of the line and erase it: what [`Spinner::stop`] writes.
pub const ERASE: &str = "\r\x1b[K";

/// How often a new frame is drawn.
const INTERVAL: Duration = Duration::from_millis(100);

/// Where the spinner draws, shared with whoever else writes there.
pub type SharedWriter = Arc<Mutex<dyn Write + Send>>;

/// Frame number `tick`, `elapsed` after the start: it redraws the whole line, dimmed, with the
/// seconds waited once there is at least one.
pub fn frame(tick: usize, elapsed: Duration) -> String {
    let glyph = FRAMES[tick % FRAMES.len()];
    let seconds = elapsed.as_secs();
    let waited = if seconds == 0 {
        String::new()
    } else {
        format!(" {seconds}s")
    };
    format!("\r\x1b[2m{glyph} waiting for the model…{waited}\x1b[0m\x1b[K")
}

/// A running spinner; stopping (or dropping) it erases its line.
pub struct Spinner {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

struct Shared {
    out: SharedWriter,
    /// Whether frames may still be drawn; frames and the erase are written while holding it,
    /// so no frame can follow the erase.
    running: Mutex<bool>,
    wake: Condvar,
}

impl Spinner {
    /// Draws the first frame on `out` now and the next ones from a thread, ~10 per second.
    pub fn start(out: SharedWriter) -> Self {
        Self::start_every(out, INTERVAL)
    }

    fn start_every(out: SharedWriter, interval: Duration) -> Self {
        let shared = Arc::new(Shared {
            out,
            running: Mutex::new(true),
            wake: Condvar::new(),
        });
        let started = Instant::now();
        draw(&shared.out, &frame(0, Duration::ZERO));
        let ticking = Arc::clone(&shared);
        // Without a thread the first frame simply stays until it is erased.
        let ticker = std::thread::Builder::new()
            .name("ybs-spinner".into())
            .spawn(move || tick(&ticking, started, interval))
            .ok();
        Spinner { shared, ticker }
    }

    /// Stops the animation and erases the line; returns once no frame can follow.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        {
            let mut running = lock(&self.shared.running);
            if !*running {
                return;
            }
            *running = false;
            draw(&self.shared.out, ERASE);
        }
        self.shared.wake.notify_all();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.halt();
    }
}

fn tick(shared: &Shared, started: Instant, interval: Duration) {
    let mut running = lock(&shared.running);
    let mut count = 0;
    loop {
        // Waits out the interval unless stopped meanwhile (also before this thread started).
        let (guard, _) = shared
            .wake
            .wait_timeout_while(running, interval, |running| *running)
            .unwrap_or_else(PoisonError::into_inner);
        running = guard;
        if !*running {
            return;
        }
        count += 1;
        draw(&shared.out, &frame(count, started.elapsed()));
    }
}

fn draw(out: &SharedWriter, text: &str) {
    let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
    // A closed terminal must not stop the agent.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A writer whose bytes the test can read while the spinner still holds it.
    fn buffer() -> (SharedWriter, Arc<Mutex<Vec<u8>>>) {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        (Arc::new(Mutex::new(Tee(Arc::clone(&bytes)))), bytes)
    }

    struct Tee(Arc<Mutex<Vec<u8>>>);

    impl Write for Tee {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(bytes: &Mutex<Vec<u8>>) -> String {
        String::from_utf8(bytes.lock().unwrap().clone()).unwrap()
    }

    /// The frames drawn so far, each one line redraw.
    fn frames(output: &str) -> Vec<&str> {
        output
            .split('\r')
            .filter(|part| !part.is_empty() && *part != "\x1b[K")
            .collect()
    }

    #[test]
    fn frames_cycle_through_the_glyphs_and_show_the_seconds_waited() {
        assert_eq!(
            frame(0, Duration::ZERO),
            "\r\x1b[2m⠋ waiting for the model…\x1b[0m\x1b[K"
        );
        assert_eq!(
            frame(1, Duration::from_millis(900)),
            "\r\x1b[2m⠙ waiting for the model…\x1b[0m\x1b[K"
        );
        assert_eq!(
            frame(12, Duration::from_millis(3_400)),
            "\r\x1b[2m⠹ waiting for the model… 3s\x1b[0m\x1b[K"
        );
        let glyphs: String = (0..11)
            .map(|n| frame(n, Duration::ZERO).chars().nth(5).unwrap())
            .collect();
        assert_eq!(glyphs, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⠋");
    }

    #[test]
    fn the_ticker_draws_the_frames_in_order_and_stop_erases_the_line() {
        let (out, bytes) = buffer();
        let spinner = Spinner::start_every(out, Duration::from_millis(1));
        while frames(&text(&bytes)).len() < 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
        spinner.stop();
        let output = text(&bytes);
        assert!(output.ends_with(ERASE), "{output:?}");
        let drawn = frames(&output);
        for (n, drawn) in drawn.iter().enumerate() {
            let glyph = drawn.chars().nth(4).unwrap();
            assert_eq!(glyph, FRAMES[n % FRAMES.len()], "{output:?}");
        }
        // Nothing is drawn after the erase.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(text(&bytes), output);
    }

    #[test]
    fn stop_right_after_start_leaves_the_first_frame_erased() {
        let (out, bytes) = buffer();
        // No second frame can come before the stop.
        Spinner::start_every(out, Duration::from_secs(3600)).stop();
        assert_eq!(text(&bytes), format!("{}{ERASE}", frame(0, Duration::ZERO)));
    }

    #[test]
    fn dropping_a_spinner_erases_its_line_once() {
        let (out, bytes) = buffer();
        drop(Spinner::start_every(out, Duration::from_secs(3600)));
        let output = text(&bytes);
        assert!(output.ends_with(ERASE), "{output:?}");
        assert_eq!(output.matches(ERASE).count(), 1, "{output:?}");
    }
}
