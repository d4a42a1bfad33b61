//! Agents running.
