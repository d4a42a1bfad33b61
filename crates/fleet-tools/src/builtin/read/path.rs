//! Checking the path a file tool was given, and the errors that help the model find the file it
//! meant: a relative path gets its absolute form, a missing file gets the names nearest to it.

use super::relative;
pub(crate) use super::relative::Target;
use crate::ToolError;
use std::path::{Path, PathBuf};

/// Entries of a folder compared when looking for similar names; enough for any hand-made
/// folder, and a bound on the work in a huge generated one.
const MAX_ENTRIES_COMPARED: usize = 5_000;
const MAX_SUGGESTIONS: usize = 3;
/// Names longer than this are not compared by edit distance (quadratic cost).
const MAX_NAME_CHARS: usize = 128;

/// `file_path` as a path, if it is absolute. The file tools insist on absolute paths so that a
/// path means the same thing in every turn, whatever the agent's cwd; a relative one is
/// refused with an absolute path that exists as `target` asks (see [`relative`]).
pub(crate) fn require_absolute(
    file_path: &str,
    cwd: &Path,
    target: Target,
) -> Result<PathBuf, ToolError> {
    if file_path.trim().is_empty() {
        return Err(ToolError::bad_value(
            "file_path",
            "file_path is empty. Pass the absolute path of the file.",
        ));
    }
    let path = Path::new(file_path);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Err(relative::relative_path_error(file_path, cwd, target))
}

/// The error for a path that names a folder.
pub(crate) fn directory(path: &Path) -> ToolError {
    ToolError::unsupported(
        path,
        format!(
            "{} is a directory, not a file. To list it, use Glob or Bash `ls`.",
            path.display()
        ),
    )
}

/// The error for a path that names neither a file nor a folder (a pipe, socket or device).
pub(crate) fn not_regular(path: &Path) -> ToolError {
    ToolError::unsupported(
        path,
        format!(
        "{} is not a regular file (it is a device, pipe or socket); the file tools only handle \
         regular files.",
        path.display()
    ),
    )
}

/// The error for a file whose reads would wait for data that may never come (`/proc/kmsg` and
/// the like): refused rather than letting the agent hang on it.
pub(crate) fn would_block(path: &Path) -> ToolError {
    ToolError::unsupported(
        path,
        format!(
            "{} cannot be read without waiting for data that may never come (it behaves like a \
         pipe or device), so the file tools do not read it. Use Bash with a timeout if you \
         really need it.",
            path.display()
        ),
    )
}

/// The error for a file that does not exist, naming the files the model most likely meant.
pub(crate) fn missing(given: &Path, resolved: &Path, cwd: &Path) -> ToolError {
    let mut message = format!("File does not exist: {}.", given.display());
    if let Some(candidate) = cwd_relative(given, cwd) {
        message.push_str(&format!(" Did you mean {}?", candidate.display()));
    }
    match resolved.parent() {
        Some(dir) if dir.is_dir() => {
            let name = resolved
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let similar = similar_names(dir, &name);
            if !similar.is_empty() {
                let list: Vec<String> = similar
                    .iter()
                    .map(|n| dir.join(n).display().to_string())
                    .collect();
                message.push_str(&format!(" Files with similar names: {}.", list.join(", ")));
            }
        }
        Some(dir) => message.push_str(&format!(
            " Its folder {} does not exist either.",
            dir.display()
        )),
        None => {}
    }
    message.push_str(&format!(" The working directory is {}.", cwd.display()));
    ToolError::not_found(given, message)
}

/// `cwd/<given without its leading />`, when that exists: the model wrote a project-relative
/// path with a leading slash.
fn cwd_relative(given: &Path, cwd: &Path) -> Option<PathBuf> {
    let relative = given.strip_prefix("/").ok()?;
    if relative.as_os_str().is_empty() {
        return None;
    }
    let candidate = cwd.join(relative);
    (candidate != given && candidate.exists()).then_some(candidate)
}

