use super::*;
use fleet_protocol::{CacheControl, Message, SystemBlock, SystemPrompt, ThinkingConfig};
use serde_json::json;

fn body(request: &MessagesRequest) -> Value {
    serde_json::to_value(chat_request(request, true, ToolChoiceMode::default()))
        .expect("a chat request always serialises")
}

/// A coding session as the agent loop builds it: cached system blocks, a screenshot, two
/// parallel tool calls (one failing), a follow-up call whose result holds an image, and
/// thinking that another server cannot use.
fn conversation() -> MessagesRequest {
    let mut system_first = SystemBlock::text("You are fleet, a coding agent.");
    system_first.cache_control = Some(CacheControl::ephemeral());
    let user_text = ContentBlock::Text {
        text: "What does this screenshot show, and what is in src/main.rs?".into(),
        citations: None,
        cache_control: Some(CacheControl::ephemeral()),
    };
    let screenshot = ContentBlock::Image {
        source: ImageSource::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        },
        cache_control: None,
    };
    let messages = vec![
        Message::with_blocks(Role::User, vec![user_text, screenshot]),
        Message::with_blocks(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "I should read the file.".into(),
                    signature: "sig".into(),
                },
                ContentBlock::text("Let me look."),
                ContentBlock::tool_use("toolu_1", "Read", json!({"path": "src/main.rs"})),
                ContentBlock::tool_use("toolu_2", "Bash", json!({"command": "ls /root"})),
            ],
        ),
        Message::with_blocks(
            Role::User,
            vec![
                ContentBlock::tool_result("toolu_1", "fn main() {}", false),
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_2".into(),
                    content: Some(ToolResultContent::Blocks(vec![
                        ContentBlock::text("ls: cannot open directory '/root'"),
                        ContentBlock::text("exit code 2"),
                    ])),
                    is_error: Some(true),
                    cache_control: Some(CacheControl::ephemeral()),
                },
                ContentBlock::text("Also check the logo."),
            ],
        ),
        Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "toolu_3",
                "Read",
                json!({"path": "logo.png"}),
            )],
        ),
        Message::with_blocks(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_3".into(),
                content: Some(ToolResultContent::Blocks(vec![
                    ContentBlock::text("logo.png (12 KB)"),
                    ContentBlock::Image {
                        source: ImageSource::Url {
                            url: "https://example.com/logo.png".into(),
                        },
                        cache_control: None,
                    },
                ])),
                is_error: None,
                cache_control: None,
            }],
        ),
        Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::RedactedThinking { data: "xyz".into() }],
        ),
        Message::user_text("Thanks. Summarise."),
    ];
    let mut request = MessagesRequest::new("qwen3-coder", 1024, messages);
    request.system = Some(SystemPrompt::Blocks(vec![
        system_first,
        SystemBlock::text("Be brief."),
    ]));
    request.tools = vec![
        ToolDefinition {
            name: "Read".into(),
            description: Some("Reads a file.".into()),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            cache_control: None,
        },
        ToolDefinition {
            name: "Bash".into(),
            description: None,
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            cache_control: Some(CacheControl::ephemeral()),
        },
    ]
    .into();
    request.tool_choice = Some(json!({"type": "any", "disable_parallel_tool_use": true}));
    request.thinking = Some(ThinkingConfig::Enabled {
        budget_tokens: 2048,
        display: None,
    });
    request.temperature = Some(0.2);
    request.stop_sequences = vec!["END".into()];
    request.metadata = Some(json!({"user_id": "u1"}));
    request
}

#[test]
fn multi_turn_conversation_maps_to_chat_completions() {
    let expected = json!({
        "model": "qwen3-coder",
        "messages": [
            {"role": "system", "content": "You are fleet, a coding agent.\nBe brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "What does this screenshot show, and what is in src/main.rs?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
            ]},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "toolu_1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"src/main.rs\"}"}},
                {"id": "toolu_2", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls /root\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "fn main() {}"},
            {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: ls: cannot open directory '/root'\nexit code 2"},
            {"role": "user", "content": "Also check the logo."},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "toolu_3", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"logo.png\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "toolu_3", "content": "logo.png (12 KB)\n[image attached in the next message]"},
            // The assistant turn that only thought is not sent, so the two user turns around
            // it become one.
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "https://example.com/logo.png"}},
                {"type": "text", "text": "Thanks. Summarise."}
            ]}
        ],
        "tools": [
            {"type": "function", "function": {"name": "Read", "description": "Reads a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
            {"type": "function", "function": {"name": "Bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}
        ],
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "max_tokens": 1024,
        "temperature": 0.2,
        "stop": ["END"],
        "stream": true,
        "stream_options": {"include_usage": true}
    });
    assert_eq!(body(&conversation()), expected);
}

#[test]
fn tool_messages_keep_their_order_and_come_before_the_user_text() {
    let sent = body(&conversation());
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "assistant",
            "tool",
            "user"
        ]
    );
}

