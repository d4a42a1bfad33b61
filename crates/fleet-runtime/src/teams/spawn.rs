//! The Agent tool's teammate mode (`name` given), and bringing a stopped member back: when a
//! message reaches it, or when the session that led the team is resumed.

use super::enlist::{self, Enlistee};
use super::mate::{Mate, MateState};
use super::roster::{Team, Teams};
use super::{RevivalError, RevivalProblem, LEAD_NAME};
use crate::context::AgentContext;
use crate::subagent::{AgentInput, Blueprint, Kind, MemberSpec, ParentView, Run, Spawner, Start};
use fleet_protocol::team::render;
use fleet_protocol::{BackendType, ContentBlock, Message, Role, TeamEvent};
use fleet_store::team::{validate_member_name, MemberStatus};
use fleet_tools::permissions::PermissionMode;
use fleet_tools::{ToolContext, ToolError, ToolOutput};
use serde_json::json;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What a member cut off mid-turn by a crash reads when its session is resumed.
const RESUMED_MID_TURN: &str = "<system-reminder>\nfleet was restarted while you were working, \
so your last turn was cut off. Check what you had done, then continue where you left off.\n\
</system-reminder>";

impl Teams {
    /// Starts a teammate for the Agent call `input` (which has a `name`), built by `spawner`.
    pub(crate) async fn spawn_teammate(
        &self,
        spawner: &Arc<Spawner>,
        parent: &Arc<ParentView>,
        input: AgentInput,
        name: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let teams = self;
        if self.membership().is_some()
            || AgentContext::current().is_some_and(|c| c.teammate().is_some())
        {
            return Err(ToolError::failed(
                "Teammates cannot spawn other teammates — the team roster is flat. Leave out \
                 `name` to start an ordinary subagent, or ask the lead to add a member.",
            ));
        }
        if parent.agent_id != "main" {
            return Err(ToolError::failed(
                "Only the team lead (the session's main agent) can add teammates; leave out \
                 `name` to start an ordinary subagent.",
            ));
        }
        validate_member_name(name)
            .map_err(|err| ToolError::bad_value_from("name", err.to_string(), err))?;
        if input.isolation.is_some() {
            return Err(ToolError::bad_value(
                "isolation",
                "A teammate runs in the team's folder: leave out `isolation`, or leave out \
                 `name` to start an isolated subagent.",
            ));
        }
        let def = spawner
            .settings()
            .definition(input.subagent_type.as_deref())?;
        spawner.isolation().check(&def)?;
        let team = teams.get_or_create(&ctx.cwd)?;
        if let Some(existing) = team.mate(name) {
            let state = match existing.state() {
                MateState::Stopped => "stopped; a SendMessage to it brings it back",
                _ => "running",
            };
            return Err(ToolError::bad_value(
                "name",
                format!(
                    "The team already has a member named {name:?} ({state}). Choose another \
                     name, or use SendMessage to reach it."
                ),
            ));
        }
        let cwd = spawner
            .settings()
            .child_cwd(input.cwd.as_deref(), &ctx.cwd)?;
        if let Some(panes) = teams.settings.panes.clone() {
            let recruit = super::pane::Recruit {
                parent,
                input: &input,
                name,
                def,
                cwd,
            };
            return self
                .spawn_pane_teammate(spawner, recruit, &team, &panes)
                .await;
        }
        let model = spawner
            .settings()
            .child_model(parent, &def, input.model.as_deref());
        // Its required MCP servers, before anything else is made for it.
        let mcp = Arc::new(spawner.mcp().child(&def).await?);
        let plan_required = parent.permissions.mode() == PermissionMode::Plan;
        let color = team.next_color();
        let enlistee = Enlistee {
            team: &team,
            name,
            color: color.clone(),
            plan_required,
        };
        let bp = enlistee.blueprint(parent, &def, &input, &model, cwd.clone(), mcp.clone());
        let others: Vec<String> = std::iter::once("main".to_string())
            .chain(
                team.mates()
                    .iter()
                    .filter(|m| m.state() != MateState::Stopped)
                    .map(|m| m.name.clone()),
            )
            .collect();
        let mut blocks = vec![ContentBlock::text(render::initial_prompt(
            LEAD_NAME,
            Some(&input.description),
            &input.prompt,
        ))];
        if others.len() > 1 {
            if let Some(reminder) = render::roster_reminder(&others) {
                blocks.push(ContentBlock::text(reminder));
            }
        }
        let transcript_id = transcript_id(name);
        let built = spawner.build(
            &bp,
            Start {
                agent_id: transcript_id.clone(),
                history: Vec::new(),
                write_history: false,
                prompt: Message::with_blocks(Role::User, blocks),
                tool_use_id: ctx.tool_use_id.clone().unwrap_or_default(),
                request_id: ctx.request_id.clone(),
                transcript_after: None,
                run: Run::new(CancellationToken::new()),
            },
        );
        let child = match built {
            Ok(child) => child,
            Err(err) => {
                mcp.stop().await;
                return Err(err);
            }
        };
        let mailbox = team.mailbox(name)?;
        let mate = Arc::new(Mate::new(
            name,
            &team.name,
            transcript_id.clone(),
            color.clone(),
            bp.clone(),
            mailbox,
            plan_required,
        ));
        enlist::enroll(
            &team,
            mate.clone(),
            enlist::record(&mate, &team, &input, &def),
        )?;
        self.announce(spawner, &team, &mate, false).await;
        let prompt = child.prompt;
        tokio::spawn(mate.clone().live(
            team.clone(),
            child.agent,
            child.sink,
            child.context,
            Some(prompt),
        ));
        Ok(spawned(&mate, &team, &def.name))
    }

