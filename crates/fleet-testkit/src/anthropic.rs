//! The Messages API side (`POST /v1/messages`): a reply as the real API streams it
//! (`message_start`, `content_block_start`, a `ping`, deltas, `content_block_stop`,
//! `message_delta`, `message_stop`) or as one JSON message when `stream` is false.

use crate::answer::{split_chars, Answer};
use crate::encode::{apply_stream_fault, Encoding};
use crate::http_error::{insert_request_id, ApiError};
use crate::scenario::Fault;
use crate::sse::{self, Ending};
use crate::view::Protocol;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use fleet_protocol::{
    ApiErrorDetail, AssistantMessage, BlockDelta, ContentBlock, MessageDeltaBody, StreamEvent,
    Usage, UsageDelta,
};

/// The events of a streamed reply, in the API's order.
pub(crate) fn stream_events(
    answer: &Answer,
    delta_chars: usize,
    malformed_tool_json: bool,
) -> Vec<StreamEvent> {
    let mut start = AssistantMessage::empty(&answer.message_id, &answer.model);
    // The API announces provisional usage: full input figures, output not yet counted.
    start.usage = Usage {
        output_tokens: 1.min(answer.usage.output_tokens),
        ..answer.usage.clone()
    };
    let mut events = vec![StreamEvent::MessageStart { message: start }];
    if answer.blocks.is_empty() {
        events.push(StreamEvent::Ping);
    }
    for (index, block) in answer.blocks.iter().enumerate() {
        let (shell, deltas) = block_parts(block, delta_chars, malformed_tool_json);
        events.push(StreamEvent::ContentBlockStart {
            index,
            content_block: shell,
        });
        if index == 0 {
            events.push(StreamEvent::Ping);
        }
        events.extend(
            deltas
                .into_iter()
                .map(|delta| StreamEvent::ContentBlockDelta { index, delta }),
        );
        events.push(StreamEvent::ContentBlockStop { index });
    }
    events.push(StreamEvent::MessageDelta {
        delta: MessageDeltaBody {
            stop_reason: Some(answer.stop_reason.clone()),
            stop_sequence: None,
        },
        usage: UsageDelta {
            output_tokens: Some(answer.usage.output_tokens),
            ..UsageDelta::default()
        },
    });
    events.push(StreamEvent::MessageStop);
    events
}

/// A block's empty form for `content_block_start` and the deltas that fill it.
fn block_parts(
    block: &ContentBlock,
    delta_chars: usize,
    malformed: bool,
) -> (ContentBlock, Vec<BlockDelta>) {
    match block {
        ContentBlock::Text { text, .. } => (
            ContentBlock::text(""),
            split_chars(text, delta_chars)
                .into_iter()
                .map(|t| BlockDelta::TextDelta { text: t.to_owned() })
                .collect(),
        ),
        ContentBlock::Thinking {
            thinking,
            signature,
        } => {
            let mut deltas: Vec<BlockDelta> = split_chars(thinking, delta_chars)
                .into_iter()
                .map(|t| BlockDelta::ThinkingDelta {
                    thinking: t.to_owned(),
                })
                .collect();
            deltas.push(BlockDelta::SignatureDelta {
                signature: signature.clone(),
            });
            let shell = ContentBlock::Thinking {
                thinking: String::new(),
                signature: String::new(),
            };
            (shell, deltas)
        }
        ContentBlock::ToolUse {
            id, name, input, ..
        } => {
            let json = tool_input_json(input, malformed);
            let mut deltas = vec![BlockDelta::InputJsonDelta {
                partial_json: String::new(),
            }];
            deltas.extend(split_chars(&json, delta_chars).into_iter().map(|p| {
                BlockDelta::InputJsonDelta {
                    partial_json: p.to_owned(),
                }
            }));
            let shell = ContentBlock::tool_use(id.clone(), name.clone(), serde_json::json!({}));
            (shell, deltas)
        }
        // Redacted thinking (and anything else) arrives whole in its start event.
        other => (other.clone(), Vec::new()),
    }
}

/// A tool input as streamed: compact JSON, or one character short when it must be broken.
pub(crate) fn tool_input_json(input: &serde_json::Value, malformed: bool) -> String {
    let mut json = input.to_string();
    if malformed {
        json.pop();
    }
    json
}

fn frame(event: &StreamEvent) -> Bytes {
    sse::named_event(
        event.event_name(),
        &serde_json::to_string(event).unwrap_or_default(),
    )
}

/// The response for an answered request, with the rule's fault (other than a status fault,
/// which never reaches here) applied.
pub(crate) fn respond(
    answer: &Answer,
    fault: Option<&Fault>,
    stream: bool,
    enc: &Encoding,
) -> Response {
    if stream {
        let malformed = matches!(fault, Some(Fault::MalformedToolJson));
        let frames: Vec<Bytes> = stream_events(answer, enc.delta_chars, malformed)
            .iter()
            .map(frame)
            .collect();
        let (frames, ending) = apply_stream_fault(frames, fault, |error_type, message| {
            frame(&StreamEvent::Error {
                error: ApiErrorDetail {
                    error_type: error_type.to_owned(),
                    message: message.to_owned(),
                },
            })
        });
        return enc.sse_response(Protocol::Anthropic, frames, ending);
    }
    let message = AssistantMessage {
        content: answer.blocks.clone(),
        stop_reason: Some(answer.stop_reason.clone()),
        usage: answer.usage.clone(),
        ..AssistantMessage::empty(&answer.message_id, &answer.model)
    };
    let json = serde_json::to_vec(&message).unwrap_or_default();
    json_response(json, fault, Protocol::Anthropic, enc)
}

/// A whole-JSON reply, or the non-streaming form of a stream fault.
pub(crate) fn json_response(
    json: Vec<u8>,
    fault: Option<&Fault>,
    protocol: Protocol,
    enc: &Encoding,
) -> Response {
    let (body, ending) = match fault {
        Some(Fault::SseError {
            error_type,
            message,
            ..
        }) => {
            let mut e = ApiError::new(ApiError::status_for_type(error_type), message.clone());
            e.error_type = error_type.clone();
            return e.into_response(protocol, &enc.request_id);
        }
        Some(Fault::DropAfterEvents(_)) => {
            let half = Bytes::from(json).slice(..);
            let cut = half.len() / 2;
            (vec![half.slice(..cut)], Ending::Abort)
        }
        Some(Fault::ResetAfterEvents(_)) => {
            let half = Bytes::from(json).slice(..);
            let cut = half.len() / 2;
            (vec![half.slice(..cut)], Ending::Reset(None))
        }
        // The stall (set in the pacing) falls between the two halves.
        Some(Fault::Stall { .. }) => {
            let all = Bytes::from(json);
            let cut = all.len() / 2;
            (vec![all.slice(..cut), all.slice(cut..)], Ending::Complete)
        }
        _ => (vec![Bytes::from(json)], Ending::Complete),
    };
    let mut enc = enc.clone();
    if let Some(stall) = &mut enc.pacing.stall {
        stall.after_frames = 1;
    }
    let mut resp = (StatusCode::OK, enc.body(body, ending)).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    insert_request_id(headers, protocol, &enc.request_id);
    resp
}