fn roles(sent: &Value) -> Vec<&str> {
    sent["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect()
}

/// A resumed session: the prompt of a run that failed before any reply, two task
/// notifications, then the new prompt — four user turns in a row, sent as one.
#[test]
fn user_turns_in_a_row_are_sent_as_one_in_their_order() {
    let messages = vec![
        Message::user_text("first prompt"),
        Message::user_text("<task-notification>a</task-notification>"),
        Message::with_blocks(
            Role::User,
            vec![ContentBlock::text(
                "<task-notification>b</task-notification>",
            )],
        ),
        Message::user_text("the prompt"),
    ];
    let sent = body(&MessagesRequest::new("m", 64, messages));
    assert_eq!(roles(&sent), ["user"]);
    assert_eq!(
        sent["messages"][0]["content"],
        "first prompt\n\n<task-notification>a</task-notification>\n\n\
         <task-notification>b</task-notification>\n\nthe prompt"
    );
}

/// Tool results that arrive in a later user turn than some text still come right after the
/// calls they answer; the texts follow them as one turn.
#[test]
fn tool_results_stay_right_after_their_calls_when_user_turns_are_merged() {
    let messages = vec![
        Message::user_text("go"),
        Message::with_blocks(
            Role::Assistant,
            vec![ContentBlock::tool_use(
                "call_1",
                "Read",
                json!({"path": "a"}),
            )],
        ),
        Message::with_blocks(
            Role::User,
            vec![ContentBlock::tool_result("call_1", "A", false)],
        ),
        Message::user_text("<task-notification>done</task-notification>"),
        Message::with_blocks(
            Role::User,
            vec![
                ContentBlock::text("and now?"),
                ContentBlock::Image {
                    source: ImageSource::Url {
                        url: "https://example.com/x.png".into(),
                    },
                    cache_control: None,
                },
            ],
        ),
    ];
    let sent = body(&MessagesRequest::new("m", 64, messages));
    assert_eq!(roles(&sent), ["user", "assistant", "tool", "user"]);
    assert_eq!(sent["messages"][2]["tool_call_id"], "call_1");
    assert_eq!(
        sent["messages"][3]["content"],
        json!([
            {"type": "text", "text": "<task-notification>done</task-notification>"},
            {"type": "text", "text": "and now?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}
        ])
    );
}

#[test]
fn plain_prompt_has_no_tool_fields_and_no_usage_option_when_not_asked() {
    let request = MessagesRequest::new("llama3.2", 256, vec![Message::user_text("hi")]);
    let sent = serde_json::to_value(chat_request(&request, false, ToolChoiceMode::Required))
        .expect("serialises");
    assert_eq!(
        sent,
        json!({
            "model": "llama3.2",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 256,
            "stream": true
        })
    );
}

#[test]
fn tool_choice_without_tools_is_dropped() {
    let mut request = MessagesRequest::new("m", 10, vec![Message::user_text("hi")]);
    request.tool_choice = Some(json!({"type": "tool", "name": "Read"}));
    let sent = body(&request);
    assert!(sent.get("tool_choice").is_none());
    assert!(sent.get("tools").is_none());
}

#[test]
fn tool_choice_variants_map() {
    let cases = [
        (json!({"type": "auto"}), Some(json!("auto")), None),
        (json!({"type": "any"}), Some(json!("required")), None),
        (json!({"type": "none"}), Some(json!("none")), None),
        (
            json!({"type": "tool", "name": "Read"}),
            Some(json!({"type": "function", "function": {"name": "Read"}})),
            None,
        ),
        (
            json!({"type": "auto", "disable_parallel_tool_use": true}),
            Some(json!("auto")),
            Some(false),
        ),
        (
            json!({"type": "auto", "disable_parallel_tool_use": false}),
            Some(json!("auto")),
            None,
        ),
        (json!({"type": "mystery"}), None, None),
    ];
    for (choice, want_choice, want_parallel) in cases {
        assert_eq!(
            map_tool_choice(&choice),
            (want_choice, want_parallel),
            "{choice}"
        );
    }
}

#[test]
fn string_system_prompt_and_string_assistant_turns_pass_through() {
    let mut request = MessagesRequest::new(
        "m",
        10,
        vec![
            Message::user_text("hi"),
            Message {
                role: Role::Assistant,
                content: MessageContent::Text("hello".into()),
            },
        ],
    );
    request.system = Some(SystemPrompt::Text("Be kind.".into()));
    let sent = body(&request);
    assert_eq!(
        sent["messages"],
        json!([
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"}
        ])
    );
}

#[test]
fn empty_tool_result_and_several_text_blocks() {
    let request = MessagesRequest::new(
        "m",
        10,
        vec![Message::with_blocks(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: None,
                    is_error: None,
                    cache_control: None,
                },
                ContentBlock::text("first"),
                ContentBlock::text("second"),
            ],
        )],
    );
    assert_eq!(
        body(&request)["messages"],
        json!([
            {"role": "tool", "tool_call_id": "call_1", "content": ""},
            {"role": "user", "content": "first\nsecond"}
        ])
    );
}

#[test]
fn the_configured_tool_choice_goes_with_tools_unless_the_request_names_one() {
    let mut request = MessagesRequest::new("m", 10, vec![Message::user_text("hi")]);
    request.tools = vec![ToolDefinition {
        name: "Read".into(),
        description: None,
        input_schema: json!({"type": "object"}),
        cache_control: None,
    }]
    .into();
    let sent = |request: &MessagesRequest, mode| {
        serde_json::to_value(chat_request(request, false, mode)).expect("serialises")
    };
    assert_eq!(sent(&request, ToolChoiceMode::Auto)["tool_choice"], "auto");
    assert_eq!(
        sent(&request, ToolChoiceMode::Required)["tool_choice"],
        "required"
    );
    assert!(sent(&request, ToolChoiceMode::Omit)
        .get("tool_choice")
        .is_none());
    request.tool_choice = Some(json!({"type": "none"}));
    assert_eq!(
        sent(&request, ToolChoiceMode::Required)["tool_choice"],
        "none",
        "the request's own choice wins"
    );
}
