//! Lines for the person while a session is built: an agent file that could not be used, a
//! hook that fleet does not run, an MCP server that failed to start. The library does not
//! write to a terminal itself; the front end says them (on stderr, after making text from
//! outside fleet safe to show).

/// Where the builder's lines go.
pub trait Report: Send + Sync {
    /// One line: `ours` is fleet's own words, `outside` follows it and is text from outside
    /// fleet (a file's content, a server's error) that must be made safe before it is shown.
    fn line(&self, ours: &str, outside: &str);
}

/// Says nothing (tests, and front ends with nobody to tell).
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Report for Quiet {
    fn line(&self, _ours: &str, _outside: &str) {}
}
