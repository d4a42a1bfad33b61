//! What teammates and tasks say to each other inside conversation text: protocol frames
//! (`{"type":"shutdown_request",…}`), `<teammate-message>` blocks, `<task-notification>` and
//! agent messages. A model (or another teammate) writes this text, so any of it can arrive.
//! Checks: no panic, and a teammate message or agent message rendered from parts comes back
//! as those parts.
#![no_main]

use fleet_protocol::team::frames::{frame_type, Frame};
use fleet_protocol::team::render::{for_lead, for_teammate, is_teammate_delivery};
use fleet_protocol::team::TeammateMessage;
use fleet_protocol::{AgentMessage, MailEntry, TaskNotification};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(frame) = Frame::parse(text) {
        let again = Frame::parse(&frame.to_text());
        assert_eq!(
            again.as_ref(),
            Some(&frame),
            "a frame survives its own text"
        );
        let _ = frame.type_name();
    }
    let _ = frame_type(text);
    let _ = TeammateMessage::parse_all(text);
    let _ = is_teammate_delivery(text);
    let _ = TaskNotification::parse(text);
    let _ = AgentMessage::parse(text);

    // Round trip: the text cut into sender, summary, colour and body at the first three NULs.
    let mut parts = text.splitn(4, '\0');
    let (Some(from), Some(summary), Some(color), Some(body)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let entry = MailEntry::new(from, body, "2026-12-05T00:00:00.000Z", "m1")
        .with_summary(Some(summary.to_string()).filter(|s| !s.is_empty()))
        .with_color(Some(color.to_string()).filter(|c| !c.is_empty()));
    let message = AgentMessage {
        from: from.to_string(),
        from_parent: color.len() % 2 == 1,
        summary: entry.summary.clone(),
        body: body.to_string(),
    };
    let parsed = AgentMessage::parse(&message.render());
    assert_eq!(
        parsed.as_ref(),
        Some(&message),
        "an agent message parses back"
    );
    for (rendered, expected) in [
        (
            for_teammate(std::slice::from_ref(&entry)),
            TeammateMessage::for_teammate(&entry),
        ),
        (
            for_lead(std::slice::from_ref(&entry)),
            TeammateMessage::for_lead(&entry),
        ),
    ] {
        let parsed = TeammateMessage::parse_all(&rendered);
        assert_eq!(
            parsed,
            vec![expected],
            "a rendered message parses back: {rendered:?}"
        );
    }
});
