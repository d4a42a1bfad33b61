//! `--input-format stream-json`: user messages read from stdin, one JSON object per line, in
//! the shape Claude Code reads (`{"type":"user","message":{"role":"user","content":…}}`), so a
//! driver written for it can drive fleet.
//!
//! A bad line is an error naming its line number and what is wrong with it; the reader keeps
//! going after it, and the caller decides whether that ends the session.

use fleet_protocol::{ContentBlock, Message, MessageContent, Role};
use serde_json::{Map, Value};
use std::io::{self, BufRead};

const EXAMPLE: &str = r#"{"type":"user","message":{"role":"user","content":"…"}}"#;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("stdin line {line}: could not be read: {source}")]
    Read {
        line: usize,
        #[source]
        source: io::Error,
    },
    #[error(
        "stdin line {line}: not valid JSON ({source}); each line must be one object like {EXAMPLE}"
    )]
    Json {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("stdin line {line}: expected a JSON object like {EXAMPLE}, got {got}")]
    NotAnObject { line: usize, got: &'static str },
    #[error("stdin line {line}: missing \"type\"; expected \"type\":\"user\"")]
    MissingType { line: usize },
    #[error("stdin line {line}: expected \"type\":\"user\", got {got}")]
    WrongType { line: usize, got: String },
    #[error("stdin line {line}: {problem}")]
    BadMessage { line: usize, problem: String },
}

impl InputError {
    /// The 1-based line of stdin the error is about.
    pub fn line(&self) -> usize {
        match self {
            Self::Read { line, .. }
            | Self::Json { line, .. }
            | Self::NotAnObject { line, .. }
            | Self::MissingType { line }
            | Self::WrongType { line, .. }
            | Self::BadMessage { line, .. } => *line,
        }
    }
}

/// The non-blank lines of a stream-json input, each with its 1-based number.
pub struct Lines<R> {
    lines: io::Lines<R>,
    line: usize,
    /// Set after a read error that will not go away by reading on.
    broken: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Self {
            lines: reader.lines(),
            line: 0,
            broken: false,
        }
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = Result<(usize, String), InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.broken {
            return None;
        }
        loop {
            let read = self.lines.next()?;
            self.line += 1;
            match read {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => return Some(Ok((self.line, text))),
                Err(source) => {
                    // Bad UTF-8 spoils one line only; any other error spoils the stream.
                    self.broken = source.kind() != io::ErrorKind::InvalidData;
                    return Some(Err(InputError::Read {
                        line: self.line,
                        source,
                    }));
                }
            }
        }
    }
}

/// One line of stream-json input as a user message. Keys other than `type` and `message`
/// (`session_id`, `parent_tool_use_id`, `uuid`, …) are accepted and ignored.
pub fn parse_line(text: &str, line: usize) -> Result<Message, InputError> {
    let value: Value =
        serde_json::from_str(text).map_err(|source| InputError::Json { line, source })?;
    let Value::Object(object) = value else {
        return Err(InputError::NotAnObject {
            line,
            got: fleet_protocol::json_kind(&value),
        });
    };
    match object.get("type") {
        None => return Err(InputError::MissingType { line }),
        Some(Value::String(t)) if t == "user" => {}
        Some(other) => {
            return Err(InputError::WrongType {
                line,
                got: other.to_string(),
            })
        }
    }
    let bad = |problem: String| InputError::BadMessage { line, problem };
    let message = match object.get("message") {
        Some(Value::Object(message)) => message,
        Some(other) => {
            return Err(bad(format!(
                "\"message\" must be an object, got {}",
                fleet_protocol::json_kind(other)
            )))
        }
        None => return Err(bad(format!("missing \"message\"; expected {EXAMPLE}"))),
    };
    check_role(message).map_err(bad)?;
    let content = content(message).map_err(bad)?;
    Ok(Message {
        role: Role::User,
        content,
    })
}

fn check_role(message: &Map<String, Value>) -> Result<(), String> {
    match message.get("role") {
        None => Ok(()),
        Some(Value::String(role)) if role == "user" => Ok(()),
        Some(other) => Err(format!(
            "\"message.role\" must be \"user\", got {other}; only user messages can be sent"
        )),
    }
}

fn content(message: &Map<String, Value>) -> Result<MessageContent, String> {
    match message.get("content") {
        None => Err("missing \"message.content\" (a string or an array of blocks)".into()),
        Some(Value::String(text)) if text.trim().is_empty() => {
            Err("\"message.content\" is empty; send some text".into())
        }
        Some(Value::String(text)) => Ok(MessageContent::Text(text.clone())),
        Some(Value::Array(items)) if items.is_empty() => {
            Err("\"message.content\" is an empty array; send at least one block".into())
        }
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| user_block(i, item))
            .collect::<Result<_, _>>()
            .map(MessageContent::Blocks),
        Some(other) => Err(format!(
            "\"message.content\" must be a string or an array of blocks, got {}",
            fleet_protocol::json_kind(other)
        )),
    }
}

