//! The tools part of a request body, serialized once per tool list instead of twice per
//! request.
//!
//! All agents of one type share one tool list (the subagent pool hands siblings the same
//! definitions), and every request writes that list twice: once to count the body's length,
//! once to send it. With thousands of agents asking at once, writing the same schemas over and
//! over was a tenth of fleet's CPU. The bytes are kept per list, under a handle that does not
//! keep the list alive, so a list that changes or goes away is simply not found again.

use fleet_protocol::{CacheControl, Shared, ToolDefinition};
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// How many lists are remembered: one per agent type at work, in practice a handful. The
/// oldest goes first.
const KEPT: usize = 16;

struct Entry {
    list: Weak<Vec<ToolDefinition>>,
    marked_last: bool,
    json: Arc<[u8]>,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// `,"tools":[…]` for a non-empty `tools`, the last tool carrying a breakpoint when
/// `marked_last` (made while written: no request holds a marked copy of a schema).
pub(super) fn tools_json(
    tools: &Shared<ToolDefinition>,
    marked_last: bool,
) -> Result<Arc<[u8]>, serde_json::Error> {
    let found = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|e| e.marked_last == marked_last && tools.is(&e.list))
        .map(|e| Arc::clone(&e.json));
    if let Some(json) = found {
        return Ok(json);
    }
    let json: Arc<[u8]> = write(tools, marked_last)?.into();
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache.retain(|e| e.list.strong_count() > 0);
    if cache.len() >= KEPT {
        cache.remove(0);
    }
    cache.push(Entry {
        list: tools.downgrade(),
        marked_last,
        json: Arc::clone(&json),
    });
    Ok(json)
}

fn write(tools: &[ToolDefinition], marked_last: bool) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        out.write_all(if i == 0 { b",\"tools\":[" } else { b"," })
            .map_err(serde_json::Error::io)?;
        if marked_last && i + 1 == tools.len() {
            let mut marked = tool.clone();
            marked.cache_control = Some(CacheControl::ephemeral());
            serde_json::to_writer(&mut out, &marked)?;
        } else {
            serde_json::to_writer(&mut out, tool)?;
        }
    }
    if !tools.is_empty() {
        out.push(b']');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> ToolDefinition {
        serde_json::from_value(serde_json::json!({
            "name": name, "description": "d", "input_schema": {"type": "object"}
        }))
        .unwrap_or_else(|e| panic!("tool: {e}"))
    }

    #[test]
    fn one_list_is_written_once_and_its_changes_are_seen() {
        let mut list: Shared<ToolDefinition> = vec![tool("Read"), tool("Grep")].into();
        let first = tools_json(&list, false).expect("json");
        let again = tools_json(&list.clone(), false).expect("json");
        assert!(
            Arc::ptr_eq(&first, &again),
            "the same list is not written again"
        );
        let text = std::str::from_utf8(&first).expect("utf-8");
        assert!(text.starts_with(",\"tools\":[{\"name\":\"Read\""), "{text}");
        assert!(!text.contains("cache_control"), "{text}");

        let marked = tools_json(&list, true).expect("json");
        let marked = std::str::from_utf8(&marked).expect("utf-8");
        assert_eq!(marked.matches("cache_control").count(), 1, "{marked}");
        assert!(
            marked.ends_with("\"cache_control\":{\"type\":\"ephemeral\"}}]"),
            "{marked}"
        );

        list.push(tool("Write"));
        let changed = tools_json(&list, false).expect("json");
        assert!(std::str::from_utf8(&changed)
            .expect("utf-8")
            .contains("Write"));
        let equal: Shared<ToolDefinition> = list.to_vec().into();
        assert_eq!(
            *tools_json(&equal, false).expect("json"),
            *changed,
            "equal lists, equal bytes"
        );
    }
}
