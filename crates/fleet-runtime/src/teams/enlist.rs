//! The steps every new teammate goes through, wherever it runs: its blueprint (what it is
//! built from, kept to bring it back), its record in the team file, and its place in the
//! roster — undone when the file cannot take it.

use super::mate::Mate;
use super::roster::Team;
use crate::definitions::AgentDefinition;
use crate::subagent::{AgentInput, Blueprint, Kind, MemberSpec, ParentView};
use fleet_store::team::Member;
use fleet_tools::ToolError;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Who the new teammate is in its team.
pub(super) struct Enlistee<'a> {
    pub team: &'a Team,
    pub name: &'a str,
    pub color: String,
    pub plan_required: bool,
}

impl Enlistee<'_> {
    /// Its blueprint: the definition `def` as a member of the team, on `model` in `cwd`.
    pub(super) fn blueprint(
        &self,
        parent: &Arc<ParentView>,
        def: &Arc<AgentDefinition>,
        input: &AgentInput,
        model: &str,
        cwd: PathBuf,
        mcp: Arc<crate::subagent::mcp::ChildMcp>,
    ) -> Arc<Blueprint> {
        let spec = Arc::new(MemberSpec {
            team: self.team.name.clone(),
            name: self.name.to_string(),
            color: self.color.clone(),
            plan_required: self.plan_required,
            exit: Arc::new(AtomicBool::new(false)),
        });
        Arc::new(Blueprint {
            kind: Kind::Defined(def.clone()),
            parent: parent.clone(),
            description: input.description.clone(),
            name: Some(self.name.to_string()),
            model: model.to_string(),
            cwd,
            depth: 1,
            member: Some(spec),
            worktree: None,
            mcp,
        })
    }
}

/// Its record in the team file, as Claude Code writes a spawned member.
pub(super) fn record(
    mate: &Mate,
    team: &Team,
    input: &AgentInput,
    def: &AgentDefinition,
) -> Member {
    Member {
        model: Some(mate.model.clone()),
        color: Some(mate.color.clone()),
        plan_mode_required: mate
            .blueprint
            .member
            .as_ref()
            .is_some_and(|m| m.plan_required),
        transcript_id: Some(mate.transcript_id.clone()),
        prompt: Some(input.prompt.clone()),
        description: Some(input.description.clone()),
        ..Member::new(
            &mate.name,
            &team.name,
            &def.name,
            &mate.blueprint.cwd.display().to_string(),
        )
    }
}

/// Adds `mate` to the roster and `member` to the team file; neither stays when the other
/// fails.
pub(super) fn enroll(team: &Team, mate: Arc<Mate>, member: Member) -> Result<(), ToolError> {
    let name = mate.name.clone();
    if !team.add_mate(mate) {
        return Err(ToolError::Failed(format!(
            "The team already has a member named {name:?}. Choose another name, or use \
             SendMessage to reach it."
        )));
    }
    let recorded = team.store.update(&team.name, |config| {
        config.members.retain(|m| m.name != name);
        config.members.push(member);
    });
    if let Err(err) = recorded {
        team.remove_mate(&name);
        return Err(ToolError::Failed(format!(
            "Cannot add {name:?} to the team: {err}"
        )));
    }
    Ok(())
}
