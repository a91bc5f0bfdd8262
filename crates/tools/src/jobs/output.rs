//! A job's output, kept bounded: the newest bytes up to a cap, with where the reader has
//! got to, so a read returns only what is new and says how much was dropped unread.

/// The output of one job (stdout and stderr together, in the order they arrived).
#[derive(Debug)]
pub(crate) struct OutputBuffer {
    /// The newest bytes, at most `cap`.
    kept: Vec<u8>,
    /// How many bytes were dropped from the front of `kept` so far.
    dropped: u64,
    /// Up to which byte (counted from the job's start) the model has read.
    read_to: u64,
    cap: usize,
}

/// What a read returns: the new text and how many bytes were dropped before it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewOutput {
    pub(crate) text: String,
    pub(crate) missed_bytes: u64,
}

impl OutputBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        OutputBuffer {
            kept: Vec::new(),
            dropped: 0,
            read_to: 0,
            cap: cap.max(1),
        }
    }

    /// Appends `bytes`, dropping the oldest beyond the cap.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.kept.extend_from_slice(bytes);
        if self.kept.len() > self.cap {
            let excess = self.kept.len() - self.cap;
            self.kept.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// What arrived since the last read; marks it read.
    pub(crate) fn read_new(&mut self) -> NewOutput {
        let end = self.dropped + self.kept.len() as u64;
        let missed_bytes = self.dropped.saturating_sub(self.read_to);
        let from = self.read_to.max(self.dropped) - self.dropped;
        let from = usize::try_from(from)
            .unwrap_or(usize::MAX)
            .min(self.kept.len());
        self.read_to = end;
        NewOutput {
            text: String::from_utf8_lossy(&self.kept[from..]).into_owned(),
            missed_bytes,
        }
    }

    /// The last `count` lines of what is kept, read or not (for a person's list).
    pub(crate) fn last_lines(&self, count: usize) -> Vec<String> {
        let text = String::from_utf8_lossy(&self.kept);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let skip = lines.len().saturating_sub(count);
        lines[skip..]
            .iter()
            .map(|line| (*line).to_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_returns_only_what_is_new() {
        let mut buffer = OutputBuffer::new(100);
        buffer.push(b"one\n");
        assert_eq!(buffer.read_new().text, "one\n");
        buffer.push(b"two\n");
        let read = buffer.read_new();
        assert_eq!(read.text, "two\n");
        assert_eq!(read.missed_bytes, 0);
        assert_eq!(buffer.read_new().text, "");
    }

    #[test]
    fn output_beyond_the_cap_is_dropped_oldest_first_and_counted() {
        let mut buffer = OutputBuffer::new(4);
        buffer.push(b"abcdef");
        buffer.push(b"gh");
        let read = buffer.read_new();
        assert_eq!(read.text, "efgh");
        assert_eq!(read.missed_bytes, 4);
        buffer.push(b"ij");
        let read = buffer.read_new();
        assert_eq!(read.text, "ij");
        assert_eq!(read.missed_bytes, 0);
        assert_eq!(buffer.last_lines(1), vec!["ghij".to_owned()]);
    }
}
