//! The team file's contents: the team and its roster, camelCase on disk as Claude Code writes
//! `config.json` (`agentId`, `joinedAt`, `backendType`, …).
//!
//! Fields fleet does not model (Claude Code's `tmuxPaneId`, `subscriptions`, `leadProcess`,
//! `isActive`, …) are kept in `extra` and written back, so a read-modify-write by fleet never
//! drops what another tool put there. The same holds for names from a shared vocabulary that
//! this build does not know: a `backendType` is an open [`BackendType`] (kept as `Other`), and
//! a `mode` that is not a [`PermissionMode`] is kept in `extra` (see [`Member::mode`]).

use fleet_protocol::{BackendType, PermissionMode};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamConfig {
    /// The team's name, which is also its folder name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Epoch milliseconds.
    pub created_at: u64,
    /// `<lead name>@<team>`.
    pub lead_agent_id: String,
    /// The session that leads the team (its transcript id).
    #[serde(default)]
    pub lead_session_id: String,
    /// The Unix socket the lead's session accepts `uds:` messages on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// The lead first, then teammates in the order they joined.
    #[serde(default)]
    pub members: Vec<Member>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One member of the roster.
///
/// Its serde impls are derived as inherent functions (`remote = "Self"`) and wrapped by the
/// trait impls below, which keep a `mode` this build does not know; call it through the
/// traits (`serde_json::from_*`, `to_*`), as everything does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Member {
    /// `<name>@<team>`.
    pub agent_id: String,
    pub name: String,
    /// The agent definition it runs (`team-lead` for the lead, `general-purpose`, …).
    #[serde(default)]
    pub agent_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Epoch milliseconds.
    #[serde(default)]
    pub joined_at: u64,
    /// `in-process`, `tmux`, … Written as `backendType` (Claude Code's name); `backend` is
    /// accepted on read.
    #[serde(rename = "backendType", alias = "backend", default = "in_process")]
    pub backend: BackendType,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub status: MemberStatus,
    #[serde(default)]
    pub plan_mode_required: bool,
    /// The permission mode it switched to once its plan was approved (`default`, …).
    ///
    /// `None` also when the file holds a mode this build does not know (a newer Claude
    /// Code's): fleet cannot apply such a mode, so it does not pretend to have one, but
    /// config.json is rewritten on every roster change, so the name is kept in `extra` and
    /// written back as it was ([`Member::has_mode`] sees it). Setting a mode here replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<PermissionMode>,
    /// The agent id of its transcript, to bring its conversation back on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_id: Option<String>,
    /// The prompt it was spawned with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The Agent call's short description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where a member is in its life. Files without a status (Claude Code's) read as `active`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberStatus {
    /// Working on a turn.
    #[default]
    Active,
    /// Between turns, waiting for mail.
    Idle,
    /// Shut down; it can be resumed by a message.
    Stopped,
}

fn in_process() -> BackendType {
    BackendType::InProcess
}

/// The key of [`Member::mode`], where a mode this build does not know waits in `extra`.
const MODE_KEY: &str = "mode";

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let unknown_mode = match fields.get(MODE_KEY) {
            None | Some(Value::Null) => None,
            Some(mode) if PermissionMode::deserialize(mode).is_ok() => None,
            Some(_) => fields.shift_remove(MODE_KEY),
        };
        let mut member =
            Member::deserialize(Value::Object(fields)).map_err(serde::de::Error::custom)?;
        if let Some(mode) = unknown_mode {
            member.extra.insert(MODE_KEY.to_string(), mode);
        }
        Ok(member)
    }
}

impl Serialize for Member {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(unknown) = self.extra.get(MODE_KEY) else {
            return Member::serialize(self, serializer);
        };
        let mut rest = self.clone();
        rest.extra.shift_remove(MODE_KEY);
        if self.mode.is_some() {
            // A mode set since the file was read replaces the unknown one it held.
            return Member::serialize(&rest, serializer);
        }
        // The unknown name goes back where the field writes a mode (after `planModeRequired`,
        // which is always written), so the file's bytes are what they were when `mode` was a
        // plain string. Only members holding such a name take this slower path.
        let Value::Object(fields) =
            Member::serialize(&rest, serde_json::value::Serializer).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("a team member serialises as an object"));
        };
        let mut placed = Map::with_capacity(fields.len() + 1);
        for (key, value) in fields {
            let mode_follows = key == "planModeRequired";
            placed.insert(key, value);
            if mode_follows {
                placed.insert(MODE_KEY.to_string(), unknown.clone());
            }
        }
        placed.serialize(serializer)
    }
}

impl Member {
    /// Whether the file records a permission mode for it, known to this build or not (an
    /// approved plan, for instance, leaves one).
    pub fn has_mode(&self) -> bool {
        self.mode.is_some() || self.extra.contains_key(MODE_KEY)
    }

