//! A small fuzzy scorer for paths and command names: the query's characters must appear in
//! order (ignoring case); matches count for more when they start a word (after `/`, `_`, `-`,
//! `.`, a blank, or at a lower→upper case change), run on from the previous match, or fall in
//! the file name rather than its folders. Callers break ties by length, so `src/lib.rs` beats
//! `src/lib.rs.orig`.

const MATCH: i32 = 16;
const BOUNDARY: i32 = 10;
const CONSECUTIVE: i32 = 12;
const BASENAME: i32 = 8;
/// Every skipped character between the first and last match costs this, up to [`MAX_GAP`].
const GAP: i32 = 1;
const MAX_GAP: i32 = 40;

fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

fn is_separator(c: char) -> bool {
    matches!(c, '/' | '\\' | '_' | '-' | '.' | ' ' | ':')
}

/// The score of `candidate` for `query`, `None` when it does not match; an empty query
/// matches everything with 0.
pub fn score(query: &str, candidate: &str) -> Option<i32> {
    let query: Vec<char> = query.chars().map(fold).collect();
    if query.is_empty() {
        return Some(0);
    }
    let chars: Vec<char> = candidate.chars().collect();
    let base = chars
        .iter()
        .rposition(|&c| c == '/' || c == '\\')
        .map_or(0, |i| i + 1);
    let from_start = greedy(&query, &chars, 0, base)?;
    let in_base = if base > 0 {
        greedy(&query, &chars, base, base)
    } else {
        None
    };
    Some(in_base.map_or(from_start, |b| b.max(from_start)))
}

/// Matches `query` left to right from `from`, taking each character's first occurrence.
fn greedy(query: &[char], chars: &[char], from: usize, base: usize) -> Option<i32> {
    let mut total = 0;
    let mut at = from;
    let mut previous: Option<usize> = None;
    let mut first = None;
    for &q in query {
        let found = (at..chars.len()).find(|&i| fold(chars[i]) == q)?;
        total += MATCH;
        if is_boundary(chars, found) {
            total += BOUNDARY;
        }
        if previous.is_some_and(|p| p + 1 == found) {
            total += CONSECUTIVE;
        }
        if found >= base {
            total += BASENAME;
        }
        first.get_or_insert(found);
        previous = Some(found);
        at = found + 1;
    }
    let span = previous.unwrap_or(0) + 1 - first.unwrap_or(0);
    let gaps = i32::try_from(span - query.len()).unwrap_or(MAX_GAP);
    Some(total - (gaps * GAP).min(MAX_GAP))
}

fn is_boundary(chars: &[char], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let (before, here) = (chars[i - 1], chars[i]);
    is_separator(before) || (before.is_lowercase() && here.is_uppercase())
}

#[cfg(test)]
mod tests {
    use super::score;

    #[test]
    fn subsequence_required() {
        assert!(score("lbrs", "src/lib.rs").is_some());
        assert!(score("srl", "src/lib.rs").is_some());
        assert_eq!(score("xyz", "src/lib.rs"), None);
        assert_eq!(score("rsl", "src/lib.rs"), None);
    }

    #[test]
    fn basename_and_boundaries_win() {
        let lib = score("lib", "src/lib.rs").expect("match");
        let scattered = score("lib", "src/long/index/base.rs").expect("match");
        assert!(lib > scattered, "{lib} vs {scattered}");
        let name = score("main", "src/main.rs").expect("match");
        let folder = score("main", "main/src/other.rs").expect("match");
        assert!(name > folder, "{name} vs {folder}");
    }

    #[test]
    fn case_is_ignored() {
        assert_eq!(score("README", "readme.md"), score("readme", "readme.md"));
    }
}
