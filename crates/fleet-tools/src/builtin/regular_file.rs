//! Opening a file that a tool is about to read, in a way that can never block.
//!
//! A plain `open` + `read` hangs forever on a FIFO with no writer, on a terminal, or on the
//! "regular" files of `/proc` that wait for data (`/proc/kmsg`); an agent that met one in a Grep
//! of `/` used to hang with it. So: the path is looked at first and anything but a regular file
//! is refused without being opened (opening some devices already does something); the file is
//! then opened with `O_NONBLOCK` (and `O_NOCTTY`) and looked at again through the open handle,
//! so a file swapped for a FIFO in between is still refused. `O_NONBLOCK` stays on: it changes
//! nothing for ordinary files, and turns a read that would wait into a `WouldBlock` error.

use nix::fcntl::OFlag;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// A folder, FIFO, socket or device, or a file that became one while being opened.
    NotRegular,
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Opens `path` for reading if, and only if, it is a regular file, never blocking.
pub(crate) fn open_regular(path: &Path) -> Result<File, OpenError> {
    let before = std::fs::metadata(path)?;
    if !before.is_file() {
        return Err(OpenError::NotRegular);
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)?;
    let after = file.metadata()?;
    if !after.is_file() || after.dev() != before.dev() || after.ino() != before.ino() {
        return Err(OpenError::NotRegular);
    }
    Ok(file)
}

/// Opens a file a walk found as a regular file (by its directory entry, without following a
/// symlink), never blocking: no look at the path first, which a walk already did, but the open
/// handle is checked, so a file swapped for a FIFO since is still refused. Returns the handle's
/// metadata too, which saves the caller another look.
pub(crate) fn open_walked(path: &Path) -> Result<(File, Metadata), OpenError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_NOFOLLOW).bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular);
    }
    Ok((file, meta))
}

/// [`open_regular`] with a refusal as an `InvalidInput` I/O error, for callers that only
/// report I/O errors.
pub(crate) fn open_regular_io(path: &Path) -> io::Result<File> {
    match open_regular(path) {
        Ok(file) => Ok(file),
        Err(OpenError::Io(err)) => Err(err),
        Err(OpenError::NotRegular) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, pipe or socket)",
        )),
    }
}

/// The whole of the regular file at `path`, read without blocking.
pub(crate) fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_regular_io(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether a read failed because it would have had to wait for data that may never come.
pub(crate) fn would_block(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::WouldBlock
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::io::Read;

    #[test]
    fn fifos_and_devices_are_refused_without_opening_and_files_read_normally() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(matches!(open_regular(&fifo), Err(OpenError::NotRegular)));
        assert!(matches!(
            open_regular(Path::new("/dev/null")),
            Err(OpenError::NotRegular)
        ));
        assert!(matches!(
            open_regular(dir.path()),
            Err(OpenError::NotRegular)
        ));
        let text = dir.path().join("a.txt");
        std::fs::write(&text, "hello\n").unwrap();
        let mut read = String::new();
        open_regular(&text)
            .unwrap()
            .read_to_string(&mut read)
            .unwrap();
        assert_eq!(read, "hello\n");
    }
}