    /// Brings a stopped member back from its transcript, to read its mail (or, cut off by a
    /// crash, to go on with `first`). Does nothing when it is already running.
    pub(crate) async fn revive(
        &self,
        spawner: &Arc<Spawner>,
        team: &Arc<Team>,
        mate: &Arc<Mate>,
        first: Option<Message>,
    ) -> Result<bool, RevivalError> {
        if mate.pane.is_some() {
            return self.relaunch_pane(spawner, team, mate).await;
        }
        if !mate.claim_for_revival() {
            return Ok(false);
        }
        let started =
            spawner
                .settings()
                .history(&mate.transcript_id)
                .and_then(|(history, last_uuid)| {
                    spawner.build(
                        &mate.blueprint,
                        Start {
                            agent_id: mate.transcript_id.clone(),
                            history,
                            write_history: false,
                            prompt: Message::user_text(""),
                            tool_use_id: String::new(),
                            request_id: None,
                            transcript_after: last_uuid,
                            run: Run::new(CancellationToken::new()),
                        },
                    )
                });
        let child = match started {
            Ok(child) => child,
            Err(err) => {
                mate.mark_stopped();
                return Err(RevivalError {
                    name: mate.name.clone(),
                    why: RevivalProblem::Start(Box::new(err)),
                });
            }
        };
        mate.remember_delivered(spawner.settings().delivered_mail_of(&mate.transcript_id));
        self.announce(spawner, team, mate, true).await;
        tokio::spawn(mate.clone().live(
            team.clone(),
            child.agent,
            child.sink,
            child.context,
            first,
        ));
        Ok(true)
    }

