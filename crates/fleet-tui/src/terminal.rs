//! The terminal in raw mode and out again. Whatever ends the UI — a normal exit, a panic,
//! Ctrl+C, SIGTERM — leaves the terminal as it was: raw mode off, cursor shown, alternate
//! screen left, bracketed paste off.
//!
//! PLACEHOLDER (skeleton).
