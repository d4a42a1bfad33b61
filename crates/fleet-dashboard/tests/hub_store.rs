//! The hub against a real store in a temporary `$FLEET_HOME`, written with fleet-store's own
//! writers (so the format cannot drift), watched with real inotify. Waits are bounded and
//! generous; nothing asserts on time.

use crate::hub_common;

use std::path::Path;
use std::time::Duration;

use fleet_dashboard::api::{AgentKind, AgentState, TranscriptEntry};
use fleet_dashboard::Hub;
use fleet_protocol::{ContentBlock, Message};
use fleet_store::{FleetHome, SessionStore, SidechainWriter, TranscriptEntry as Line};
use hub_common::{agent, assistant, batch_where, user_blocks, WAIT};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_session_appears_and_its_growing_sidechain_changes_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let hub = Hub::open(home.clone()).expect("open");
    hub.watch().expect("watch");
    let mut list = hub.subscribe_sessions();
    assert!(hub.sessions().is_empty());

    let store = SessionStore::new(FleetHome::at(&home));
    let mut main = store.create_session(&cwd).expect("session");
    let id = main.session_id().to_owned();
    main.append(Line::message(Message::user_text("Fix the build")))
        .expect("append");
    main.append(assistant(vec![ContentBlock::tool_use(
        "toolu_1",
        "Agent",
        json!({"description": "look around", "subagent_type": "Explore", "prompt": "Survey the tree"}),
    )]))
    .expect("append");

    // Listed once its first line is read; its model comes with the second.
    tokio::time::timeout(WAIT, async {
        while !hub
            .sessions()
            .iter()
            .any(|s| s.id == id && s.model.is_some())
        {
            list.changed().await.expect("list channel");
        }
    })
    .await
    .expect("the new session was not listed with its model");
    let summary = hub
        .sessions()
        .into_iter()
        .find(|s| s.id == id)
        .expect("listed");
    assert_eq!(summary.title.as_deref(), Some("Fix the build"));
    assert_eq!(summary.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(summary.state, fleet_dashboard::api::SessionState::Live);
    let snapshot = hub.snapshot(&id).expect("snapshot");
    let main_node = snapshot
        .agents
        .iter()
        .find(|a| a.id == "main")
        .expect("main");
    assert_eq!(main_node.state, AgentState::RunningTool);
    assert_eq!(main_node.tool.as_deref(), Some("Agent"));
    assert!(main_node.cost_usd > 0.0, "the reply's usage is priced");

    let mut rx = hub.subscribe(&id).expect("subscribe");
    let child = "a0123456789abcdef";
    let mut side = SidechainWriter::new(&FleetHome::at(&home), &cwd, &id, child).expect("side");
    side.append(Line::message(Message::user_text("Survey the tree")))
        .expect("append");
    let batch = batch_where(&mut rx, |b| agent(b, child).is_some()).await;
    let node = agent(&batch, child).expect("child");
    assert_eq!(node.parent_id.as_deref(), Some("main"));
    assert_eq!(node.agent_type, "Explore");
    assert_eq!(node.description.as_deref(), Some("look around"));
    assert_eq!(node.kind, AgentKind::Subagent);
    assert_eq!(node.state, AgentState::WaitingForModel);
    assert!(batch.newest_event_ms.is_some());
    let mut follow = hub
        .subscribe_transcript(&id, child)
        .expect("a known agent can be followed");

    side.append(assistant(vec![ContentBlock::tool_use(
        "toolu_2",
        "Bash",
        json!({"command": "ls"}),
    )]))
    .expect("append");
    let batch = batch_where(&mut rx, |b| {
        agent(b, child).is_some_and(|n| n.state == AgentState::RunningTool)
    })
    .await;
    assert_eq!(
        agent(&batch, child).and_then(|n| n.tool.as_deref()),
        Some("Bash")
    );
    tokio::time::timeout(WAIT, follow.changed())
        .await
        .expect("the transcript's growth is told within the wait")
        .expect("follow channel");
    let page = hub.transcript(&id, child, 0).expect("page");
    assert!(matches!(&page.entries[..], [
        TranscriptEntry::User { .. },
        TranscriptEntry::ToolUse { name, .. },
    ] if name == "Bash"));
    assert!(!page.complete);

    side.append(user_blocks(vec![ContentBlock::tool_result(
        "toolu_2", "src\n", false,
    )]))
    .expect("append");
    side.append(assistant(vec![ContentBlock::text("All surveyed.")]))
        .expect("append");
    let batch = batch_where(&mut rx, |b| {
        agent(b, child).is_some_and(|n| n.state == AgentState::Done)
    })
    .await;
    let node = agent(&batch, child).expect("child");
    assert_eq!(node.turns, 2);
    assert!(node.ended_ms.is_some());
    let marks = hub.snapshot(&id).expect("snapshot").marks;
    assert!(marks
        .iter()
        .any(|m| m.agent_id == child && m.tool == "Bash"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcripts_page_fold_diffs_and_cut_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let store = SessionStore::new(FleetHome::at(&home));
    let mut main = store.create_session(&cwd).expect("session");
    let id = main.session_id().to_owned();
    for n in 0..1_200 {
        main.append(Line::message(Message::user_text(format!("line {n}"))))
            .expect("append");
    }
    main.append(assistant(vec![ContentBlock::tool_use(
        "e1",
        "Edit",
        json!({"file_path": "/p/a.rs", "old_string": "one\ntwo\n", "new_string": "one\nthree\n"}),
    )]))
    .expect("append");
    let long = format!(
        "ANTHROPIC_API_KEY=sk-ant-secretsecret\n{}",
        "x".repeat(30_000)
    );
    main.append(user_blocks(vec![ContentBlock::tool_result(
        "e1", long, false,
    )]))
    .expect("append");

    let hub = Hub::open(home).expect("open");
    let first = hub.transcript(&id, "main", 0).expect("page");
    assert_eq!(first.entries.len(), 500);
    assert_eq!(first.next, 500);
    assert!(matches!(&first.entries[0], TranscriptEntry::User { text, .. } if text == "line 0"));
    let second = hub.transcript(&id, "main", first.next).expect("page");
    assert_eq!(second.next, 1_000);
    assert!(matches!(&second.entries[0], TranscriptEntry::User { text, .. } if text == "line 500"));
    let third = hub.transcript(&id, "main", second.next).expect("page");
    assert_eq!(third.entries.len(), 202);
    assert_eq!(third.next, 1_202);
    let Some(TranscriptEntry::ToolUse { name, diff, .. }) = third.entries.get(200) else {
        panic!(
            "the edit is the 1,201st entry: {:?}",
            third.entries.get(200)
        );
    };
    assert_eq!(name, "Edit");
    assert_eq!(
        diff.as_deref(),
        Some(&[" one".to_string(), "-two".into(), "+three".into()][..])
    );
    let Some(TranscriptEntry::ToolResult {
        text, truncated, ..
    }) = third.entries.get(201)
    else {
        panic!("the result follows the edit");
    };
    assert!(*truncated);
    assert!(text.chars().count() <= 20_000 + 20);
    assert!(!text.contains("secretsecret"), "secrets are masked");
    let end = hub.transcript(&id, "main", third.next).expect("page");
    assert!(end.entries.is_empty());
    assert_eq!(end.next, 1_202);
    assert!(hub.transcript(&id, "nobody", 0).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_of_a_session_shows_its_members_mail_and_tasks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let fleet_home = FleetHome::at(&home);
    let store = SessionStore::new(fleet_home.clone());
    let mut main = store.create_session(&cwd).expect("session");
    let id = main.session_id().to_owned();
    main.append(Line::message(Message::user_text("Start a team")))
        .expect("append");
    let hub = Hub::open(home).expect("open");
    hub.watch().expect("watch");
    let mut rx = hub.subscribe(&id).expect("subscribe");

    let teams = fleet_store::TeamStore::new(&fleet_home);
    let lead = fleet_store::Member::new("team-lead", "", "team-lead", &cwd.to_string_lossy());
    let team = teams.create("crew", None, lead, &id).expect("team");
    teams
        .update(&team.name, |config| {
            config.members.push(fleet_store::Member::new(
                "alpha",
                &config.name,
                "general-purpose",
                &cwd.to_string_lossy(),
            ));
        })
        .expect("update");
    let inbox = fleet_store::Mailbox::open(&teams.inboxes_dir(&team.name), "alpha").expect("inbox");
    inbox
        .append(&fleet_protocol::MailEntry::new(
            "team-lead",
            "start on the parser",
            "2026-12-01T17:00:00.000Z",
            "m1",
        ))
        .expect("mail");
    // Alpha's idle notification, a protocol frame, in the lead's inbox.
    let lead_inbox =
        fleet_store::Mailbox::open(&teams.inboxes_dir(&team.name), "team-lead").expect("inbox");
    let idle = fleet_protocol::team::Frame::IdleNotification(
        fleet_protocol::team::frames::IdleNotification {
            from: "alpha".into(),
            timestamp: "2026-12-01T17:01:00.000Z".into(),
            idle_reason: Some("available".into()),
            result: Some("Parser started,\nnotes to follow".into()),
            ..Default::default()
        },
    );
    lead_inbox
        .append(&fleet_protocol::MailEntry::new(
            "alpha",
            idle.to_text(),
            "2026-12-01T17:01:00.000Z",
            "m2",
        ))
        .expect("mail");
    let tasks = fleet_store::TaskList::open(&fleet_home, &team.name).expect("tasks");
    tasks
        .create(fleet_store::tasklist::NewTask {
            subject: "Write notes".into(),
            ..Default::default()
        })
        .expect("task");

    let batch = batch_where(&mut rx, |b| {
        b.teams.iter().any(|t| {
            t.name == "crew"
                && t.members.iter().any(|m| m.name == "alpha")
                && t.messages.iter().any(|m| m.id == "m1")
                && t.messages.iter().any(|m| m.id == "m2")
                && t.tasks.iter().any(|x| x.subject == "Write notes")
        })
    })
    .await;
    let crew = batch.teams.iter().find(|t| t.name == "crew").expect("crew");
    let mail = crew.messages.iter().find(|m| m.id == "m1").expect("mail");
    assert_eq!(
        (mail.from.as_str(), mail.to.as_str()),
        ("team-lead", "alpha")
    );
    assert_eq!(mail.kind, "message");
    let frame = crew.messages.iter().find(|m| m.id == "m2").expect("frame");
    assert_eq!(
        (
            frame.kind.as_str(),
            frame.summary.as_str(),
            frame.to.as_str()
        ),
        (
            "idle_notification",
            "idle: Parser started, notes to follow",
            "team-lead"
        )
    );
    let snapshot = hub.snapshot(&id).expect("snapshot");
    assert!(snapshot
        .agents
        .iter()
        .any(|a| a.id == "alpha@crew" && a.kind == AgentKind::Teammate));
    assert!(snapshot.actions.message_member);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_store_is_read_in_full_after_open_returns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let store = SessionStore::new(FleetHome::at(&home));
    let mut ids = Vec::new();
    for n in 0..45 {
        let cwd = dir.path().join(format!("project-{}", n % 3));
        let mut session = store.create_session(&cwd).expect("session");
        session
            .append(Line::message(Message::user_text(format!("task {n}"))))
            .expect("append");
        ids.push(session.session_id().to_owned());
    }
    let hub = Hub::open(home).expect("open");
    let mut list = hub.subscribe_sessions();
    tokio::time::timeout(WAIT, async {
        while hub.sessions().len() < ids.len() {
            list.changed().await.expect("list channel");
        }
    })
    .await
    .expect("every session is listed in the end");
    let listed = hub.sessions();
    for id in &ids {
        assert!(listed.iter().any(|s| &s.id == id), "{id} is listed");
    }
    assert!(listed.iter().all(|s| s.title.is_some()));
}

/// Moves a file's modification time two minutes back, past the one-minute live window.
fn age(path: &Path) {
    let then = std::time::SystemTime::now() - Duration::from_secs(120);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(then))
        .expect("set the modification time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_settles_its_agents_and_a_held_lock_keeps_one_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let fleet_home = FleetHome::at(&home);
    let store = SessionStore::new(fleet_home.clone());
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let mut main = store.create_session(&cwd).expect("session");
        main.append(Line::message(Message::user_text("go")))
            .expect("append");
        main.append(assistant(vec![ContentBlock::tool_use(
            "toolu_1",
            "Agent",
            json!({"description": "d", "subagent_type": "Explore", "prompt": "Work"}),
        )]))
        .expect("append");
        let id = main.session_id().to_owned();
        let mut side = SidechainWriter::new(&fleet_home, &cwd, &id, "a1").expect("side");
        side.append(Line::message(Message::user_text("Work")))
            .expect("append");
        side.append(assistant(vec![ContentBlock::tool_use(
            "toolu_2",
            "Bash",
            json!({"command": "sleep 1000"}),
        )]))
        .expect("append");
        age(main.path());
        age(side.path());
        sessions.push((id, main.path().to_path_buf()));
    }
    // The second one's process holds its lock (this test process stands in for it).
    let lock = sessions[1].1.with_extension("lock");
    std::fs::write(&lock, format!("{}\n", std::process::id())).expect("lock file");

    let hub = Hub::open(home).expect("open");
    let ended = hub.snapshot(&sessions[0].0).expect("snapshot");
    assert_eq!(
        ended.session.state,
        fleet_dashboard::api::SessionState::Ended
    );
    let state = |s: &fleet_dashboard::api::Snapshot, id: &str| {
        s.agents
            .iter()
            .find(|a| a.id == id)
            .map(|a| (a.state, a.error.clone()))
    };
    assert_eq!(state(&ended, "main"), Some((AgentState::Done, None)));
    let (child, why) = state(&ended, "a1").expect("child");
    assert_eq!(child, AgentState::Killed);
    assert!(why.is_some_and(|w| w.contains("session ended")));

    let live = hub.snapshot(&sessions[1].0).expect("snapshot");
    assert_eq!(live.session.state, fleet_dashboard::api::SessionState::Live);
    assert_eq!(
        state(&live, "a1").map(|s| s.0),
        Some(AgentState::RunningTool)
    );
}

/// `line` stamped `ms` (Unix ms), as the writer would have at that moment.
fn at(mut line: Line, ms: u64) -> Line {
    line.timestamp =
        humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(ms))
            .to_string();
    line
}

/// A subagent's life is its own transcript's: from its sidechain's first line to its last (a
/// sync child), or for as long as its notification says it ran (a stopped background one),
/// not from when its parent's transcript happened to mention it. A stopped task is `killed`,
/// whichever word its notification uses, even though its sidechain is read after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_read_from_the_store_runs_from_its_first_to_its_last_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let fleet_home = FleetHome::at(&home);
    let store = SessionStore::new(fleet_home.clone());
    let t0 = hub_common::now_ms() - 600_000;
    let mut main = store.create_session(&cwd).expect("session");
    let id = main.session_id().to_owned();
    main.append(at(Line::message(Message::user_text("go")), t0))
        .expect("append");
    main.append(at(
        assistant(vec![
            ContentBlock::tool_use(
                "toolu_1",
                "Agent",
                json!({"description": "sync", "subagent_type": "Explore", "prompt": "Work"}),
            ),
            ContentBlock::tool_use(
                "toolu_2",
                "Agent",
                json!({"description": "slow", "prompt": "Watch", "run_in_background": true}),
            ),
        ]),
        t0 + 10,
    ))
    .expect("append");
    // The parent hears from its sync child long after the child's last line.
    main.append(at(
        user_blocks(vec![
            ContentBlock::tool_result("toolu_1", "done", false),
            ContentBlock::tool_result("toolu_2", "Started background agent a2", false),
        ])
        .with_extra(
            "toolUseResults",
            json!({
                "toolu_1": {"status": "completed", "agentId": "a1", "agentType": "Explore"},
                "toolu_2": {"status": "async_launched", "agentId": "a2",
                            "agentType": "general-purpose", "description": "slow"},
            }),
        ),
        t0 + 20_000,
    ))
    .expect("append");
    let stopped = "<task-notification>\n<task-id>a2</task-id>\n<status>stopped</status>\n\
                   <summary>Agent \"slow\" was stopped</summary>\n<usage>\n\
                   <duration_ms>5000</duration_ms>\n</usage>\n</task-notification>";
    main.append(at(Line::message(Message::user_text(stopped)), t0 + 60_000))
        .expect("append");
    let mut sync = SidechainWriter::new(&fleet_home, &cwd, &id, "a1").expect("side");
    sync.append(at(Line::message(Message::user_text("Work")), t0 + 1_000))
        .expect("append");
    sync.append(at(assistant(vec![ContentBlock::text("done")]), t0 + 4_000))
        .expect("append");
    let mut slow = SidechainWriter::new(&fleet_home, &cwd, &id, "a2").expect("side");
    slow.append(at(Line::message(Message::user_text("Watch")), t0 + 1_500))
        .expect("append");
    for path in [main.path(), sync.path(), slow.path()] {
        age(path);
    }

    let hub = Hub::open(home).expect("open");
    let snapshot = hub.snapshot(&id).expect("snapshot");
    let node = |id: &str| {
        snapshot
            .agents
            .iter()
            .find(|a| a.id == id)
            .cloned()
            .expect("agent")
    };
    let a1 = node("a1");
    assert_eq!(a1.state, AgentState::Done);
    assert_eq!((a1.started_ms, a1.ended_ms), (t0 + 1_000, Some(t0 + 4_000)));
    let a2 = node("a2");
    assert_eq!(
        (a2.kind, a2.state),
        (AgentKind::Background, AgentState::Killed)
    );
    assert_eq!((a2.started_ms, a2.ended_ms), (t0 + 1_500, Some(t0 + 6_500)));
}

