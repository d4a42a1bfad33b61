//! The session library's lines for the person, on stderr: `fleet: ` and fleet's own words,
//! then the text from outside fleet made safe for a terminal.

/// Writes each line to stderr.
pub(crate) struct Stderr;

impl fleet_session::Report for Stderr {
    fn line(&self, ours: &str, outside: &str) {
        eprintln!("fleet: {ours}{}", crate::visible::visible(outside));
    }
}
