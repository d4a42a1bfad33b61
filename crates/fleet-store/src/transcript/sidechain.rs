//! Subagent transcripts ("sidechains"): `projects/<slug>/<session>/subagents/agent-<id>.jsonl`.
//!
//! A session may run thousands of subagents at once; holding a file open for each would run
//! out of file descriptors (the sockets to the model need them too). So the file is opened for
//! each entry and closed again, and the position in the `parentUuid` chain is kept in memory
//! instead of being read back from the file each time.

use super::{TranscriptEntry, TranscriptWriter};
use crate::error::Result;
use crate::home::FleetHome;
use crate::session::validate_session_id;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct SidechainWriter {
    path: PathBuf,
    session_id: String,
    agent_id: String,
    cwd: String,
    last_uuid: Option<String>,
}

impl SidechainWriter {
    /// The transcript of subagent `agent_id` of session `session_id`, started in `cwd` (the
    /// project folder the session belongs to decides the path). Nothing is created until the
    /// first entry.
    pub fn new(home: &FleetHome, cwd: &Path, session_id: &str, agent_id: &str) -> Result<Self> {
        validate_session_id(session_id)?;
        validate_session_id(agent_id)?;
        let path = Self::path_for(home, cwd, session_id, agent_id);
        Ok(Self {
            path,
            session_id: session_id.to_owned(),
            agent_id: agent_id.to_owned(),
            cwd: std::path::absolute(cwd)
                .unwrap_or_else(|_| cwd.to_path_buf())
                .to_string_lossy()
                .into_owned(),
            last_uuid: None,
        })
    }

    /// Where the transcript of `agent_id` is (or will be).
    pub fn path_for(home: &FleetHome, cwd: &Path, session_id: &str, agent_id: &str) -> PathBuf {
        home.project_dir(cwd)
            .join(session_id)
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"))
    }

    /// Continues a transcript whose last entry is `last_uuid` (resuming the agent), so the
    /// `parentUuid` chain runs on unbroken.
    pub fn continuing_after(mut self, last_uuid: Option<String>) -> Self {
        self.last_uuid = last_uuid;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry, marked as a sidechain of the session and naming the agent.
    pub fn append(&mut self, entry: TranscriptEntry) -> Result<TranscriptEntry> {
        let entry = entry
            .with_extra("isSidechain", true)
            .with_extra("agentId", self.agent_id.clone());
        let mut writer = TranscriptWriter::reopen(
            &self.path,
            &self.session_id,
            &self.cwd,
            self.last_uuid.take(),
        )?;
        let result = writer.append(entry);
        self.last_uuid = writer.last_uuid().map(str::to_owned);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Transcript;
    use fleet_protocol::{Message, Role};

    #[test]
    fn entries_chain_and_name_the_agent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = FleetHome::at(dir.path().join("home"));
        let cwd = dir.path().join("project");
        let mut writer = SidechainWriter::new(&home, &cwd, "sess-1", "a0123").expect("writer");
        assert!(
            !writer.path().exists(),
            "nothing is created before the first entry"
        );
        let first = writer
            .append(TranscriptEntry::message(Message::user_text("go")))
            .expect("append");
        let second = writer
            .append(TranscriptEntry::message(Message::with_blocks(
                Role::Assistant,
                vec![fleet_protocol::ContentBlock::text("done")],
            )))
            .expect("append");
        assert_eq!(second.parent_uuid.as_deref(), Some(first.uuid.as_str()));
        assert!(writer
            .path()
            .ends_with("sess-1/subagents/agent-a0123.jsonl"));
        let loaded = Transcript::load(writer.path()).expect("load");
        assert_eq!(loaded.messages().len(), 2);
        let raw = std::fs::read_to_string(writer.path()).expect("read");
        assert_eq!(raw.matches("\"isSidechain\":true").count(), 2);
        assert_eq!(raw.matches("\"agentId\":\"a0123\"").count(), 2);
    }

    #[test]
    fn ids_that_could_escape_the_folder_are_refused() {
        let home = FleetHome::at("/tmp/none");
        assert!(SidechainWriter::new(&home, Path::new("/p"), "s", "../x").is_err());
    }
}
