//! Parsing a chat file from a reader, a window at a time, in memory that does not grow with the
//! file: [`parse_reader`].
//!
//! The walk of `walk.rs` carries almost no state across a header read outside every block
//! with no XML tag left open (a *cut*): a fresh walk started at a header alone on its line
//! reads the rest as the first one does, and so does one started after an inline header, told
//! only the role of the block the following lines belong to. So a window of the input is
//! walked; the messages before its last cut are final and handed out, the rest of the window
//! is moved to the front of the buffer, and the next window starts at that cut. A window with
//! no cut (one message longer than the buffer) grows the buffer eightfold, or to what is left
//! of the input, and is walked again: each byte is walked a bounded number of times.
//!
//! Rule 7 looks ahead: an XML opening only opens a block when its closing tag comes on a later
//! line, anywhere in the file. The table of last closing tags is built the first time a walk
//! asks, by reading ahead from the window it is in (closing tags before it cannot matter), and
//! then kept; a file without XML openings never reads ahead.
//!
//! Invalid UTF-8 is read as [`String::from_utf8_lossy`] reads it. Windows end at a newline,
//! which no invalid sequence contains, so each window's reading is that of the whole file.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};

use crate::lines;
use crate::message::{MessageRef, OpenBlock};
use crate::walk::{CloseTable, Sink, Walk, walk_lines};

/// The first size of the window, and of each read ahead for closing tags.
const WINDOW: usize = 1 << 18;

