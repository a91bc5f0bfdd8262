//! The daemon's standard input, read straight from its file descriptor. When no request is
//! waiting, a read first watches the input for a moment ([`WATCH`]) before it sleeps in the
//! kernel: a client that sends its next request right after a reply (the plugin's bursts of
//! small requests) then gets it read without the wake-up of a sleeping thread, which costs
//! tens of microseconds, more than such a request takes to answer. The first bb7's Go
//! runtime does the same by spinning its scheduler before it parks.

use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// How long a read watches for input before it blocks.
pub const WATCH: Duration = Duration::from_micros(200);

/// A reader of a file descriptor that watches it for [`WATCH`] before a blocking read.
pub struct Watched<R> {
    inner: R,
}

impl<R: Read + AsFd> Watched<R> {
    /// Reads `inner`, watching it first.
    pub fn new(inner: R) -> Self {
        Watched { inner }
    }

    /// Whether input (or its end) is waiting, without blocking.
    fn ready(&self) -> bool {
        let mut fds = [PollFd::new(&self.inner, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // An error is left to the read to report.
        poll(&mut fds, Some(&now)).is_ok_and(|ready| ready > 0) || !fds[0].revents().is_empty()
    }
}

impl<R: Read + AsFd> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let start = Instant::now();
        while !self.ready() && start.elapsed() < WATCH {
            std::hint::spin_loop();
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::Write;

    use super::*;

    #[test]
    fn reads_what_is_written_and_the_end() {
        let (reader, writer) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut watched = Watched::new(reader);
        let mut writer = writer;
        writer.write_all(b"{\"action\":\"ping\"}\n").unwrap();
        let mut buf = [0u8; 64];
        let n = watched.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"{\"action\":\"ping\"}\n");
        // Nothing waiting: the read watches, then blocks until the writer goes.
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            writer.write_all(b"late\n").unwrap();
            drop(writer);
        });
        let n = watched.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"late\n");
        late.join().unwrap();
        assert_eq!(watched.read(&mut buf).unwrap(), 0);
    }
}
