use super::StreamedBody;
use crate::cache::{apply_breakpoints, breakpoints};
use fleet_protocol::{
    ContentBlock, Message, MessagesRequest, Role, SystemPrompt, ThinkingConfig, ToolDefinition,
};
use serde_json::{json, Value};

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: Some(format!("{name} does \"things\"\n")),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        cache_control: None,
    }
}

fn conversation(turns: usize) -> Vec<Message> {
    let mut messages = vec![Message::user_text("start ü")];
    for i in 0..turns {
        messages.push(Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: format!("t{i}"),
                name: "Read".into(),
                input: json!({"file_path": format!("/x/{i}")}),
                cache_control: None,
            }],
        ));
        messages.push(Message::with_blocks(
            Role::User,
            vec![ContentBlock::tool_result(
                format!("t{i}"),
                "line\n".repeat(5_000),
                false,
            )],
        ));
    }
    messages
}

/// What the body must equal: the request marked in place and serialized in one go.
fn expected(request: &MessagesRequest) -> Value {
    let mut plain = request.clone();
    plain.stream = true;
    apply_breakpoints(&mut plain);
    serde_json::to_value(&plain).unwrap_or_default()
}

fn streamed(request: &MessagesRequest) -> (Value, u64, usize) {
    let marked = breakpoints(request);
    let body = match StreamedBody::new(request.clone(), marked) {
        Ok(body) => body,
        Err(err) => panic!("the body did not build: {err}"),
    };
    let bytes = body.to_vec();
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|err| {
        panic!(
            "not JSON ({err}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        )
    });
    (value, body.len(), bytes.len())
}

#[test]
fn equals_the_request_serialized_at_once() {
    let mut request = MessagesRequest::new("claude-x", 1000, conversation(6));
    request.system = Some(SystemPrompt::Text("be brief".into()));
    request.tools = (0..12).map(|i| tool(&format!("T{i}"))).collect();
    request.thinking = Some(ThinkingConfig::Enabled {
        budget_tokens: 2048,
        display: None,
    });
    request.temperature = Some(0.25);
    request.stop_sequences = vec!["END".into()];
    let (value, len, actual) = streamed(&request);
    assert_eq!(value, expected(&request));
    assert_eq!(
        len, actual as u64,
        "content-length must match the bytes sent"
    );
    assert_eq!(value["stream"], json!(true));
    assert_eq!(
        value["tools"][11]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[test]
fn a_request_without_tools_or_messages_is_still_well_formed() {
    let request = MessagesRequest::new("m", 1, Vec::new());
    let (value, len, actual) = streamed(&request);
    assert_eq!(value, expected(&request));
    assert_eq!(value["messages"], json!([]));
    assert!(value.get("tools").is_none());
    assert_eq!(len, actual as u64);

    let request = MessagesRequest::new("m", 1, vec![Message::user_text("hi")]);
    let (value, _, _) = streamed(&request);
    assert_eq!(value, expected(&request));
}

#[test]
fn the_shared_lists_are_not_copied() {
    let mut request = MessagesRequest::new("m", 1, conversation(3));
    request.tools = vec![tool("A"), tool("B")].into();
    let kept = request.clone();
    let body = StreamedBody::new(request.clone(), breakpoints(&request));
    assert!(body.is_ok());
    assert!(kept.messages.same_as(&request.messages));
    assert!(kept.tools.same_as(&request.tools));
}
