//! A JSON value's kind in words, for the error messages that say what was found instead of
//! what was expected ("must be an object, found a list").

use serde_json::Value;

pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
