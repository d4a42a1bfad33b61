//! SSE decoding throughput: how many MB/s of a realistic Messages API stream the decoder (and
//! the decoder plus message assembly) gets through. Run with `cargo bench -p fleet-model`.

use fleet_model::anthropic::AnthropicDecoder;
use fleet_model::sse::SseDecoder;
use fleet_model::WireDecoder;
use std::hint::black_box;
use std::time::Instant;

/// One reply with many small text deltas and a tool call in fragments, like a real stream.
fn reply(n: usize) -> String {
    let mut s = String::new();
    s.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":2100,\"output_tokens\":1}}}\n\n");
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word {i} of a reply — with ünïcode \"}}}}\n\n"
        ));
        if i % 50 == 0 {
            s.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
        }
    }
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    s.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n");
    for part in ["{\\\"comm", "and\\\": \\\"cargo", " test\\\"}"] {
        s.push_str(&format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{part}\"}}}}\n\n"));
    }
    s.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    );
    s.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":900}}\n\n");
    s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    s
}

fn measure(label: &str, bytes: usize, rounds: usize, mut f: impl FnMut()) {
    f(); // warm up
    let start = Instant::now();
    for _ in 0..rounds {
        f();
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = (bytes * rounds) as f64 / 1_000_000.0;
    println!(
        "{label:<44} {:>8.1} MB/s  ({mb:.0} MB in {secs:.2} s)",
        mb / secs
    );
}

fn main() {
    let stream = reply(2_000).into_bytes();
    let rounds = 1000;
    for chunk in [16 * 1024, 1024, 64] {
        measure(
            &format!("sse decode, {chunk} B chunks"),
            stream.len(),
            rounds,
            || {
                let mut d = SseDecoder::new();
                let mut out = Vec::with_capacity(64);
                let mut n = 0;
                for piece in stream.chunks(chunk) {
                    d.push(piece, &mut out);
                    n += out.len();
                    out.clear();
                }
                d.finish(&mut out);
                black_box(n + out.len());
            },
        );
    }
    measure(
        "sse decode + message assembly, 16 KiB chunks",
        stream.len(),
        rounds / 4,
        || {
            let mut d = SseDecoder::new();
            let mut decoder = AnthropicDecoder::new();
            let mut events = Vec::new();
            let mut out = Vec::new();
            let mut done = None;
            for piece in stream.chunks(16 * 1024) {
                d.push(piece, &mut events);
                for ev in events.drain(..) {
                    if let Ok(Some(m)) = decoder.on_event(ev, &mut out) {
                        done = Some(m);
                    }
                }
                out.clear();
            }
            assert!(done.is_some(), "the benchmark stream must assemble");
            black_box(done);
        },
    );
}
