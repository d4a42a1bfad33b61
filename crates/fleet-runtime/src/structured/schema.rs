//! A small JSON Schema checker for `--json-schema`: the keywords a structured answer's shape
//! is written with (`type`, `properties`, `required`, `items`, `enum`, `const`,
//! `additionalProperties`, `anyOf` / `oneOf` / `allOf`, the numeric and length bounds).
//! Keywords it does not know (`description`, `title`, `format`, `$schema`, …) are ignored, as
//! a validator must; a keyword it knows with a value of the wrong kind makes the schema
//! invalid, so a typo is reported when fleet starts rather than failing every answer.
//!
//! A general validator crate would bring far more than these few rules need.

use serde_json::{Map, Value};

/// Why a schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SchemaError {
    /// Where in the schema, as a JSON pointer (`/properties/name/type`).
    pub path: String,
    pub message: String,
}

const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Checks that `schema` is one this checker can apply, and that it describes an object (it
/// becomes a tool's input schema, which the API requires to be an object).
pub fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    let Value::Object(map) = schema else {
        return Err(error("", "the schema must be a JSON object"));
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        _ => {
            return Err(error(
                "/type",
                "the top level must be \"type\": \"object\" (the answer is given as a tool's \
                 input, which is always an object)",
            ))
        }
    }
    check_node(schema, "")
}

fn check_node(schema: &Value, path: &str) -> Result<(), SchemaError> {
    let map = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(map) => map,
        _ => return Err(error(path, "a schema must be an object or a boolean")),
    };
    if let Some(t) = map.get("type") {
        let names: Vec<&Value> = match t {
            Value::Array(list) => list.iter().collect(),
            one => vec![one],
        };
        for name in names {
            match name.as_str() {
                Some(n) if TYPES.contains(&n) => {}
                _ => {
                    return Err(error(
                        &format!("{path}/type"),
                        &format!("{name} is not a type; use one of {}", TYPES.join(", ")),
                    ))
                }
            }
        }
    }
    if let Some(props) = map.get("properties") {
        let Value::Object(props) = props else {
            return Err(error(&format!("{path}/properties"), "must be an object"));
        };
        for (name, sub) in props {
            check_node(sub, &format!("{path}/properties/{name}"))?;
        }
    }
    if let Some(required) = map.get("required") {
        let ok = required
            .as_array()
            .is_some_and(|list| list.iter().all(Value::is_string));
        if !ok {
            return Err(error(
                &format!("{path}/required"),
                "must be an array of property names",
            ));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get(key) {
            check_node(sub, &format!("{path}/{key}"))?;
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = map.get(key) {
            let Some(list) = list.as_array().filter(|l| !l.is_empty()) else {
                return Err(error(
                    &format!("{path}/{key}"),
                    "must be a non-empty array of schemas",
                ));
            };
            for (i, sub) in list.iter().enumerate() {
                check_node(sub, &format!("{path}/{key}/{i}"))?;
            }
        }
    }
    if map.get("enum").is_some_and(|e| !e.is_array()) {
        return Err(error(&format!("{path}/enum"), "must be an array of values"));
    }
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        if map.get(key).is_some_and(|v| !v.is_number()) {
            return Err(error(&format!("{path}/{key}"), "must be a number"));
        }
    }
    for key in [
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
    ] {
        if map.get(key).is_some_and(|v| v.as_u64().is_none()) {
            return Err(error(&format!("{path}/{key}"), "must be a whole number"));
        }
    }
    Ok(())
}

fn error(path: &str, message: &str) -> SchemaError {
    SchemaError {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        message: message.into(),
    }
}

/// Every way `value` breaks `schema`, each as `<where>: <what>` (empty when it fits). The
/// schema must have passed [`check_schema`].
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, value, "", &mut problems);
    problems
}

