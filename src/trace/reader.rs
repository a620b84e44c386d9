//! Reading a trace line by line without trusting its size: a line is never held past [`MAX_LINE`] bytes.
//! Checking the records is `verify`'s; `verify::read` returns them once the chain checks.
//!
//! ```no_run
//! let records = zamburak::trace::read(std::path::Path::new("plan.zjson")).unwrap();
//! println!("{} records", records.len());
//! ```

use std::io::{self, BufRead};

/// The longest line (without its newline) the reader accepts, and so the longest record the writer writes.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One physical line of a trace file.
#[derive(Debug, PartialEq, Eq)]
pub enum RawLine {
    /// A full line, without its `\n`.
    Complete(Vec<u8>),
    /// The file ended before a `\n`: the last write was interrupted or the file was cut.
    Unterminated(Vec<u8>),
    /// Longer than [`MAX_LINE`]; the rest of the file is not read.
    TooLong,
}

/// Lines of a trace, each at most `limit` bytes in memory.
pub struct Lines<R> {
    inner: R,
    limit: usize,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(inner: R, limit: usize) -> Lines<R> {
        Lines {
            inner,
            limit,
            done: false,
        }
    }

    /// The next line, `None` at the end of the file.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine>> {
        if self.done {
            return Ok(None);
        }
        let mut line = Vec::new();
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.done = true;
                return Ok(if line.is_empty() {
                    None
                } else {
                    Some(RawLine::Unterminated(line))
                });
            }
            let (take, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            if line.len() + take > self.limit {
                self.done = true;
                return Ok(Some(RawLine::TooLong));
            }
            line.extend_from_slice(&buf[..take]);
            self.inner.consume(take + usize::from(found));
            if found {
                return Ok(Some(RawLine::Complete(line)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn all(input: &[u8], limit: usize) -> Vec<RawLine> {
        // A tiny buffer forces lines to span several `fill_buf` calls.
        let mut lines = Lines::new(BufReader::with_capacity(3, input), limit);
        let mut out = Vec::new();
        while let Some(l) = lines.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    #[test]
    fn splits_lines_across_buffer_refills() {
        assert_eq!(
            all(b"abcdef\n\nxy\n", 100),
            vec![
                RawLine::Complete(b"abcdef".to_vec()),
                RawLine::Complete(vec![]),
                RawLine::Complete(b"xy".to_vec())
            ]
        );
        assert_eq!(all(b"", 100), vec![]);
    }

    #[test]
    fn reports_unterminated_last_line() {
        assert_eq!(
            all(b"ab\ncd", 100),
            vec![
                RawLine::Complete(b"ab".to_vec()),
                RawLine::Unterminated(b"cd".to_vec())
            ]
        );
    }

    #[test]
    fn stops_at_a_line_over_the_limit() {
        assert_eq!(
            all(b"12345\nab\n", 5),
            vec![
                RawLine::Complete(b"12345".to_vec()),
                RawLine::Complete(b"ab".to_vec())
            ]
        );
        assert_eq!(all(b"123456\nab\n", 5), vec![RawLine::TooLong]);
        assert_eq!(all(b"123456", 5), vec![RawLine::TooLong]);
    }
}
