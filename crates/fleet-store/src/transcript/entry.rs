//! One line of a transcript.

use std::sync::Arc;
use std::time::SystemTime;

use fleet_protocol::{Message, Role};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The `subtype` of the `system` record a compaction leaves, as Claude Code names it.
pub const COMPACT_BOUNDARY: &str = "compact_boundary";

/// What a line records. The names match Claude Code's transcript `type` field; kinds fleet does
/// not know (Claude Code writes more, such as `file-history-snapshot`) are kept by name so that
/// reading and rewriting a line loses nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    User,
    Assistant,
    System,
    Summary,
    #[serde(untagged)]
    Other(String),
}

/// One transcript line: a conversation message, or a record about the session (`system`,
/// `summary`) that the model never sees.
///
/// `uuid`, `session_id`, `timestamp` and `cwd` may be left empty when building an entry:
/// [`TranscriptWriter::append`](crate::TranscriptWriter::append) fills them in. When reading
/// lines written by other tools they may also be empty, since some kinds (Claude Code's
/// `summary`) carry none of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    #[serde(rename = "type")]
    pub kind: EntryKind,
    #[serde(default)]
    pub uuid: String,
    /// The entry this one follows. Written as `null` for the first entry, as Claude Code does,
    /// so readers can tell "start of the chain" from "field missing".
    #[serde(default)]
    pub parent_uuid: Option<String>,
    #[serde(default)]
    pub session_id: String,
    /// RFC 3339, UTC, milliseconds (`2025-01-31T12:00:00.123Z`).
    #[serde(default)]
    pub timestamp: String,
    /// The working folder when the entry was written; a string, not a path, so that a folder
    /// name that is not UTF-8 can never make a write fail.
    #[serde(default)]
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// Any other fields (`toolUseResult`, `isMeta`, `subtype`, `content`, …), kept in order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Fields written after `extra` from values the rest of the process shares (a committed
    /// message's structured tool results, often whole files), so that the line of a reply to
    /// 10,000 calls is written without a deep copy of them first. A line read back has them in
    /// `extra`.
    #[serde(flatten, skip_deserializing)]
    pub shared: SharedFields,
}

/// Extra fields that hold shared values: see [`TranscriptEntry::shared`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedFields(Vec<(String, SharedField)>);

/// One shared field's value: a value, or an object of values by key.
#[derive(Debug, Clone, PartialEq)]
pub enum SharedField {
    Value(Arc<Value>),
    Object(Vec<(String, Arc<Value>)>),
}

impl SharedFields {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for SharedFields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, field) in &self.0 {
            match field {
                SharedField::Value(v) => map.serialize_entry(key, v.as_ref())?,
                SharedField::Object(many) => map.serialize_entry(key, &ObjectOf(many))?,
            }
        }
        map.end()
    }
}

/// Serializes `(key, value)` pairs as one JSON object, borrowing every value.
struct ObjectOf<'a>(&'a [(String, Arc<Value>)]);

impl Serialize for ObjectOf<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value.as_ref())?;
        }
        map.end()
    }
}

impl TranscriptEntry {
    /// An empty entry of `kind`, for the writer to stamp.
    pub fn new(kind: EntryKind) -> Self {
        Self {
            kind,
            uuid: String::new(),
            parent_uuid: None,
            session_id: String::new(),
            timestamp: String::new(),
            cwd: String::new(),
            message: None,
            extra: Map::new(),
            shared: SharedFields::default(),
        }
    }

    /// A conversation message; the kind follows the message's role.
    pub fn message(message: Message) -> Self {
        let kind = match message.role {
            Role::User => EntryKind::User,
            Role::Assistant => EntryKind::Assistant,
        };
        Self {
            message: Some(message),
            ..Self::new(kind)
        }
    }

    /// A `system` record (`subtype` such as `"compact_boundary"` or `"api_error"`) with a text for
    /// people reading the transcript. It is never sent to the model.
    pub fn system(subtype: impl Into<String>, content: impl Into<String>) -> Self {
        Self::new(EntryKind::System)
            .with_extra("subtype", subtype.into())
            .with_extra("content", content.into())
    }

    /// Whether this is the record of a compaction, after which the conversation starts again
    /// from a summary (see [`COMPACT_BOUNDARY`]).
    pub fn is_compact_boundary(&self) -> bool {
        self.kind == EntryKind::System
            && self.extra.get("subtype").and_then(Value::as_str) == Some(COMPACT_BOUNDARY)
    }

    /// Adds or replaces one extra field.
    pub fn with_extra(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        self.shared.0.retain(|(k, _)| *k != key);
        self.extra.insert(key, value.into());
        self
    }

    /// Adds a field whose value the rest of the process shares; it is written as
    /// [`Self::with_extra`] would write it, without a copy (see [`Self::shared`]).
    pub fn with_shared(mut self, key: impl Into<String>, value: SharedField) -> Self {
        let key = key.into();
        self.extra.remove(&key);
        self.shared.0.retain(|(k, _)| *k != key);
        self.shared.0.push((key, value));
        self
    }

    /// Marks the entry as `isMeta`: produced by fleet rather than typed by the user (a task
    /// notification, an instruction file), so views can hide or label it.
    pub fn meta(self) -> Self {
        self.with_extra("isMeta", true)
    }

    pub fn is_meta(&self) -> bool {
        self.extra.get("isMeta").and_then(Value::as_bool) == Some(true)
    }

    /// The timestamp as a time, if it is present and well formed.
    pub fn time(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.timestamp).ok()
    }
}

/// Now, in the transcript's timestamp format.
pub(crate) fn now_timestamp() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}
