//! A rule's reply made concrete for one request: ids and signatures filled in, stop reason
//! decided, usage counted. Both wire encoders start from this, so the two protocols always
//! carry the same content.

use crate::cache::{tokens_for_bytes, InputUsage};
use crate::scenario::{ReplyBlock, Rule};
use crate::view::Protocol;
use fleet_protocol::{ContentBlock, StopReason, Usage};
use sha2::{Digest, Sha256};

/// Prefix of the thinking signatures the server makes up; blocks carrying one are checked
/// when they come back, the way the API checks its own signatures.
const SIGNATURE_PREFIX: &str = "fakesig_";

#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub message_id: String,
    pub model: String,
    pub blocks: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    /// Input figures plus output tokens; cache fields always set.
    pub usage: Usage,
}

fn hex_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
        h.update(b"\0");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The signature the server gives a thinking text when the scenario scripts none.
pub(crate) fn generated_signature(thinking: &str) -> String {
    format!(
        "{SIGNATURE_PREFIX}{}",
        hex_digest(&[b"fleet-fake-signature", thinking.as_bytes()])
    )
}

/// A signature the server made must still match its thinking; scripted signatures (any other
/// form) are taken on trust.
pub(crate) fn is_generated_signature_valid(thinking: &str, signature: &str) -> bool {
    if signature.is_empty() {
        return false;
    }
    !signature.starts_with(SIGNATURE_PREFIX) || signature == generated_signature(thinking)
}

/// A stable id for request `seq`'s item `index`: deterministic so that logs and snapshots
/// do not change between runs.
pub(crate) fn stable_id(prefix: &str, seq: u64, index: usize) -> String {
    let digest = hex_digest(&[prefix.as_bytes(), &seq.to_le_bytes(), &index.to_le_bytes()]);
    format!("{prefix}{}", &digest[..24])
}

impl Answer {
    pub fn new(
        rule: &Rule,
        protocol: Protocol,
        seq: u64,
        model: String,
        input: InputUsage,
    ) -> Self {
        let tool_prefix = match protocol {
            Protocol::Anthropic => "toolu_",
            Protocol::OpenAi => "call_",
        };
        let mut output_bytes = 0usize;
        let blocks: Vec<ContentBlock> = rule
            .respond
            .iter()
            .enumerate()
            .map(|(i, block)| match block {
                ReplyBlock::Text(text) => {
                    output_bytes += text.len();
                    ContentBlock::text(text.clone())
                }
                ReplyBlock::Thinking {
                    thinking,
                    signature,
                } => {
                    output_bytes += thinking.len();
                    ContentBlock::Thinking {
                        thinking: thinking.clone(),
                        signature: signature
                            .clone()
                            .unwrap_or_else(|| generated_signature(thinking)),
                    }
                }
                ReplyBlock::RedactedThinking(data) => {
                    output_bytes += data.len();
                    ContentBlock::RedactedThinking { data: data.clone() }
                }
                ReplyBlock::ToolUse { id, name, input } => {
                    output_bytes += name.len() + input.to_string().len();
                    let id = id.clone().unwrap_or_else(|| stable_id(tool_prefix, seq, i));
                    ContentBlock::tool_use(id, name.clone(), input.clone())
                }
            })
            .collect();
        let stop_reason = rule.stop_reason.clone().unwrap_or(if rule.has_tool_use() {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        let o = &rule.usage;
        let usage = Usage {
            unreported: false,
            input_tokens: o.input_tokens.unwrap_or(input.input_tokens),
            cache_creation_input_tokens: Some(
                o.cache_creation_input_tokens
                    .unwrap_or(input.cache_creation_input_tokens),
            ),
            cache_read_input_tokens: Some(
                o.cache_read_input_tokens
                    .unwrap_or(input.cache_read_input_tokens),
            ),
            output_tokens: o
                .output_tokens
                .unwrap_or(tokens_for_bytes(output_bytes).max(1)),
        };
        let id_prefix = match protocol {
            Protocol::Anthropic => "msg_",
            Protocol::OpenAi => "chatcmpl-",
        };
        Self {
            message_id: stable_id(id_prefix, seq, usize::MAX),
            model,
            blocks,
            stop_reason,
            usage,
        }
    }
}

/// Splits `s` into pieces of at most `chars` characters, never inside a character.
pub(crate) fn split_chars(s: &str, chars: usize) -> Vec<&str> {
    let chars = chars.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    for (count, (i, _)) in s.char_indices().enumerate() {
        if count > 0 && count % chars == 0 {
            out.push(&s[start..i]);
            start = i;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_characters_whole() {
        assert_eq!(split_chars("héllo wörld", 4), vec!["héll", "o wö", "rld"]);
        assert!(split_chars("", 4).is_empty());
    }

    #[test]
    fn generated_signatures_are_checked_and_scripted_ones_trusted() {
        let sig = generated_signature("deep thought");
        assert!(is_generated_signature_valid("deep thought", &sig));
        assert!(!is_generated_signature_valid("altered thought", &sig));
        assert!(is_generated_signature_valid(
            "anything",
            "scripted-signature"
        ));
        assert!(!is_generated_signature_valid("anything", ""));
    }
}
