//! The request's head — model, limits, system prompt, `stream: true` — serialized, and shared
//! between the requests that send the same one.
//!
//! A request is built before it waits for one of the process's model places (see
//! `transport::in_flight`), and sibling subagents send the same head, system prompt and all.
//! In a fan-out of thousands most agents are waiting, and each held its own copy of the same
//! few kilobytes; now they hold one.

use fleet_protocol::{MessagesRequest, SystemPrompt};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// How many distinct heads are remembered (one per agent type and model at work); the
/// oldest goes first.
const KEPT: usize = 16;

static CACHE: Mutex<Vec<(u64, Weak<[u8]>)>> = Mutex::new(Vec::new());

/// The request's fields other than its tools and messages, as JSON without the closing
/// brace, with `system` in place of the request's own system prompt. Serialized the way the
/// request type serializes them, so a field added there is sent here too.
pub(super) fn head_json(
    request: &MessagesRequest,
    system: Option<SystemPrompt>,
) -> Result<Arc<[u8]>, serde_json::Error> {
    let head = MessagesRequest {
        messages: Default::default(),
        tools: Default::default(),
        system,
        stream: true,
        ..request.clone()
    };
    let mut value = serde_json::to_value(&head)?;
    if let Some(fields) = value.as_object_mut() {
        fields.remove("messages");
        fields.remove("tools");
    }
    let mut out = serde_json::to_vec(&value)?;
    // `{"model":…}` always has a field, so the parts that follow can open with a comma.
    if out.pop() != Some(b'}') {
        return Err(<serde_json::Error as serde::ser::Error>::custom(
            "the request did not serialize as an object",
        ));
    }
    Ok(shared(out))
}

/// `bytes`, or an equal head some request in flight already holds.
fn shared(bytes: Vec<u8>) -> Arc<[u8]> {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    let key = hasher.finish();
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let found = cache
        .iter()
        .filter(|(k, _)| *k == key)
        .filter_map(|(_, weak)| weak.upgrade())
        .find(|head| **head == *bytes);
    if let Some(head) = found {
        return head;
    }
    let head: Arc<[u8]> = bytes.into();
    cache.retain(|(_, weak)| weak.strong_count() > 0);
    if cache.len() >= KEPT {
        cache.remove(0);
    }
    cache.push((key, Arc::downgrade(&head)));
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_protocol::{Message, SystemBlock};

    fn request(system: &str) -> MessagesRequest {
        let mut r = MessagesRequest::new("m", 100, vec![Message::user_text("hi")]);
        r.system = Some(SystemPrompt::Blocks(vec![SystemBlock::text(system)]));
        r
    }

    #[test]
    fn equal_heads_are_one_allocation_and_different_ones_are_not() {
        let a = request("you are a subagent");
        let first = head_json(&a, a.system.clone()).expect("head");
        let second = head_json(&a, a.system.clone()).expect("head");
        assert!(Arc::ptr_eq(&first, &second), "siblings share one head");
        let b = request("you plan");
        let other = head_json(&b, b.system.clone()).expect("head");
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(*first, *other);
    }

    #[test]
    fn a_head_nobody_holds_is_not_kept() {
        let a = request("a prompt used once");
        let head = head_json(&a, a.system.clone()).expect("head");
        let weak = Arc::downgrade(&head);
        drop(head);
        assert!(weak.upgrade().is_none(), "the cache keeps no head alive");
    }
}