fn walk(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let map = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => {
            out.push(format!("{}: no value is allowed here", place(at)));
            return;
        }
        Value::Object(map) => map,
        _ => return,
    };
    if let Some(t) = map.get("type") {
        let fits = match t {
            Value::Array(list) => list.iter().any(|n| has_type(value, n)),
            one => has_type(value, one),
        };
        if !fits {
            out.push(format!(
                "{}: expected {}, got {}",
                place(at),
                type_words(t),
                fleet_protocol::json_kind(value)
            ));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = map.get("enum") {
        if !allowed.contains(value) {
            out.push(format!(
                "{}: {value} is not one of {}",
                place(at),
                Value::Array(allowed.clone())
            ));
        }
    }
    if let Some(constant) = map.get("const") {
        if constant != value {
            out.push(format!("{}: must be {constant}", place(at)));
        }
    }
    match value {
        Value::Object(object) => walk_object(map, object, at, out),
        Value::Array(items) => walk_array(map, items, at, out),
        Value::String(text) => {
            let len = text.chars().count() as u64;
            bound(map, "minLength", len, at, "characters", out);
            bound(map, "maxLength", len, at, "characters", out);
        }
        Value::Number(n) => walk_number(map, n.as_f64().unwrap_or(0.0), at, out),
        _ => {}
    }
    walk_combinators(map, value, at, out);
}

fn walk_object(
    map: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
    out: &mut Vec<String>,
) {
    let props = map.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = map.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                out.push(format!("{}: missing required property {name:?}", place(at)));
            }
        }
    }
    for (name, item) in object {
        let here = format!("{at}/{name}");
        match props.and_then(|p| p.get(name)) {
            Some(sub) => walk(sub, item, &here, out),
            None => match map.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    out.push(format!("{}: property {name:?} is not allowed", place(at)))
                }
                Some(sub @ Value::Object(_)) => walk(sub, item, &here, out),
                _ => {}
            },
        }
    }
    let count = object.len() as u64;
    bound(map, "minProperties", count, at, "properties", out);
    bound(map, "maxProperties", count, at, "properties", out);
}

fn walk_array(map: &Map<String, Value>, items: &[Value], at: &str, out: &mut Vec<String>) {
    if let Some(schema) = map.get("items") {
        for (i, item) in items.iter().enumerate() {
            walk(schema, item, &format!("{at}/{i}"), out);
        }
    }
    let count = items.len() as u64;
    bound(map, "minItems", count, at, "items", out);
    bound(map, "maxItems", count, at, "items", out);
}

fn walk_number(map: &Map<String, Value>, n: f64, at: &str, out: &mut Vec<String>) {
    let limit = |key: &str| map.get(key).and_then(Value::as_f64);
    let broken = [
        ("minimum", limit("minimum").filter(|m| n < *m), "at least"),
        ("maximum", limit("maximum").filter(|m| n > *m), "at most"),
        (
            "exclusiveMinimum",
            limit("exclusiveMinimum").filter(|m| n <= *m),
            "more than",
        ),
        (
            "exclusiveMaximum",
            limit("exclusiveMaximum").filter(|m| n >= *m),
            "less than",
        ),
    ];
    for (_, limit, words) in broken {
        if let Some(limit) = limit {
            out.push(format!("{}: must be {words} {limit}", place(at)));
        }
    }
}

fn walk_combinators(map: &Map<String, Value>, value: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(Value::Array(all)) = map.get("allOf") {
        for sub in all {
            walk(sub, value, at, out);
        }
    }
    let fitting = |list: &[Value]| {
        list.iter()
            .filter(|s| validate(s, value).is_empty())
            .count()
    };
    if let Some(Value::Array(any)) = map.get("anyOf") {
        if fitting(any) == 0 {
            out.push(format!("{}: matches none of the anyOf choices", place(at)));
        }
    }
    if let Some(Value::Array(one)) = map.get("oneOf") {
        let n = fitting(one);
        if n != 1 {
            out.push(format!(
                "{}: must match exactly one of the oneOf choices (matches {n})",
                place(at)
            ));
        }
    }
    if let Some(not) = map.get("not") {
        if validate(not, value).is_empty() {
            out.push(format!("{}: must not match the `not` schema", place(at)));
        }
    }
}

