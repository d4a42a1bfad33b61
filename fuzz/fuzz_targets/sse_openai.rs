//! The Chat Completions (OpenAI-compatible) stream decoder behind the SSE decoder, fed like
//! the transport feeds it.
//!
//! Input: two seed bytes (where the network cuts the stream), then the response body. Checks:
//! no panic, no unbounded allocation (libFuzzer's malloc and RSS limits), the same SSE events
//! whole and cut (and, under a small buffer limit, a prefix of them), and a finished reply
//! within the decoder's tool-call bound whose calls have distinct ids.
#![no_main]

use fleet_fuzz::{chunks, seed_and_rest};
use fleet_model::openai::OpenAiDecoder;
use fleet_model::sse::{SseDecoder, SseEvent};
use fleet_model::WireDecoder;
use fleet_protocol::ContentBlock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (seed, body) = seed_and_rest(data);

    let mut whole = Vec::new();
    let mut sse = SseDecoder::new();
    sse.push(body, &mut whole);
    sse.finish(&mut whole);

    let mut sse = SseDecoder::new();
    let mut decoder = OpenAiDecoder::for_request(u64::from(seed));
    let mut pieces: Vec<SseEvent> = Vec::new();
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut ended = false;
    for chunk in chunks(seed, body) {
        sse.push(chunk, &mut events);
        for event in events.drain(..) {
            pieces.push(event.clone());
            if !ended {
                match decoder.on_event(event, &mut out) {
                    Ok(None) => {}
                    Ok(Some(message)) => {
                        assert!(message.content.len() <= 65_536 + 2);
                        // Results find their calls by id: two calls must never share one.
                        let mut ids: Vec<&str> = message
                            .content
                            .iter()
                            .filter_map(|block| match block {
                                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                                _ => None,
                            })
                            .collect();
                        let calls = ids.len();
                        ids.sort_unstable();
                        ids.dedup();
                        assert_eq!(ids.len(), calls, "two tool calls share an id");
                        ended = true;
                    }
                    Err(_) => ended = true,
                }
            }
        }
    }
    sse.finish(&mut events);
    for event in events.drain(..) {
        pieces.push(event.clone());
        if !ended {
            ended = !matches!(decoder.on_event(event, &mut out), Ok(None));
        }
    }
    if !ended {
        let _ = decoder.on_eof(&mut out);
    }
    assert_eq!(
        whole, pieces,
        "the SSE events depend on where the stream was cut"
    );

    // With a small buffer limit: the events before the limit was passed, then nothing.
    let limit = 1 + usize::from(seed >> 8);
    let mut limited = SseDecoder::with_limit(limit);
    let mut events = Vec::new();
    for chunk in chunks(seed, body) {
        limited.push(chunk, &mut events);
    }
    limited.finish(&mut events);
    match limited.overflow() {
        None => assert_eq!(
            events, whole,
            "a limit that was never reached changed the events"
        ),
        Some(_) => assert!(
            whole.starts_with(&events),
            "events after the limit was passed"
        ),
    }

    // A server that ignored `stream: true` sends the reply as one JSON document.
    let _ = OpenAiDecoder::new().on_whole_body(body, &mut Vec::new());
});
