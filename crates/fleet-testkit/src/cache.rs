//! The prompt-cache simulation: makes prompt-cache reuse measurable offline.
//!
//! A request is read as the API reads it: tools, then system blocks, then each message's
//! blocks. At every block boundary we hash the prefix so far (model name plus the canonical
//! JSON of every block up to there, with `cache_control` removed so that moving a breakpoint
//! does not change what is hashed). Breakpoint prefixes are written to the store; a later
//! request reads the longest stored prefix found at one of its breakpoints or up to
//! [`LOOKBACK_BLOCKS`] block boundaries before one (the API looks back the same way, which is
//! why a breakpoint that moves forward each turn still hits the previous turn's entry).
//!
//! Tokens are estimated as canonical bytes / 4, rounded up.

use crate::scenario::CacheConfig;
use fleet_protocol::{
    CacheControl, ContentBlock, MessageContent, MessagesRequest, SystemBlock, SystemPrompt,
    ToolResultContent,
};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// How many block boundaries before a breakpoint are also checked for a cache hit.
pub(crate) const LOOKBACK_BLOCKS: usize = 20;

/// The API's limit on `cache_control` blocks per request.
pub(crate) const MAX_BREAKPOINTS: usize = 4;

type Hash = [u8; 32];

/// One block boundary: the hash of everything up to it and its estimated token count.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Boundary {
    hash: Hash,
    tokens: u64,
}

/// A request reduced to what the cache needs.
#[derive(Debug, Clone)]
pub(crate) struct Prefixes {
    boundaries: Vec<Boundary>,
    /// Indexes into `boundaries` of the blocks that carry `cache_control`, in order.
    breakpoints: Vec<usize>,
    pub total_tokens: u64,
}

/// The three input figures of a reply's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct InputUsage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