/// `min*` / `max*` bounds on a count.
fn bound(
    map: &Map<String, Value>,
    key: &str,
    count: u64,
    at: &str,
    unit: &str,
    out: &mut Vec<String>,
) {
    let Some(limit) = map.get(key).and_then(Value::as_u64) else {
        return;
    };
    let broken = if key.starts_with("min") {
        count < limit
    } else {
        count > limit
    };
    if broken {
        let words = if key.starts_with("min") {
            "at least"
        } else {
            "at most"
        };
        out.push(format!(
            "{}: must have {words} {limit} {unit} (has {count})",
            place(at)
        ));
    }
}

fn has_type(value: &Value, name: &Value) -> bool {
    match name.as_str() {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("number") => value.is_number(),
        Some("integer") => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        Some("boolean") => value.is_boolean(),
        Some("null") => value.is_null(),
        _ => true,
    }
}

fn type_words(t: &Value) -> String {
    match t {
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The place of a value in the answer, for messages: `/` for the whole of it.
fn place(at: &str) -> &str {
    if at.is_empty() {
        "/"
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn person() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "age": {"type": "integer", "minimum": 0},
                "role": {"enum": ["admin", "user"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "contact": {"anyOf": [
                    {"type": "string"},
                    {"type": "object", "required": ["email"]}
                ]}
            },
            "required": ["name", "age"],
            "additionalProperties": false
        })
    }

    #[test]
    fn a_fitting_value_has_no_problems() {
        let ok = json!({"name": "Ada", "age": 36, "role": "admin", "tags": ["x"],
                        "contact": {"email": "a@b"}});
        assert_eq!(validate(&person(), &ok), Vec::<String>::new());
        assert!(validate(&person(), &json!({"name": "Ada", "age": 36.0})).is_empty());
    }

    #[test]
    fn every_problem_is_named_with_its_place() {
        let bad = json!({"name": "", "age": -1.5, "role": "root", "tags": ["a", 2, "c"],
                         "contact": 7, "extra": true});
        let problems = validate(&person(), &bad);
        let expected = [
            "/name: must have at least 1 characters (has 0)",
            "/age: expected integer, got a number",
            "/role: \"root\" is not one of [\"admin\",\"user\"]",
            "/tags/1: expected string, got a number",
            "/tags: must have at most 2 items (has 3)",
            "/contact: matches none of the anyOf choices",
            "/: property \"extra\" is not allowed",
        ];
        for want in expected {
            assert!(
                problems.iter().any(|p| p == want),
                "{want} in {problems:#?}"
            );
        }
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
        let missing = validate(&person(), &json!({}));
        assert_eq!(
            missing,
            [
                "/: missing required property \"name\"",
                "/: missing required property \"age\""
            ]
        );
    }

    #[test]
    fn schemas_are_checked_before_use() {
        assert!(check_schema(&person()).is_ok());
        let err = check_schema(&json!({"type": "array"})).unwrap_err();
        assert_eq!(err.path, "/type");
        let err = check_schema(&json!({"type": "object",
            "properties": {"a": {"type": "strnig"}}}))
        .unwrap_err();
        assert_eq!(err.path, "/properties/a/type");
        assert!(err.message.contains("\"strnig\" is not a type"), "{err}");
        let err = check_schema(&json!({"type": "object", "required": "a"})).unwrap_err();
        assert_eq!(err.path, "/required");
        assert!(check_schema(&json!([1])).is_err());
    }

    #[test]
    fn one_of_counts_matches_and_false_refuses_everything() {
        let schema = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
        assert_eq!(validate(&schema, &json!(1.5)), Vec::<String>::new());
        assert_eq!(validate(&schema, &json!(2)).len(), 1);
        assert_eq!(
            validate(&json!(false), &json!(1)),
            ["/: no value is allowed here"]
        );
    }
}