    /// A new in-process member `name@team`, active, joined now.
    pub fn new(name: &str, team: &str, agent_type: &str, cwd: &str) -> Self {
        Self {
            agent_id: agent_id(name, team),
            name: name.to_string(),
            agent_type: agent_type.to_string(),
            model: None,
            color: None,
            joined_at: epoch_ms(),
            backend: in_process(),
            cwd: cwd.to_string(),
            status: MemberStatus::Active,
            plan_mode_required: false,
            mode: None,
            transcript_id: None,
            prompt: None,
            description: None,
            extra: Map::new(),
        }
    }
}

impl TeamConfig {
    /// The member called `name` (names compare without regard to ASCII case, as they name
    /// inbox files).
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
    }

    pub fn member_mut(&mut self, name: &str) -> Option<&mut Member> {
        self.members
            .iter_mut()
            .find(|m| m.name.eq_ignore_ascii_case(name))
    }

    /// Whether a member (stopped ones included: they can be resumed) already has `name`.
    pub fn is_name_taken(&self, name: &str) -> bool {
        self.member(name).is_some()
    }

    /// `wanted` if free, else `wanted-2`, `wanted-3`, … (Claude Code's rule for a taken name).
    pub fn unique_member_name(&self, wanted: &str) -> String {
        if !self.is_name_taken(wanted) {
            return wanted.to_string();
        }
        (2..)
            .map(|n| format!("{wanted}-{n}"))
            .find(|candidate| !self.is_name_taken(candidate))
            .unwrap_or_else(|| wanted.to_string())
    }

    /// The lead's member record.
    pub fn lead(&self) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.agent_id == self.lead_agent_id)
    }

    /// Every member but the lead.
    pub fn teammates(&self) -> impl Iterator<Item = &Member> {
        self.members
            .iter()
            .filter(move |m| m.agent_id != self.lead_agent_id)
    }
}

