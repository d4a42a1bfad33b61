//! An OpenAI-compatible server's context window: whether a request fits, and what the server
//! does when it does not. vLLM, llama-server and llama-cpp-python each answer an overflow
//! differently (a 400 naming the figures, a reply cut where the window fills, an empty 200
//! stream), and a client has to make sense of all three.

use crate::http_error::ApiError;
use crate::scenario::{OpenAiOptions, Overflow};
use serde_json::Value;

/// What the server does with a request that passed the protocol checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Answer normally; with `room`, the reply stops after that many output tokens.
    Answer { room: Option<u64> },
    /// Answer with an HTTP 200 event stream that carries no event.
    EmptyStream,
}

/// The request's output limit: `max_tokens`, or the newer `max_completion_tokens`.
pub(crate) fn max_tokens(body: &Value) -> Option<u64> {
    ["max_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|key| body.get(*key).and_then(Value::as_u64))
}

/// Checks a prompt of `prompt` tokens asking for up to `max_tokens` against the window.
pub(crate) fn fit(
    options: &OpenAiOptions,
    prompt: u64,
    max_tokens: Option<u64>,
) -> Result<Fit, ApiError> {
    let Some(window) = options.context_window else {
        return Ok(Fit::Answer { room: None });
    };
    match options.overflow {
        Overflow::Reject => {
            let requested = prompt + max_tokens.unwrap_or(0);
            if requested <= window {
                return Ok(Fit::Answer { room: None });
            }
            let message = match max_tokens {
                Some(completion) => format!(
                    "This model's maximum context length is {window} tokens. However, you requested {requested} tokens ({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion."
                ),
                None => format!(
                    "This model's maximum context length is {window} tokens. However, your messages resulted in {prompt} tokens. Please reduce the length of the messages."
                ),
            };
            let mut error = ApiError::invalid_request(message);
            error.error_type = "BadRequestError".into();
            Err(error)
        }
        Overflow::Truncate if prompt > window => {
            let mut error = ApiError::invalid_request(
                "the request exceeds the available context size, try increasing it",
            );
            error.error_type = "exceed_context_size_error".into();
            Err(error)
        }
        Overflow::Truncate => {
            let room = window - prompt;
            Ok(Fit::Answer {
                room: Some(max_tokens.map_or(room, |m| m.min(room))),
            })
        }
        Overflow::Empty if prompt > window => Ok(Fit::EmptyStream),
        Overflow::Empty => Ok(Fit::Answer { room: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(window: u64, overflow: Overflow) -> OpenAiOptions {
        OpenAiOptions {
            context_window: Some(window),
            overflow,
            ..OpenAiOptions::default()
        }
    }

    #[test]
    fn vllm_counts_the_completion_too() {
        let reject = options(100, Overflow::Reject);
        assert_eq!(fit(&reject, 60, Some(40)), Ok(Fit::Answer { room: None }));
        let error = fit(&reject, 60, Some(41)).err().map(|e| e.message);
        assert_eq!(
            error.as_deref(),
            Some("This model's maximum context length is 100 tokens. However, you requested 101 tokens (60 in the messages, 41 in the completion). Please reduce the length of the messages or completion.")
        );
        assert!(fit(&reject, 101, None).is_err());
        assert!(fit(&reject, 100, None).is_ok());
    }

    #[test]
    fn llama_server_cuts_the_reply_where_the_window_fills() {
        let truncate = options(100, Overflow::Truncate);
        assert_eq!(
            fit(&truncate, 60, Some(1000)),
            Ok(Fit::Answer { room: Some(40) })
        );
        assert_eq!(
            fit(&truncate, 60, Some(10)),
            Ok(Fit::Answer { room: Some(10) })
        );
        let error = fit(&truncate, 101, Some(1)).err();
        assert_eq!(
            error.map(|e| (e.status, e.error_type)),
            Some((400, "exceed_context_size_error".to_owned()))
        );
    }

    #[test]
    fn llama_cpp_python_sends_nothing() {
        let empty = options(100, Overflow::Empty);
        assert_eq!(fit(&empty, 101, Some(1)), Ok(Fit::EmptyStream));
        assert_eq!(fit(&empty, 100, Some(500)), Ok(Fit::Answer { room: None }));
        assert_eq!(
            fit(&OpenAiOptions::default(), u64::MAX / 2, Some(1)),
            Ok(Fit::Answer { room: None })
        );
    }
}