/// Sleeps for ten minutes in a process of its own, killed when dropped.
struct Holder(std::process::Child);

impl Holder {
    fn start() -> Self {
        Self(
            std::process::Command::new("sleep")
                .arg("600")
                .spawn()
                .expect("start sleep"),
        )
    }

    /// SIGKILL, reaped (the test's stand-in for a session process killed with `kill -9`).
    fn kill(&mut self) {
        self.0.kill().expect("kill");
        self.0.wait().expect("reap");
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A session whose process was killed stays behind with its lock file naming a dead pid: it
/// is ended at the next re-check, though its files were written just now; one whose process
/// removed its lock on the way out is ended at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_process_died_or_let_go_is_ended_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let store = SessionStore::new(FleetHome::at(&home));
    let mut holders = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let holder = Holder::start();
        let mut main = store.create_session(&cwd).expect("session");
        main.append(Line::message(Message::user_text("go")))
            .expect("append");
        main.append(assistant(vec![ContentBlock::tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "sleep 1000"}),
        )]))
        .expect("append");
        let lock = main.path().with_extension("lock");
        std::fs::write(&lock, format!("{}\n", holder.0.id())).expect("lock file");
        sessions.push((main.session_id().to_owned(), lock));
        holders.push(holder);
    }
    let hub = Hub::open(home).expect("open");
    hub.watch().expect("watch");
    for (id, _) in &sessions {
        let snapshot = hub.snapshot(id).expect("snapshot");
        assert_eq!(
            snapshot.session.state,
            fleet_dashboard::api::SessionState::Live
        );
    }
    let mut killed = hub.subscribe(&sessions[0].0).expect("subscribe");
    let mut released = hub.subscribe(&sessions[1].0).expect("subscribe");
    let ended = |b: &fleet_dashboard::api::Batch| {
        b.session
            .as_ref()
            .is_some_and(|s| s.state == fleet_dashboard::api::SessionState::Ended)
    };

    holders[0].kill();
    let batch = batch_where(&mut killed, ended).await;
    assert_eq!(
        agent(&batch, "main").map(|n| n.state),
        Some(AgentState::Done),
        "its agents are settled"
    );

    std::fs::remove_file(&sessions[1].1).expect("remove the lock");
    batch_where(&mut released, ended).await;
    assert!(
        holders[1].0.try_wait().expect("wait").is_none(),
        "the process still runs: the lock file's removal said it let go"
    );
}
