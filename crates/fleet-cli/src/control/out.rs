//! stdout shared by the printer and the control protocol. Both write JSON lines from different
//! tasks; a line must reach the SDK whole, so each writer buffers its own bytes and hands over
//! complete lines under one lock.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// The one stdout, shared.
#[derive(Clone)]
pub struct SharedOut(Arc<Mutex<Box<dyn Write + Send>>>);

impl SharedOut {
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self(Arc::new(Mutex::new(out)))
    }

    /// A writer of its own for one producer.
    pub fn writer(&self) -> LineOut {
        LineOut {
            shared: self.clone(),
            pending: Vec::new(),
        }
    }

    /// Writes one whole line (a newline is added) and flushes it.
    pub fn line(&self, text: &str) -> io::Result<()> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    }

    fn put(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(bytes)?;
        out.flush()
    }
}

/// One producer's writer: bytes wait here until their line is complete.
pub struct LineOut {
    shared: SharedOut,
    pending: Vec<u8>,
}

impl Write for LineOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') {
            let rest = self.pending.split_off(end + 1);
            let whole = std::mem::replace(&mut self.pending, rest);
            self.shared.put(&whole)?;
        }
        Ok(buf.len())
    }

    /// Hands over only whole lines: a half line must not be cut by another producer's.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LineOut {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let _ = self.shared.put(&std::mem::take(&mut self.pending));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::print::fixtures::SharedBuf as Collect;

    #[test]
    fn lines_from_two_writers_never_interleave() {
        let sink = Collect::default();
        let shared = SharedOut::new(Box::new(sink.clone()));
        let mut a = shared.writer();
        let mut b = shared.writer();
        a.write_all(b"{\"a\":").unwrap();
        b.write_all(b"{\"b\":1}\n").unwrap();
        shared.line("{\"c\":3}").unwrap();
        a.write_all(b"2}\n{\"a2\":").unwrap();
        drop(a);
        assert_eq!(sink.text(), "{\"b\":1}\n{\"c\":3}\n{\"a\":2}\n{\"a2\":");
    }
}
