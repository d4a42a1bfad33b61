//! Reading a transcript one raw line at a time, with its 1-based number, reusing one buffer so
//! a long session is never held in memory whole. Every reader of transcript files goes through
//! this, so they agree on what a line is.

use crate::error::{Result, StoreError};
use std::io::BufRead;
use std::path::Path;

pub(crate) struct Lines<'a, R> {
    reader: R,
    path: &'a Path,
    buf: Vec<u8>,
    number: usize,
}

impl<'a, R: BufRead> Lines<'a, R> {
    pub(crate) fn new(reader: R, path: &'a Path) -> Self {
        Self {
            reader,
            path,
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The next line with its number, newline included when the file has one; `None` at the
    /// end. Read errors name the file.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &[u8])>> {
        self.buf.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| StoreError::io("read", self.path, e))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some((self.number, &self.buf)))
    }
}