    /// Takes up the team a resumed session led: every member is known again, those that were
    /// running or have unread mail are brought back (reading that mail), the others wait for
    /// a message.
    /// `lead_read` is the team mail the lead's transcript says it read, which is not
    /// delivered again.
    pub async fn restore_team(
        &self,
        spawner: &Arc<Spawner>,
        lead_read: std::collections::HashSet<String>,
    ) -> Result<Option<String>, super::TeamSetupError> {
        self.set_lead_delivered(lead_read);
        let Some(team) = self.restore()? else {
            return Ok(None);
        };
        let config = team.config()?;
        let parent = spawner.main_view().ok_or(super::TeamSetupError::NotReady)?;
        for member in config.members.iter().filter(|m| m.name != LEAD_NAME) {
            let Some(transcript_id) = member.transcript_id.clone() else {
                continue;
            };
            if member.backend != BackendType::InProcess {
                // A pane teammate's process ended with its old lead's; it is not brought
                // back into this one.
                team.update_member(&member.name, |m| m.status = MemberStatus::Stopped);
                continue;
            }
            let def = spawner
                .agents()
                .get(&member.agent_type)
                .or_else(|| spawner.agents().get("general-purpose"))
                .cloned()
                .ok_or(super::TeamSetupError::NoGeneralPurpose)?;
            let spec = Arc::new(MemberSpec {
                team: team.name.clone(),
                name: member.name.clone(),
                color: member.color.clone().unwrap_or_else(|| team.next_color()),
                plan_required: member.plan_mode_required && !member.has_mode(),
                exit: Arc::new(AtomicBool::new(false)),
            });
            let mcp = Arc::new(spawner.mcp().restored(&member.name, &def).await);
            let bp = Arc::new(Blueprint {
                kind: Kind::Defined(def),
                parent: parent.clone(),
                description: member.description.clone().unwrap_or_default(),
                name: Some(member.name.clone()),
                model: member.model.clone().unwrap_or_else(|| parent.model.clone()),
                cwd: std::path::PathBuf::from(&member.cwd),
                depth: 1,
                member: Some(spec.clone()),
                worktree: None,
                mcp,
            });
            let mailbox = team.mailbox(&member.name)?;
            let mate = Arc::new(Mate::new(
                &member.name,
                &team.name,
                transcript_id,
                spec.color.clone(),
                bp,
                mailbox,
                spec.plan_required,
            ));
            mate.mark_stopped();
            if !team.add_mate(mate.clone()) {
                continue;
            }
            spawner.ledger().register(
                &mate.agent_id,
                &mate.agent_type,
                Some("main"),
                1,
                &mate.model,
            );
            let first = match member.status {
                // Mail sent while it was stopped (`fleet team send`, a message queued before
                // the lead ended) is what brings it back: it reads that mail first.
                MemberStatus::Stopped if mate.has_mail() => None,
                MemberStatus::Stopped => continue,
                MemberStatus::Active => Some(Message::user_text(RESUMED_MID_TURN)),
                MemberStatus::Idle => None,
            };
            if let Err(err) = self.revive(spawner, &team, &mate, first).await {
                tracing::warn!("{err}");
            }
        }
        self.ensure_lead_poller(spawner, &team);
        Ok(Some(team.name.clone()))
    }
}

impl Teams {
    /// A member runs (again, when `resumed`): in the ledger, active in the team file,
    /// announced on the stream, and its mail to the lead read.
    pub(super) async fn announce(
        &self,
        spawner: &Arc<Spawner>,
        team: &Arc<Team>,
        mate: &Mate,
        resumed: bool,
    ) {
        if resumed {
            team.update_member(&mate.name, |m| m.status = MemberStatus::Active);
            spawner.ledger().reopen(&mate.agent_id);
        } else {
            spawner.ledger().register(
                &mate.agent_id,
                &mate.agent_type,
                Some("main"),
                1,
                &mate.model,
            );
        }
        team.emit(TeamEvent::TeammateSpawned {
            team: team.name.clone(),
            name: mate.name.clone(),
            agent_id: mate.agent_id.clone(),
            agent_type: mate.agent_type.clone(),
            model: mate.model.clone(),
            color: mate.color.clone(),
            resumed,
        })
        .await;
        self.ensure_lead_poller(spawner, team);
    }
}

/// `a<name>-<16 hex>`, the id a teammate's transcript is filed under (Claude Code's shape).
fn transcript_id(name: &str) -> String {
    let uuid = uuid::Uuid::new_v4().simple().to_string();
    format!("a{name}-{}", &uuid[..16])
}

fn spawned(mate: &Mate, team: &Team, agent_type: &str) -> ToolOutput {
    ToolOutput::text(format!(
        "Spawned successfully. ({name} is a teammate: it keeps running between tasks and talks \
         through mailboxes; message it with SendMessage, and shut it down with a \
         shutdown_request when the work is done.)\nagent_id: {id}\nname: {name}\nteam_name: \
         {team}\nThe agent is now running and will receive instructions via mailbox.",
        name = mate.name,
        id = mate.agent_id,
        team = team.name,
    ))
    .with_structured(json!({
        "status": "teammate_spawned",
        "agent_id": mate.agent_id,
        "name": mate.name,
        "team_name": team.name,
        "color": mate.color,
        "agent_type": agent_type,
        "model": mate.model,
        "plan_mode_required": mate.blueprint.member.as_ref().is_some_and(|m| m.plan_required),
    }))
}