/// Parses the chat file `reader` holds, from its current position, handing each message to
/// `each` as soon as it is final, in file order; returns the protected block left open at the
/// end, if any. The reading is that of [`crate::parse_each`] on the whole text (with invalid
/// UTF-8 replaced as [`String::from_utf8_lossy`] replaces it). Memory follows the longest
/// stretch between two headers outside blocks (usually one message), not the file: a file of
/// many messages is read in 256 KiB windows. The reader is read once, except that the first
/// XML opening makes it read ahead once for closing tags (seeking back after), and its size
/// is asked by seeking to its end.
///
/// # Errors
///
/// A read or seek error of `reader`; the messages before it have been handed out.
pub fn parse_reader<R: Read + Seek>(
    reader: R,
    each: impl FnMut(MessageRef<'_>),
) -> io::Result<Option<OpenBlock>> {
    parse_in_windows(reader, WINDOW, each)
}

/// [`parse_reader`] with a first window of `window` bytes (at least one).
fn parse_in_windows<R: Read + Seek>(
    mut reader: R,
    window: usize,
    mut each: impl FnMut(MessageRef<'_>),
) -> io::Result<Option<OpenBlock>> {
    let start = reader.stream_position()?;
    // The input's size, to grow the buffer no larger than what is left of it.
    let size = reader.seek(SeekFrom::End(0))?;
    reader.seek(SeekFrom::Start(start))?;
    let left = |from: u64| size.checked_sub(from);
    let mut buffer = vec![0; window.max(1)];
    // `buffer[..filled]` holds the input from `raw_base` in the reader on; the window starts
    // at `base` in the text as read (which differs from the bytes only after invalid UTF-8)
    // and at line `line_base`.
    let mut filled = 0;
    let mut raw_base = start;
    let mut base = 0;
    let mut line_base = 0;
    let mut at_end = false;
    let mut closes = Closes::new(window);
    // The role of the block the window's first lines are text of, when it starts after an
    // inline header (else the walk's own default).
    let mut role: Option<String> = None;
    loop {
        at_end = at_end || fill(&mut reader, &mut buffer, &mut filled)?;
        // A window ends at a newline (left out) unless it runs to the end of the input.
        let end = if at_end {
            filled
        } else {
            match memchr::memrchr(b'\n', &buffer[..filled]) {
                Some(newline) => newline,
                None => {
                    grow(&mut buffer, left(raw_base));
                    continue;
                }
            }
        };
        let window = &buffer[..end];
        let text = as_text(window);
        closes.window(raw_base, base);
        let start = (base, line_base, role.as_deref());
        if at_end {
            // The last window: everything it holds is final.
            let walk = walk_window(&text, start, &mut closes.reading(&mut reader), &mut each);
            let unclosed = walk.finish();
            return closes.error.take().map_or(Ok(unclosed), Err);
        }
        let sink = Pending::new(&mut each);
        let walk = walk_window(&text, start, &mut closes.reading(&mut reader), sink);
        if let Some(err) = closes.error.take() {
            return Err(err);
        }
        let Some(cut) = walk.into_sink().cut else {
            // No place to cut: the window has to take in more before any of it is final.
            if filled == buffer.len() {
                grow(&mut buffer, left(raw_base));
            }
            continue;
        };
        let raw_cut = match &text {
            Cow::Borrowed(_) => cut.start,
            Cow::Owned(_) => line_offset(window, cut.line - line_base),
        };
        let next_role = cut.role.map(str::to_owned);
        let (cut, cut_line) = (cut.start, cut.line);
        drop(text);
        role = next_role;
        buffer.copy_within(raw_cut..filled, 0);
        filled -= raw_cut;
        raw_base += raw_cut as u64;
        base += cut;
        line_base = cut_line;
    }
}

/// Walks the window `text`, which starts at `base` in the text as read and at line
/// `first_line`, in a block of `role` when it starts after an inline header.
fn walk_window<'w, S: Sink<'w>>(
    text: &'w str,
    (base, first_line, role): (usize, usize, Option<&'w str>),
    closes: &mut impl CloseTable,
    sink: S,
) -> Walk<'w, S> {
    let mut walk = Walk::new(text, base, lines::first_close_tag, sink);
    if let Some(role) = role {
        walk = walk.in_block_of(role);
    }
    walk_lines(text, &mut walk, first_line, closes);
    walk
}

/// `bytes` as text, with invalid UTF-8 replaced. (`from_utf8_lossy` checks valid text a good
/// deal slower than `from_utf8` does.)
fn as_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Reads into `buffer` after its first `filled` bytes until it is full or the input ends;
/// whether it ended.
fn fill<R: Read>(reader: &mut R, buffer: &mut [u8], filled: &mut usize) -> io::Result<bool> {
    while *filled < buffer.len() {
        match reader.read(&mut buffer[*filled..]) {
            Ok(0) => return Ok(true),
            Ok(read) => *filled += read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(false)
}

/// Makes `buffer` eight times larger, or just large enough for the `left` bytes of input
/// from its start (and one more, to see the end) when that is less: a message longer than
/// the window is walked again a bounded number of times, and a file is never held in more
/// than its size.
fn grow(buffer: &mut Vec<u8>, left: Option<u64>) {
    let larger = buffer.len().saturating_mul(8);
    let enough = left
        .and_then(|left| usize::try_from(left).ok())
        .map_or(larger, |left| left.saturating_add(1));
    let size = if enough > buffer.len() {
        larger.min(enough)
    } else {
        // The input grew since its size was taken.
        larger
    };
    buffer.resize(size, 0);
}

/// Where the line `lines` lines after the start of `bytes` starts.
fn line_offset(bytes: &[u8], lines: usize) -> usize {
    if lines == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', bytes)
        .nth(lines - 1)
        .map_or(bytes.len(), |newline| newline + 1)
}

/// The messages of a window's walk: handed on up to the last cut, held after it (the next
/// window reads them again).
struct Pending<'w, 'e, F> {
    each: &'e mut F,
    held: Vec<MessageRef<'w>>,
    /// The last cut.
    cut: Option<CutAt<'w>>,
}

/// Where the next window starts.
struct CutAt<'w> {
    /// Its offset in the window and its line (0-based).
    start: usize,
    line: usize,
    /// The role of the block its first lines are text of, when a walk started there needs
    /// to be told.
    role: Option<&'w str>,
}

impl<'w, 'e, F: FnMut(MessageRef<'_>)> Pending<'w, 'e, F> {
    fn new(each: &'e mut F) -> Self {
        Pending {
            each,
            held: Vec::new(),
            cut: None,
        }
    }
}

impl<'w, F: FnMut(MessageRef<'_>)> Sink<'w> for Pending<'w, '_, F> {
    const CUTS: bool = true;

    fn message(&mut self, message: MessageRef<'w>) {
        // Before the first cut nothing is final, after it only what the next cut confirms.
        self.held.push(message);
    }

    fn cut(&mut self, start: usize, line: usize, role: Option<&'w str>) {
        for message in self.held.drain(..) {
            (self.each)(message);
        }
        self.cut = Some(CutAt { start, line, role });
    }
}

/// The table of last closing tags, read ahead the first time a walk asks.
struct Closes {
    /// Where the current window starts in the reader, and in the text as read.
    raw_base: u64,
    base: usize,
    /// The size of each read ahead.
    window: usize,
    table: Option<HashMap<String, usize>>,
    /// The error of the read ahead, reported once the walk is over.
    error: Option<io::Error>,
}

impl Closes {
    fn new(window: usize) -> Self {
        Closes {
            raw_base: 0,
            base: 0,
            window,
            table: None,
            error: None,
        }
    }

    fn window(&mut self, raw_base: u64, base: usize) {
        self.raw_base = raw_base;
        self.base = base;
    }

    fn reading<'c, R: Read + Seek>(&'c mut self, reader: &'c mut R) -> ReadingCloses<'c, R> {
        ReadingCloses {
            closes: self,
            reader,
        }
    }
}

/// [`Closes`] with the reader it reads ahead in.
struct ReadingCloses<'c, R> {
    closes: &'c mut Closes,
    reader: &'c mut R,
}

