//! Hooks an SDK host registers in its `initialize` request: the same events and matchers as
//! settings files, but each hook is a callback id the host answers over the control protocol
//! (`{"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}]}`).

use super::config::{Handler, HookEvent, HookSet, HookSpec, MatcherGroup};
use super::matcher::Matcher;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How long a callback may take when its matcher sets no `timeout` (seconds in the request),
/// as for command hooks.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Where these hooks came from, in messages.
const SOURCE: &str = "SDK initialize";

/// What is wrong with the `hooks` of an `initialize` request, with where in it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("initialize: hooks.{path}: {problem}")]
pub struct SdkHooksError {
    /// `Event[i]`, or empty for the whole `hooks` value.
    pub path: String,
    pub problem: SdkHookProblem,
}

/// What is wrong at one place of an SDK host's `hooks`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SdkHookProblem {
    #[error("must be an object keyed by event name")]
    NotAnObject,
    #[error("must be a list of matchers")]
    NotAList,
    #[error("matcher {text:?} is not valid: {source}")]
    Matcher {
        text: String,
        #[source]
        source: regex::Error,
    },
    #[error("matcher must be a string")]
    MatcherNotText,
    /// `path` repeats where the timeout is, as the message always has.
    #[error("timeout must be a positive number of seconds ({path})")]
    Timeout { path: String },
    #[error("hookCallbackIds must be a list of callback ids")]
    NoCallbackIds,
    #[error("hookCallbackIds must hold strings")]
    CallbackIdNotText,
}

impl HookSet {
    /// The hooks of an `initialize` request (`null` or absent: none), and warnings about
    /// events fleet does not run hooks for.
    pub fn from_sdk(value: &Value) -> Result<(HookSet, Vec<String>), SdkHooksError> {
        let err = |path: &str, problem: SdkHookProblem| SdkHooksError {
            path: path.to_string(),
            problem,
        };
        let mut set = HookSet::default();
        let mut warnings = Vec::new();
        let events = match value {
            Value::Null => return Ok((set, warnings)),
            Value::Object(events) => events,
            _ => return Err(err("", SdkHookProblem::NotAnObject)),
        };
        let source: Arc<str> = Arc::from(SOURCE);
        for (name, groups) in events {
            let Some(event) = HookEvent::parse(name) else {
                warnings.push(format!(
                    "{SOURCE}: hooks.{name}: not an event fleet runs hooks for; its callbacks \
                     will not be called"
                ));
                continue;
            };
            let Value::Array(groups) = groups else {
                return Err(err(name, SdkHookProblem::NotAList));
            };
            for (i, group) in groups.iter().enumerate() {
                let path = format!("{name}[{i}]");
                set.push(
                    event,
                    parse_group(group, &path, &source).map_err(|m| err(&path, m))?,
                );
            }
        }
        Ok((set, warnings))
    }
}

fn parse_group(
    group: &Value,
    path: &str,
    source: &Arc<str>,
) -> Result<MatcherGroup, SdkHookProblem> {
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => Matcher::any(),
        Some(Value::String(text)) => {
            Matcher::parse(text).map_err(|source| SdkHookProblem::Matcher {
                text: text.clone(),
                source,
            })?
        }
        Some(_) => return Err(SdkHookProblem::MatcherNotText),
    };
    let timeout = match group.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(value) => match value.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() => Duration::from_secs_f64(secs),
            _ => {
                return Err(SdkHookProblem::Timeout {
                    path: path.to_string(),
                })
            }
        },
    };
    let Some(Value::Array(ids)) = group.get("hookCallbackIds") else {
        return Err(SdkHookProblem::NoCallbackIds);
    };
    let hooks = ids
        .iter()
        .map(|id| match id {
            Value::String(id) => Ok(HookSpec {
                handler: Handler::Callback(id.clone()),
                timeout,
                source: source.clone(),
            }),
            _ => Err(SdkHookProblem::CallbackIdNotText),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(MatcherGroup { matcher, hooks })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn callbacks_join_their_event_and_matcher() {
        let (set, warnings) = HookSet::from_sdk(&json!({
            "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5}],
            "Stop": [{"matcher": null, "hookCallbackIds": ["hook_2"]}],
            "Elsewhen": [{"hookCallbackIds": ["hook_3"]}],
        }))
        .unwrap();
        let bash = set.matching(HookEvent::PreToolUse, Some("Bash"));
        assert_eq!(
            bash.iter().map(|h| h.handler.clone()).collect::<Vec<_>>(),
            vec![
                Handler::Callback("hook_0".into()),
                Handler::Callback("hook_1".into())
            ]
        );
        assert_eq!(bash[0].timeout, Duration::from_secs(5));
        assert!(set.matching(HookEvent::PreToolUse, Some("Read")).is_empty());
        assert_eq!(
            set.matching(HookEvent::Stop, None)[0].timeout,
            DEFAULT_TIMEOUT
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("Elsewhen"));
    }

    #[test]
    fn a_malformed_entry_names_its_place() {
        let err = HookSet::from_sdk(&json!({"PreToolUse": [{"matcher": "Bash"}]})).unwrap_err();
        assert_eq!(err.path, "PreToolUse[0]");
        assert!(
            matches!(err.problem, SdkHookProblem::NoCallbackIds),
            "{err}"
        );
        assert!(err.to_string().contains("hookCallbackIds"), "{err}");
        let err = HookSet::from_sdk(&json!({"Stop": [{"hookCallbackIds": ["a"], "timeout": -1}]}))
            .unwrap_err();
        assert!(
            matches!(err.problem, SdkHookProblem::Timeout { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("timeout"), "{err}");
        assert!(HookSet::from_sdk(&json!(null)).unwrap().0.is_empty());
    }
}
