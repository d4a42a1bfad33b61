//! Whether a prompt asks for Ultraplan. PLACEHOLDER.

/// True when `prompt` holds the word `ultraplan` outside quotes and backticks, paths,
/// identifiers and flags, file names, and not followed by `?`.
pub fn triggers(_prompt: &str) -> bool {
    false
}
