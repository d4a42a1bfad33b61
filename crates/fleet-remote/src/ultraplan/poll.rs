//! The detached poll. PLACEHOLDER.