/// `<name>@<team>`.
pub fn agent_id(name: &str, team: &str) -> String {
    format!("{name}@{team}")
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `team-config/02-two-in-process-teammates.json` from the reference, placeholders filled.
    const CLAUDE_CODE_CONFIG: &str = r#"{
  "name": "session-1a2b3c4d",
  "createdAt": 1764608400000,
  "leadAgentId": "team-lead@session-1a2b3c4d",
  "leadSessionId": "1a2b3c4d-0000-4000-8000-000000000000",
  "leadProcess": { "pid": 42, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1764608400000, "procStart": "123" },
  "members": [
    { "agentId": "team-lead@session-1a2b3c4d", "name": "team-lead", "agentType": "team-lead",
      "joinedAt": 1764608400000, "tmuxPaneId": "leader", "cwd": "/src/app", "subscriptions": [],
      "backendType": "in-process" },
    { "agentId": "alpha@session-1a2b3c4d", "name": "alpha", "color": "blue",
      "joinedAt": 1764608401000, "tmuxPaneId": "in-process", "subscriptions": [],
      "model": "claude-opus-5-5", "prompt": "You are TM-ALPHA.", "planModeRequired": false,
      "cwd": "/src/app", "backendType": "in-process" }
  ]
}"#;

    #[test]
    fn a_claude_code_team_file_reads_and_keeps_its_extra_fields() {
        let config: TeamConfig = serde_json::from_str(CLAUDE_CODE_CONFIG).expect("parses");
        assert_eq!(config.name, "session-1a2b3c4d");
        assert_eq!(config.created_at, 1_764_608_400_000);
        assert_eq!(config.lead().map(|m| m.name.as_str()), Some("team-lead"));
        let alpha = config.member("ALPHA").expect("alpha");
        assert_eq!(alpha.color.as_deref(), Some("blue"));
        assert_eq!(alpha.backend, BackendType::InProcess);
        assert_eq!(alpha.status, MemberStatus::Active);
        assert_eq!(
            alpha.extra.get("tmuxPaneId"),
            Some(&Value::from("in-process"))
        );
        assert!(config.extra.contains_key("leadProcess"));

        let written = serde_json::to_value(&config).expect("writes");
        assert_eq!(written["members"][1]["backendType"], "in-process");
        assert_eq!(written["members"][1]["tmuxPaneId"], "in-process");
        assert_eq!(written["leadProcess"]["pid"], 42);
        let back: TeamConfig = serde_json::from_value(written).expect("reads back");
        assert_eq!(back, config);
    }

    /// A member as Claude Code writes it (key order included), with `backendType` and `mode`
    /// filled in.
    fn claude_code_member(backend: &str, mode: &str) -> String {
        format!(
            r#"{{"agentId":"planner@s","name":"planner","color":"blue","joinedAt":1764608401000,"tmuxPaneId":"w3","subscriptions":[],"model":"claude-opus-5-5","prompt":"Plan first.","planModeRequired":true,"cwd":"/src/app","backendType":"{backend}","mode":"{mode}"}}"#
        )
    }

    #[test]
    fn a_backend_and_a_mode_fleet_does_not_know_still_read_and_are_written_back() {
        let text = claude_code_member("wezterm", "auto");
        let member: Member = serde_json::from_str(&text).expect("parses");
        assert_eq!(member.backend, BackendType::Other("wezterm".into()));
        assert_eq!(
            member.mode, None,
            "fleet cannot apply a mode it does not know"
        );
        assert!(member.has_mode(), "but the file does record one");
        assert_eq!(member.prompt.as_deref(), Some("Plan first."));

        // Written back with the names as they were, where a string field put them.
        let written = serde_json::to_string(&member).expect("writes");
        assert_eq!(
            written,
            r#"{"agentId":"planner@s","name":"planner","agentType":"","model":"claude-opus-5-5","color":"blue","joinedAt":1764608401000,"backendType":"wezterm","cwd":"/src/app","status":"active","planModeRequired":true,"mode":"auto","prompt":"Plan first.","tmuxPaneId":"w3","subscriptions":[]}"#
        );
        let again: Member = serde_json::from_str(&written).expect("reads back");
        assert_eq!(again, member);
        assert_eq!(serde_json::to_string(&again).expect("writes"), written);

        // Byte for byte what the same member with known names writes.
        let known: Member =
            serde_json::from_str(&claude_code_member("tmux", "acceptEdits")).expect("parses");
        assert_eq!(known.backend, BackendType::Tmux);
        assert_eq!(known.mode, Some(PermissionMode::AcceptEdits));
        assert!(known.has_mode());
        assert_eq!(
            serde_json::to_string(&known).expect("writes"),
            written
                .replace(r#""wezterm""#, r#""tmux""#)
                .replace(r#""auto""#, r#""acceptEdits""#)
        );
    }

    #[test]
    fn a_mode_set_by_fleet_replaces_the_unknown_one() {
        let mut member: Member =
            serde_json::from_str(&claude_code_member("in-process", "auto")).expect("parses");
        member.mode = Some(PermissionMode::Default);
        let written = serde_json::to_string(&member).expect("writes");
        assert_eq!(written.matches(r#""mode":"#).count(), 1, "{written}");
        assert!(written.contains(r#""mode":"default""#), "{written}");
        let back: Member = serde_json::from_str(&written).expect("reads back");
        assert_eq!(back.mode, Some(PermissionMode::Default));
        assert!(!back.extra.contains_key("mode"));
    }

    #[test]
    fn no_mode_or_a_null_one_is_none() {
        let member: Member =
            serde_json::from_str(r#"{"agentId":"a@t","name":"a","mode":null}"#).expect("parses");
        assert_eq!(member.mode, None);
        assert!(!member.has_mode());
        assert_eq!(member.backend, BackendType::InProcess);
        let written = serde_json::to_string(&member).expect("writes");
        assert!(!written.contains(r#""mode":"#), "{written}");
    }

    #[test]
    fn backend_is_accepted_for_backend_type_and_written_as_backend_type() {
        let member: Member = serde_json::from_str(
            r#"{"agentId":"a@t","name":"a","backend":"tmux","status":"stopped"}"#,
        )
        .expect("parses");
        assert_eq!(member.backend, BackendType::Tmux);
        assert_eq!(member.status, MemberStatus::Stopped);
        let text = serde_json::to_string(&member).expect("writes");
        assert!(text.contains(r#""backendType":"tmux""#), "{text}");
        assert!(!text.contains(r#""backend":"#), "{text}");
    }

    #[test]
    fn keys_are_camel_case_on_disk() {
        let mut member = Member::new("alpha", "t", "general-purpose", "/src");
        member.plan_mode_required = true;
        member.transcript_id = Some("aalpha-0123".into());
        let text = serde_json::to_string(&member).expect("writes");
        for key in [
            "\"agentId\":\"alpha@t\"",
            "\"agentType\":\"general-purpose\"",
            "\"joinedAt\":",
            "\"backendType\":\"in-process\"",
            "\"status\":\"active\"",
            "\"planModeRequired\":true",
            "\"transcriptId\":\"aalpha-0123\"",
        ] {
            assert!(text.contains(key), "{key} in {text}");
        }
    }

    #[test]
    fn taken_names_get_a_number() {
        let mut config: TeamConfig = serde_json::from_str(CLAUDE_CODE_CONFIG).expect("parses");
        assert!(config.is_name_taken("Alpha"));
        assert_eq!(config.unique_member_name("beta"), "beta");
        assert_eq!(config.unique_member_name("alpha"), "alpha-2");
        config
            .members
            .push(Member::new("alpha-2", "session-1a2b3c4d", "x", "/"));
        assert_eq!(config.unique_member_name("alpha"), "alpha-3");
        assert_eq!(config.teammates().count(), 2);
        if let Some(alpha) = config.member_mut("alpha") {
            alpha.status = MemberStatus::Idle;
        }
        assert_eq!(
            config.member("alpha").map(|m| m.status),
            Some(MemberStatus::Idle)
        );
    }
}