pub(crate) fn tokens_for_bytes(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// Walks a request's blocks, counting canonical bytes and, when `hasher` is set, recording
/// the hash at every block boundary.
struct PrefixBuilder {
    hasher: Option<Sha256>,
    bytes: usize,
    /// Reused for every block, so a request costs no allocation per block.
    buf: Vec<u8>,
    out: Prefixes,
}

impl PrefixBuilder {
    /// Feeds bytes that belong to the prefix but end no block (a message's role header).
    fn feed<T: Serialize>(&mut self, value: &T) {
        self.buf.clear();
        if serde_json::to_writer(&mut self.buf, value).is_err() {
            self.buf.clear();
        }
        if let Some(h) = &mut self.hasher {
            h.update(&self.buf);
            h.update(b"\n");
        }
        self.bytes += self.buf.len();
    }

    /// Feeds one block and records the boundary after it.
    fn block<T: Serialize>(&mut self, value: &T, breakpoint: bool) {
        self.feed(value);
        let Some(h) = &self.hasher else {
            return;
        };
        if breakpoint {
            self.out.breakpoints.push(self.out.boundaries.len());
        }
        self.out.boundaries.push(Boundary {
            hash: h.clone().finalize().into(),
            tokens: tokens_for_bytes(self.bytes),
        });
    }
}

impl PrefixBuilder {
    /// Feeds `value` as it is hashed: without breakpoints. Only a value that `carries` one is
    /// copied, for `strip` to remove them; `strip` says whether the value's own was one.
    fn unmarked_block<T: Serialize + Clone>(
        &mut self,
        value: &T,
        carries: bool,
        strip: impl FnOnce(&mut T) -> bool,
    ) {
        if carries {
            let mut copy = value.clone();
            let breakpoint = strip(&mut copy);
            self.block(&copy, breakpoint);
        } else {
            self.block(value, false);
        }
    }
}

/// Hashes every block boundary of `req`.
pub(crate) fn prefixes(req: &MessagesRequest) -> Prefixes {
    walk(req, true)
}

/// The request's input tokens alone: what [`prefixes`] counts, without hashing anything.
pub(crate) fn total_tokens(req: &MessagesRequest) -> u64 {
    walk(req, false).total_tokens
}

/// The blocks are hashed as sent but for their breakpoints; a request has at most four, so
/// few blocks are copied to strip them.
fn walk(req: &MessagesRequest, hashed: bool) -> Prefixes {
    let hasher = hashed.then(|| {
        let mut h = Sha256::new();
        h.update(req.model.as_bytes());
        h.update(b"\n");
        h
    });
    let mut b = PrefixBuilder {
        hasher,
        bytes: 0,
        buf: Vec::new(),
        out: Prefixes {
            boundaries: Vec::new(),
            breakpoints: Vec::new(),
            total_tokens: 0,
        },
    };
    for tool in &req.tools {
        b.unmarked_block(tool, tool.cache_control.is_some(), |t| {
            t.cache_control.take().is_some()
        });
    }
    match &req.system {
        None => {}
        Some(SystemPrompt::Text(t)) => b.block(&SystemBlock::text(t.clone()), false),
        Some(SystemPrompt::Blocks(blocks)) => {
            for block in blocks {
                b.unmarked_block(block, block.cache_control.is_some(), |b| {
                    b.cache_control.take().is_some()
                });
            }
        }
    }
    for message in &req.messages {
        b.feed(&serde_json::json!({ "role": message.role }));
        match &message.content {
            MessageContent::Text(t) => b.block(&ContentBlock::text(t.clone()), false),
            MessageContent::Blocks(blocks) => {
                for block in blocks {
                    b.unmarked_block(block, carries_cache_control(block), |b| {
                        strip_cache_control(b).is_some()
                    });
                }
            }
        }
    }
    b.out.total_tokens = tokens_for_bytes(b.bytes).max(1);
    b.out
}

/// Whether the block, or a block inside its tool result, carries a breakpoint.
fn carries_cache_control(block: &ContentBlock) -> bool {
    if block.cache_control().is_some() {
        return true;
    }
    matches!(
        block,
        ContentBlock::ToolResult {
            content: Some(ToolResultContent::Blocks(inner)),
            ..
        } if inner.iter().any(carries_cache_control)
    )
}

/// Removes the block's breakpoint (and any inside a tool result), returning the block's own.
fn strip_cache_control(block: &mut ContentBlock) -> Option<CacheControl> {
    if let ContentBlock::ToolResult {
        content: Some(ToolResultContent::Blocks(inner)),
        ..
    } = block
    {
        for b in inner.iter_mut() {
            strip_cache_control(b);
        }
    }
    block.cache_control_mut().and_then(Option::take)
}

/// How many `cache_control` markers a request carries (the API allows four).
pub(crate) fn count_breakpoints(req: &MessagesRequest) -> usize {
    let tools = req
        .tools
        .iter()
        .filter(|t| t.cache_control.is_some())
        .count();
    let system = match &req.system {
        Some(SystemPrompt::Blocks(blocks)) => {
            blocks.iter().filter(|b| b.cache_control.is_some()).count()
        }
        _ => 0,
    };
    let messages: usize = req
        .messages
        .iter()
        .map(|m| {
            m.blocks()
                .into_iter()
                .filter_map(|mut b| b.cache_control_mut().map(|c| c.is_some()))
                .filter(|marked| *marked)
                .count()
        })
        .sum();
    tools + system + messages
}

/// Seen breakpoint prefixes and their token counts, for one server.
#[derive(Debug, Default)]
pub(crate) struct PromptCache {
    seen: HashMap<Hash, u64>,
}

impl PromptCache {
    /// How many prefixes are stored.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Splits a request's input tokens into fresh, cache-written and cache-read, and writes
    /// its breakpoint prefixes to the store.
    pub fn account(&mut self, p: &Prefixes, cfg: &CacheConfig) -> InputUsage {
        let uncached = InputUsage {
            input_tokens: p.total_tokens,
            ..InputUsage::default()
        };
        if !cfg.enabled {
            return uncached;
        }
        let eligible: Vec<usize> = p
            .breakpoints
            .iter()
            .copied()
            .filter(|&i| p.boundaries[i].tokens >= cfg.min_tokens)
            .collect();
        let Some(&last) = eligible.last() else {
            return uncached;
        };
        let read = eligible
            .iter()
            .flat_map(|&bp| (bp.saturating_sub(LOOKBACK_BLOCKS)..=bp).rev())
            .filter_map(|i| {
                let b = &p.boundaries[i];
                self.seen.get(&b.hash).map(|_| b.tokens)
            })
            .max()
            .unwrap_or(0);
        let cached_end = p.boundaries[last].tokens;
        for &i in &eligible {
            let b = &p.boundaries[i];
            self.seen.insert(b.hash, b.tokens);
        }
        InputUsage {
            input_tokens: p.total_tokens.saturating_sub(cached_end),
            cache_creation_input_tokens: cached_end.saturating_sub(read),
            cache_read_input_tokens: read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_protocol::{Message, Role};

    fn block(text: &str, bp: bool) -> ContentBlock {
        ContentBlock::Text {
            text: text.into(),
            citations: None,
            cache_control: bp.then(CacheControl::ephemeral),
        }
    }

    fn request(blocks: Vec<(ContentBlock, Role)>) -> MessagesRequest {
        let messages: Vec<Message> = blocks
            .into_iter()
            .map(|(b, role)| Message::with_blocks(role, vec![b]))
            .collect();
        MessagesRequest::new("m", 100, messages)
    }

    #[test]
    fn breakpoint_position_does_not_change_hashes() {
        let a = request(vec![
            (block("one", true), Role::User),
            (block("two", false), Role::Assistant),
        ]);
        let b = request(vec![
            (block("one", false), Role::User),
            (block("two", true), Role::Assistant),
        ]);
        let (pa, pb) = (prefixes(&a), prefixes(&b));
        assert_eq!(pa.boundaries, pb.boundaries);
        assert_eq!(pa.breakpoints, vec![0]);
        assert_eq!(pb.breakpoints, vec![1]);
    }

    #[test]
    fn the_token_count_alone_is_the_hashed_walks_count() {
        let mut req = request(vec![
            (block("marked prompt", true), Role::User),
            (block("an answer", false), Role::Assistant),
            (block("plain", false), Role::User),
        ]);
        req.system = Some(SystemPrompt::Text("be brief".into()));
        let mut tool: fleet_protocol::ToolDefinition = serde_json::from_value(serde_json::json!({
            "name": "Read", "description": "reads", "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"}
        }))
        .unwrap_or_else(|e| panic!("tool: {e}"));
        req.tools = vec![tool.clone()].into();
        let marked = prefixes(&req);
        assert_eq!(total_tokens(&req), marked.total_tokens);
        assert_eq!(marked.breakpoints.len(), 2, "the tool and the first prompt");
        // A breakpoint is not part of what is counted or hashed.
        tool.cache_control = None;
        req.tools = vec![tool].into();
        assert_eq!(prefixes(&req).boundaries, marked.boundaries);
    }

    #[test]
    fn identical_prefix_is_read_and_tail_is_created() {
        let cfg = CacheConfig::default();
        let mut cache = PromptCache::default();
        let first = prefixes(&request(vec![(
            block("long shared prefix text", true),
            Role::User,
        )]));
        let u1 = cache.account(&first, &cfg);
        assert_eq!(u1.cache_read_input_tokens, 0);
        assert!(u1.cache_creation_input_tokens > 0);
        let u2 = cache.account(&first, &cfg);
        assert_eq!(u2.cache_read_input_tokens, u1.cache_creation_input_tokens);
        assert_eq!(u2.cache_creation_input_tokens, 0);
        assert_eq!(u2.input_tokens, u1.input_tokens);
    }

    #[test]
    fn lookback_finds_an_earlier_unmarked_boundary() {
        let cfg = CacheConfig::default();
        let mut cache = PromptCache::default();
        let turn1 = request(vec![(block("question", true), Role::User)]);
        let u1 = cache.account(&prefixes(&turn1), &cfg);
        let turn2 = request(vec![
            (block("question", false), Role::User),
            (block("answer", false), Role::Assistant),
            (block("follow-up", true), Role::User),
        ]);
        let u2 = cache.account(&prefixes(&turn2), &cfg);
        assert_eq!(u2.cache_read_input_tokens, u1.cache_creation_input_tokens);
        assert!(u2.cache_creation_input_tokens > 0);
    }

    #[test]
    fn short_prefixes_are_not_cached() {
        let cfg = CacheConfig {
            enabled: true,
            min_tokens: 1_000,
        };
        let mut cache = PromptCache::default();
        let p = prefixes(&request(vec![(block("short", true), Role::User)]));
        let u = cache.account(&p, &cfg);
        assert_eq!(
            u,
            InputUsage {
                input_tokens: p.total_tokens,
                ..InputUsage::default()
            }
        );
    }
}