/// A block a person can send: text or an image. Tool results answer the agent's own calls
/// and thinking is the model's; neither can come from stdin.
fn user_block(index: usize, item: &Value) -> Result<ContentBlock, String> {
    let at = format!("\"message.content[{index}]\"");
    let block: ContentBlock =
        serde_json::from_value(item.clone()).map_err(|e| format!("{at}: {e}"))?;
    match block {
        ContentBlock::Text { .. } | ContentBlock::Image { .. } => Ok(block),
        other => Err(format!(
            "{at}: a \"{}\" block cannot be sent as user input; send \"text\" or \"image\" blocks",
            other.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fleet_protocol::ImageSource;

    fn read_all(input: &[u8]) -> Vec<Result<Message, InputError>> {
        Lines::new(input)
            .map(|line| line.and_then(|(number, text)| parse_line(&text, number)))
            .collect()
    }

    fn error_of(line: &str) -> String {
        parse_line(line, 3).unwrap_err().to_string()
    }

    #[test]
    fn reads_string_and_block_content_skipping_blank_lines() {
        let input = concat!(
            r#"{"type":"user","message":{"role":"user","content":"Fix the bug"},"session_id":"s1","parent_tool_use_id":null}"#,
            "\n\n   \r\n",
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0"}}]},"uuid":"u-1","extra":{"x":1}}"#,
            "\r\n",
            r#"{"message":{"content":"role may be left out"},"type":"user"}"#,
        );
        let messages: Vec<Message> = read_all(input.as_bytes())
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[0], Message::user_text("Fix the bug"));
        assert_eq!(messages[1].role, Role::User);
        let blocks = messages[1].blocks();
        assert_eq!(blocks[0], ContentBlock::text("Look:"));
        assert!(matches!(
            &blocks[1],
            ContentBlock::Image { source: ImageSource::Base64 { media_type, .. }, .. }
                if media_type == "image/png"
        ));
        assert_eq!(messages[2].text(), "role may be left out");
    }

    #[test]
    fn bad_lines_are_reported_with_their_number_and_reading_goes_on() {
        let input = concat!(
            r#"{"type":"user","message":{"content":"one"}}"#,
            "\n\n",
            r#"{"type":"assistant","message":{"content":"no"}}"#,
            "\n",
            "not json\n",
            r#"{"type":"user","message":{"content":"two"}}"#,
            "\n",
        );
        let results = read_all(input.as_bytes());
        assert_eq!(results.len(), 4);
        assert_eq!(results[0].as_ref().unwrap().text(), "one");
        let wrong = results[1].as_ref().unwrap_err();
        assert_eq!(wrong.line(), 3);
        assert_eq!(
            wrong.to_string(),
            r#"stdin line 3: expected "type":"user", got "assistant""#
        );
        let json = results[2].as_ref().unwrap_err();
        assert_eq!(json.line(), 4);
        assert!(
            json.to_string()
                .starts_with("stdin line 4: not valid JSON ("),
            "{json}"
        );
        assert_eq!(results[3].as_ref().unwrap().text(), "two");
    }

    #[test]
    fn each_malformed_shape_names_what_is_wrong() {
        let cases = [
            ("[1,2]", "stdin line 3: expected a JSON object like"),
            (
                r#"{"message":{"content":"x"}}"#,
                r#"stdin line 3: missing "type"; expected "type":"user""#,
            ),
            (
                r#"{"type":7}"#,
                r#"stdin line 3: expected "type":"user", got 7"#,
            ),
            (r#"{"type":"user"}"#, r#"stdin line 3: missing "message""#),
            (
                r#"{"type":"user","message":"hi"}"#,
                r#"stdin line 3: "message" must be an object, got a string"#,
            ),
            (
                r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#,
                r#"stdin line 3: "message.role" must be "user", got "assistant""#,
            ),
            (
                r#"{"type":"user","message":{"role":"user"}}"#,
                r#"stdin line 3: missing "message.content""#,
            ),
            (
                r#"{"type":"user","message":{"content":"  "}}"#,
                r#"stdin line 3: "message.content" is empty"#,
            ),
            (
                r#"{"type":"user","message":{"content":[]}}"#,
                r#"stdin line 3: "message.content" is an empty array"#,
            ),
            (
                r#"{"type":"user","message":{"content":42}}"#,
                r#"stdin line 3: "message.content" must be a string or an array of blocks, got a number"#,
            ),
            (
                r#"{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"video"}]}}"#,
                r#"stdin line 3: "message.content[1]": unknown variant `video`"#,
            ),
            (
                r#"{"type":"user","message":{"content":[{"type":"text"}]}}"#,
                r#"stdin line 3: "message.content[0]": missing field `text`"#,
            ),
            (
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}"#,
                r#"stdin line 3: "message.content[0]": a "tool_result" block cannot be sent as user input"#,
            ),
        ];
        for (line, expected) in cases {
            let err = error_of(line);
            assert!(err.starts_with(expected), "{line}\n  gave: {err}");
        }
    }

    #[test]
    fn invalid_utf8_spoils_only_its_line() {
        let mut input = b"\xff\xfe\n".to_vec();
        input.extend_from_slice(br#"{"type":"user","message":{"content":"ok"}}"#);
        let results = read_all(&input);
        assert_eq!(results.len(), 2);
        let err = results[0].as_ref().unwrap_err();
        assert!(matches!(err, InputError::Read { line: 1, .. }), "{err}");
        assert_eq!(results[1].as_ref().unwrap().text(), "ok");
    }

    #[test]
    fn a_failing_reader_ends_the_stream_after_one_error() {
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("device gone"))
            }
        }
        let results: Vec<_> = Lines::new(io::BufReader::new(Failing)).collect();
        assert_eq!(results.len(), 1);
        assert_eq!(
            results[0].as_ref().unwrap_err().to_string(),
            "stdin line 1: could not be read: device gone"
        );
    }
}
