//! What must outlive a process.
