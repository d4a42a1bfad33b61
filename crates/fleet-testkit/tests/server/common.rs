//! Helpers for talking to the fake server the way a client would: plain reqwest, a minimal
//! SSE parser, and a reducer that rebuilds the streamed message.

use fleet_protocol::{AssistantMessage, BlockDelta, ContentBlock, StreamEvent};
use fleet_testkit::FakeModelServer;
use futures::StreamExt;
use serde_json::{json, Value};

/// A client whose every request (body included) ends within [`fleet_testkit::WAIT`]: a server
/// that stops answering fails the test with a timeout error instead of hanging it.
pub fn client() -> reqwest::Client {
    // reqwest is built without a crypto provider; a plain-HTTP client still needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(fleet_testkit::WAIT)
        .build()
        .expect("a reqwest client")
}

/// A minimal Messages API body with one user turn.
pub fn user_body(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "stream": stream,
        "messages": [{ "role": "user", "content": text }],
    })
}

pub fn anthropic_request(server: &FakeModelServer, body: &Value) -> reqwest::RequestBuilder {
    client()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", "sk-test-secret")
        .header("anthropic-version", "2023-06-01")
        .json(body)
}

pub fn openai_request(server: &FakeModelServer, body: &Value) -> reqwest::RequestBuilder {
    client()
        .post(format!("{}/v1/chat/completions", server.base_url()))
        .header("authorization", "Bearer sk-test-secret")
        .json(body)
}

/// Sends and reads the whole body; panics on transport errors.
pub async fn send(req: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let resp = req.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.bytes().await.expect("body read").to_vec();
    (status, headers, body)
}

/// Reads the body piece by piece as it arrives, returning the pieces.
pub async fn send_pieces(req: reqwest::RequestBuilder) -> Vec<Vec<u8>> {
    let resp = req.send().await.expect("request sent");
    let mut stream = resp.bytes_stream();
    let mut pieces = Vec::new();
    while let Some(piece) = stream.next().await {
        pieces.push(piece.expect("piece").to_vec());
    }
    pieces
}

/// `(event name, data)` pairs of an SSE body.
pub fn parse_sse(body: &[u8]) -> Vec<(Option<String>, String)> {
    let text = std::str::from_utf8(body).expect("SSE body is UTF-8");
    text.split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(|frame| {
            let mut event = None;
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d);
                }
            }
            (event, data.join("\n"))
        })
        .collect()
}

/// Anthropic events, checking that each `event:` name repeats the payload's `type`.
pub fn anthropic_events(body: &[u8]) -> Vec<StreamEvent> {
    parse_sse(body)
        .into_iter()
        .map(|(name, data)| {
            let event: StreamEvent = serde_json::from_str(&data).expect("event parses");
            assert_eq!(name.as_deref(), Some(event.event_name()));
            event
        })
        .collect()
}

/// Rebuilds the message from its stream, as an SDK would.
pub fn accumulate(events: &[StreamEvent]) -> AssistantMessage {
    let mut message = None::<AssistantMessage>;
    let mut json_parts: Vec<String> = Vec::new();
    for event in events {
        match event {
            StreamEvent::MessageStart { message: m } => message = Some(m.clone()),
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let m = message.as_mut().expect("message started");
                assert_eq!(*index, m.content.len());
                m.content.push(content_block.clone());
                json_parts.push(String::new());
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let m = message.as_mut().expect("message started");
                match (&mut m.content[*index], delta) {
                    (ContentBlock::Text { text, .. }, BlockDelta::TextDelta { text: t }) => {
                        text.push_str(t)
                    }
                    (
                        ContentBlock::Thinking { thinking, .. },
                        BlockDelta::ThinkingDelta { thinking: t },
                    ) => thinking.push_str(t),
                    (
                        ContentBlock::Thinking { signature, .. },
                        BlockDelta::SignatureDelta { signature: s },
                    ) => signature.push_str(s),
                    (ContentBlock::ToolUse { .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                        json_parts[*index].push_str(partial_json)
                    }
                    (block, delta) => panic!("delta {delta:?} does not fit block {block:?}"),
                }
            }
            StreamEvent::ContentBlockStop { index } => {
                let m = message.as_mut().expect("message started");
                if let ContentBlock::ToolUse { input, .. } = &mut m.content[*index] {
                    *input = serde_json::from_str(&json_parts[*index])
                        .expect("tool input JSON is valid");
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                let m = message.as_mut().expect("message started");
                m.stop_reason = delta.stop_reason.clone();
                m.usage.merge_delta(usage);
            }
            StreamEvent::MessageStop | StreamEvent::Ping => {}
            StreamEvent::Error { error } => panic!("stream error: {error:?}"),
        }
    }
    message.expect("a message_start event")
}

/// The `data:` payloads of an OpenAI stream, `[DONE]` excluded, and whether it was seen.
pub fn openai_chunks(body: &[u8]) -> (Vec<Value>, bool) {
    let mut done = false;
    let chunks = parse_sse(body)
        .into_iter()
        .filter_map(|(_, data)| {
            if data == "[DONE]" {
                done = true;
                None
            } else {
                Some(serde_json::from_str(&data).expect("chunk parses"))
            }
        })
        .collect();
    (chunks, done)
}
