//! Which slash commands fit what follows the `/`: names starting with it first (an exact
//! name at the top, then in the listed order), then fuzzy matches, best first.

use super::fuzzy;
use crate::input::commands::CommandInfo;

pub fn matches(commands: &[CommandInfo], query: &str, limit: usize) -> Vec<CommandInfo> {
    let query = query.to_lowercase();
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    let mut fuzzy_hits = Vec::new();
    for command in commands {
        let name = command.name.to_lowercase();
        if name == query {
            exact.push(command);
        } else if name.starts_with(&query) {
            prefix.push(command);
        } else if let Some(score) = fuzzy::score(&query, &name) {
            fuzzy_hits.push((score, command));
        }
    }
    fuzzy_hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.len().cmp(&b.1.name.len())));
    exact
        .into_iter()
        .chain(prefix)
        .chain(fuzzy_hits.into_iter().map(|(_, c)| c))
        .take(limit)
        .cloned()
        .collect()
}