impl<R: Read + Seek> CloseTable for ReadingCloses<'_, R> {
    fn last(&mut self, tag: &str) -> Option<usize> {
        let closes = &mut *self.closes;
        if closes.table.is_none() {
            match read_closes(self.reader, closes.raw_base, closes.base, closes.window) {
                Ok(table) => closes.table = Some(table),
                Err(err) => {
                    closes.error.get_or_insert(err);
                    closes.table = Some(HashMap::new());
                }
            }
        }
        closes.table.as_ref()?.get(tag).copied()
    }
}

/// The offset of the last `</name>` of each name from `raw_base` in `reader` on (which is
/// `base` in the text as read), read a window at a time; the reader is left where it was.
fn read_closes<R: Read + Seek>(
    reader: &mut R,
    raw_base: u64,
    base: usize,
    window: usize,
) -> io::Result<HashMap<String, usize>> {
    let resume = reader.stream_position()?;
    reader.seek(SeekFrom::Start(raw_base))?;
    let mut table = HashMap::new();
    let mut buffer = vec![0; window.max(1)];
    let mut filled = 0;
    let mut base = base;
    let mut at_end = false;
    while !at_end || filled > 0 {
        at_end = at_end || fill(reader, &mut buffer, &mut filled)?;
        // Closing tags hold no newline: a piece ending at one holds whole tags.
        let end = match memchr::memrchr(b'\n', &buffer[..filled]) {
            Some(newline) if !at_end => newline + 1,
            _ if at_end => filled,
            _ => {
                grow(&mut buffer, None);
                continue;
            }
        };
        let text = as_text(&buffer[..end]);
        for tag in lines::close_tags(&text) {
            let offset = base + (tag.as_ptr() as usize - text.as_ptr() as usize);
            match table.get_mut(tag) {
                Some(last) => *last = offset,
                None => {
                    table.insert(tag.to_owned(), offset);
                }
            }
        }
        base += text.len();
        drop(text);
        buffer.copy_within(end..filled, 0);
        filled -= end;
    }
    reader.seek(SeekFrom::Start(resume))?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::*;
    use crate::fast_path_tests::text;
    use crate::parse::{Document, parse_document};

    /// What `parse_in_windows` reads in `bytes`, as a document.
    fn streamed(bytes: &[u8], window: usize) -> Document {
        let mut messages = Vec::new();
        let unclosed = parse_in_windows(Cursor::new(bytes), window, |message| {
            messages.push(message.into_owned())
        });
        Document {
            messages,
            unclosed: unclosed.unwrap_or_else(|err| panic!("{err}")),
        }
    }

    fn whole(bytes: &[u8]) -> Document {
        parse_document(&String::from_utf8_lossy(bytes))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn a_file_read_in_windows_reads_as_the_whole_text(
            text in text(),
            window in 1usize..80,
        ) {
            prop_assert_eq!(streamed(text.as_bytes(), window), whole(text.as_bytes()));
        }

        #[test]
        fn invalid_utf8_read_in_windows_reads_as_the_whole_text(
            pieces in prop::collection::vec(
                prop_oneof![
                    text().prop_map(String::into_bytes),
                    prop::collection::vec(any::<u8>(), 0..6),
                ],
                0..8,
            ),
            window in 1usize..80,
        ) {
            let bytes = pieces.concat();
            prop_assert_eq!(streamed(&bytes, window), whole(&bytes));
        }
    }

    #[test]
    fn windows_cut_at_headers_and_grow_for_long_messages() {
        let long_fence = format!("```\n{}\nuser:\n```\n", "x".repeat(5_000));
        let text = format!(
            "intro\n<a>\nuser:\n</a>\n{}assistant:\nok\n{long_fence}user:\n\n<b>\nnever closed\n",
            "user:\nhello\n\nassistant:\nhi <b>x</b>\n".repeat(300)
        );
        for window in [1, 7, 64, 1000, WINDOW] {
            assert_eq!(streamed(text.as_bytes(), window), whole(text.as_bytes()));
        }
        let document = streamed(text.as_bytes(), 64);
        assert!(document.messages.len() > 600);
        // Inline headers cut too; the lines after one are text of the block before it.
        let inline =
            "assistant:\nhi\nfile: a.txt\nstill the assistant's\nagent: x\nthe user's\n".repeat(40);
        for window in [1, 5, 17, 64] {
            assert_eq!(
                streamed(inline.as_bytes(), window),
                whole(inline.as_bytes())
            );
        }
        assert!(
            document
                .messages
                .iter()
                .any(|message| message.content.contains("user:"))
        );
    }

    #[test]
    fn the_reader_is_read_from_where_it_is() {
        let mut reader = Cursor::new(b"skipped\nuser:\nkept".to_vec());
        reader.set_position(8);
        let mut messages = Vec::new();
        let unclosed = parse_reader(reader, |message| messages.push(message.into_owned()));
        assert!(matches!(unclosed, Ok(None)));
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].content, "kept");
        assert_eq!(messages[0].span.start, 1);
    }

    /// A reader that fails once it has given `good` bytes.
    struct Failing {
        inner: Cursor<Vec<u8>>,
        good: u64,
    }

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let left = self.good.saturating_sub(self.inner.position());
            if left == 0 {
                return Err(io::Error::other("disk gone"));
            }
            let take = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            self.inner.read(&mut buf[..take])
        }
    }

    impl Seek for Failing {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    #[test]
    fn a_read_error_is_returned_after_the_final_messages() {
        let text = "user:\na\nassistant:\nb\nuser:\nc\n".repeat(50);
        let mut messages = Vec::new();
        let failing = Failing {
            inner: Cursor::new(text.clone().into_bytes()),
            good: 300,
        };
        let result = parse_in_windows(failing, 16, |message| messages.push(message.into_owned()));
        let err = result.err().map(|err| err.to_string());
        assert_eq!(err.as_deref(), Some("disk gone"));
        // What was handed out is a prefix of the whole reading, and all of it final.
        let all = whole(text.as_bytes()).messages;
        assert!(!messages.is_empty() && messages.len() < all.len());
        assert_eq!(messages, all[..messages.len()]);
    }
}
