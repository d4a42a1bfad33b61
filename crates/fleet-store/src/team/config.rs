//! The team file's contents: the team and its roster, camelCase on disk as Claude Code writes
//! `config.json` (`agentId`, `joinedAt`, `backendType`, …).
//!
//! Fields fleet does not model (Claude Code's `tmuxPaneId`, `subscriptions`, `leadProcess`,
//! `isActive`, …) are kept in `extra` and written back, so a read-modify-write by fleet never
//! drops what another tool put there.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The backend of a teammate that runs inside the lead's process.
pub const IN_PROCESS: &str = "in-process";

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    pub backend: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub status: MemberStatus,
    #[serde(default)]
    pub plan_mode_required: bool,
    /// The permission mode it switched to once its plan was approved (`default`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
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

fn in_process() -> String {
    IN_PROCESS.to_string()
}

impl Member {
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
        assert_eq!(alpha.backend, "in-process");
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

    #[test]
    fn backend_is_accepted_for_backend_type_and_written_as_backend_type() {
        let member: Member = serde_json::from_str(
            r#"{"agentId":"a@t","name":"a","backend":"tmux","status":"stopped"}"#,
        )
        .expect("parses");
        assert_eq!(member.backend, "tmux");
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
