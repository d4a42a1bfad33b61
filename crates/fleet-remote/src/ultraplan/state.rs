//! The Ultraplan lifecycle. PLACEHOLDER.