/// Up to `MAX_SUGGESTIONS` names in `dir` that look like `wanted`: the same stem first, then
/// the smallest edit distance, then a long common prefix.
fn similar_names(dir: &Path, wanted: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<((u8, usize), String)> = entries
        .filter_map(Result::ok)
        .take(MAX_ENTRIES_COMPARED)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            score(&name.to_lowercase(), &wanted_lower).map(|key| (key, name))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name)
        .collect()
}

/// A sort key for how near `candidate` is to `wanted` (both lower-cased), or `None` when it is
/// not near at all.
fn score(candidate: &str, wanted: &str) -> Option<(u8, usize)> {
    let distance = edit_distance(candidate, wanted);
    if stem(candidate) == stem(wanted) {
        return Some((0, distance));
    }
    let wanted_chars = wanted.chars().count();
    if distance <= (wanted_chars / 3).max(1) {
        return Some((1, distance));
    }
    let prefix = candidate
        .chars()
        .zip(wanted.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let wanted_stem_chars = stem(wanted).chars().count();
    if prefix >= (wanted_stem_chars / 2).max(3) {
        return Some((2, distance));
    }
    None
}

/// The name without its last extension (`main.rs` → `main`, `.env` → `.env`).
fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(0) | None => name,
        Some(dot) => &name[..dot],
    }
}

/// Levenshtein distance by characters; `usize::MAX` for names too long to compare.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() > MAX_NAME_CHARS || b.len() > MAX_NAME_CHARS {
        return usize::MAX;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// Why a file is refused before its bytes are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinaryKind {
    Image,
    Other,
}

/// Whether the extension of `path` names a format that is never text.
pub(crate) fn binary_kind(path: &Path) -> Option<BinaryKind> {
    const IMAGES: &[&str] = &[
        "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tif", "tiff", "heic", "heif", "avif",
        "psd",
    ];
    const OTHERS: &[&str] = &[
        "7z", "a", "avi", "bin", "bz2", "class", "db", "deb", "dll", "dmg", "doc", "docx", "dylib",
        "eot", "exe", "flac", "gz", "iso", "jar", "lib", "m4a", "mkv", "mov", "mp3", "mp4", "o",
        "obj", "odt", "ogg", "otf", "pdf", "ppt", "pptx", "pyc", "pyo", "rar", "rlib", "rpm", "so",
        "sqlite", "sqlite3", "tar", "tgz", "ttf", "war", "wasm", "wav", "webm", "woff", "woff2",
        "xls", "xlsx", "xz", "zip", "zst",
    ];
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    if IMAGES.contains(&ext.as_str()) {
        Some(BinaryKind::Image)
    } else if OTHERS.contains(&ext.as_str()) {
        Some(BinaryKind::Other)
    } else {
        None
    }
}

/// The error for a file Read will not show.
pub(crate) fn binary(path: &Path, kind: Option<BinaryKind>) -> ToolError {
    let shown = path.display();
    let message = match kind {
        Some(BinaryKind::Image) => format!(
            "{shown} is an image. Read returns text only and cannot show images; use Bash \
             (`file`, `identify`) to learn about it."
        ),
        Some(BinaryKind::Other) => format!(
            "{shown} is a binary file, judging by its extension. Read shows text files only; \
             use Bash with a suitable tool (`file`, `unzip -l`, `xxd | head`) to inspect it."
        ),
        None => format!(
            "{shown} is a binary file (it contains NUL bytes). Read shows text files only; use \
             Bash with a suitable tool (`file`, `xxd | head`, `strings`) to inspect it."
        ),
    };
    ToolError::unsupported(path, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_changes() {
        assert_eq!(edit_distance("main.rs", "main.rs"), 0);
        assert_eq!(edit_distance("mian.rs", "main.rs"), 2);
        assert_eq!(edit_distance("main.r", "main.rs"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn near_names_rank_before_far_ones() {
        assert_eq!(score("config.toml", "config.yaml"), Some((0, 2)));
        assert_eq!(score("lib.rs", "lin.rs"), Some((1, 1)));
        assert_eq!(
            score("configuration.yml", "config.yaml").map(|s| s.0),
            Some(2)
        );
        assert_eq!(score("readme.md", "main.rs"), None);
    }
}
