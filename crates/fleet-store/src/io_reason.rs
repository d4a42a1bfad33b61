//! How an I/O error reads in the store's messages: the system's words and the errno's name,
//! `No space left on device (ENOSPC)`, rather than Rust's `(os error 28)`. The name is what
//! people search for and what scripts match on, and it is the same on every machine, while the
//! number is not portable.

use std::fmt;
use std::io;

/// Shows `error` as `<description> (<ERRNO>)` when it carries an OS error code, else as it is.
pub struct IoReason<'a>(pub &'a io::Error);

impl fmt::Display for IoReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(code) = self.0.raw_os_error() else {
            return write!(f, "{}", self.0);
        };
        match nix::errno::Errno::from_raw(code) {
            nix::errno::Errno::UnknownErrno => write!(f, "{}", self.0),
            errno => write!(f, "{} ({errno:?})", errno.desc()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_error_reads_with_its_errno_name() {
        let full = io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32);
        assert_eq!(
            IoReason(&full).to_string(),
            "No space left on device (ENOSPC)"
        );
        let read_only = io::Error::from_raw_os_error(nix::errno::Errno::EROFS as i32);
        assert_eq!(
            IoReason(&read_only).to_string(),
            "Read-only file system (EROFS)"
        );
    }

    #[test]
    fn an_error_without_a_code_reads_as_it_is() {
        let other = io::Error::other("the lock file kept being replaced");
        assert_eq!(
            IoReason(&other).to_string(),
            "the lock file kept being replaced"
        );
    }
}
