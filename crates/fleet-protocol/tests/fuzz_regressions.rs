//! Inputs the fuzz targets (see docs/fuzzing.md) found, kept as tests so the fixes stay.

use fleet_protocol::team::render::for_lead;
use fleet_protocol::team::TeammateMessage;
use fleet_protocol::{AgentMessage, MailEntry};

/// `team_messages` found a sender name ending in ` color=`: its escaped value's closing quote
/// completed ` color="`, and the parser, searching the head for that text, read a colour the
/// message never had (and a summary could forge what follows it the same way).
#[test]
fn an_attribute_value_ending_like_a_key_does_not_forge_the_next_attribute() {
    let entry = MailEntry::new(
        "wied\": rtrt\", teammate_id=\"alpha\" color=",
        "body",
        "2026-12-05T00:00:00.000Z",
        "m1",
    )
    .with_summary(Some("x summary=".into()));
    let rendered = for_lead(std::slice::from_ref(&entry));
    assert_eq!(
        TeammateMessage::parse_all(&rendered),
        vec![TeammateMessage::for_lead(&entry)]
    );
    let parsed = &TeammateMessage::parse_all(&rendered)[0];
    assert_eq!(parsed.color, None);
    assert_eq!(parsed.summary.as_deref(), Some("x summary="));
}

/// The same forgery against an agent message: a sender named `x summary=` made the parser read
/// ` summary=` as the summary.
#[test]
fn an_agent_name_cannot_forge_the_summary_after_it() {
    let message = AgentMessage {
        from: "x summary=".into(),
        from_parent: true,
        summary: Some("the real one".into()),
        body: "do this".into(),
    };
    let parsed = AgentMessage::parse(&message.render()).expect("a rendered message parses");
    assert_eq!(parsed.summary.as_deref(), Some("the real one"));
    assert_eq!(parsed, message);
}
