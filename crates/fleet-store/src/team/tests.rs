//! The team store against a real folder: names, locking, atomic replacement, listing, deleting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;
use crate::home::FleetHome;

fn store() -> (tempfile::TempDir, TeamStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = TeamStore::new(&FleetHome::at(dir.path()));
    (dir, store)
}

fn lead() -> Member {
    Member::new("team-lead", "", "team-lead", "/src/app")
}

#[test]
fn a_new_team_has_the_lead_as_first_member_on_disk() {
    let (_dir, teams) = store();
    let team = teams
        .create("Release Crew!", Some("ship it"), lead(), "sess-1")
        .expect("created");
    assert_eq!(team.name, "release-crew");
    assert_eq!(team.lead_agent_id, "team-lead@release-crew");
    assert_eq!(team.lead_session_id, "sess-1");
    assert_eq!(team.members.len(), 1);
    assert_eq!(team.members[0].agent_id, "team-lead@release-crew");
    assert!(teams.inboxes_dir("release-crew").is_dir());

    let text = std::fs::read_to_string(teams.config_path("release-crew")).expect("file");
    assert!(
        text.contains("\"leadAgentId\": \"team-lead@release-crew\""),
        "{text}"
    );
    assert!(text.contains("\"backendType\": \"in-process\""), "{text}");
    assert_eq!(teams.load("release-crew").expect("loads"), team);
}

#[test]
fn a_taken_name_gets_a_number_even_when_created_at_the_same_time() {
    let (_dir, teams) = store();
    let names: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| s.spawn(|| teams.create("crew", None, lead(), "s").map(|t| t.name)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread").expect("created"))
            .collect()
    });
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["crew", "crew-2", "crew-3", "crew-4", "crew-5", "crew-6"]
    );
    assert_eq!(teams.list().expect("list").len(), 6);
}

#[test]
fn concurrent_updates_all_land() {
    let (_dir, teams) = store();
    let team = teams.create("crew", None, lead(), "s").expect("created");
    std::thread::scope(|s| {
        for i in 0..8 {
            let teams = &teams;
            let name = &team.name;
            s.spawn(move || {
                teams
                    .update(name, |config| {
                        let member = Member::new(&format!("m{i}"), name, "general-purpose", "/");
                        config.members.push(member);
                    })
                    .expect("updated");
            });
        }
    });
    let config = teams.load("crew").expect("loads");
    assert_eq!(config.members.len(), 9);
    for i in 0..8 {
        assert!(config.is_name_taken(&format!("m{i}")), "m{i} lost");
    }
}

#[test]
fn a_reader_never_sees_a_half_written_file() {
    let (_dir, teams) = store();
    let team = teams.create("crew", None, lead(), "s").expect("created");
    let done = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0u32;
            while !done.load(Ordering::Relaxed) {
                let config = teams.load(&team.name).expect("every read parses");
                assert!(!config.members.is_empty());
                reads += 1;
            }
            reads
        });
        for i in 0..200 {
            teams
                .update(&team.name, |config| {
                    // Grow and shrink the file, so an in-place write would leave a torn tail.
                    if i % 2 == 0 {
                        let mut member = Member::new(&format!("m{i}"), "crew", "x", "/");
                        member.prompt = Some("p".repeat(2000));
                        config.members.push(member);
                    } else {
                        config.members.truncate(1);
                    }
                })
                .expect("updated");
        }
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().expect("reader") > 0);
    });
    let leftovers: Vec<_> = std::fs::read_dir(teams.dir("crew"))
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn update_returns_what_the_closure_computed_and_keeps_the_name() {
    let (_dir, teams) = store();
    teams.create("crew", None, lead(), "s").expect("created");
    let (config, taken) = teams
        .update("crew", |config| {
            config.name = "elsewhere".into();
            config.socket = Some("/run/fleet.sock".into());
            config.is_name_taken("team-lead")
        })
        .expect("updated");
    assert!(taken);
    assert_eq!(config.name, "crew");
    assert_eq!(
        teams.load("crew").expect("loads").socket.as_deref(),
        Some("/run/fleet.sock")
    );
}

#[test]
fn missing_and_broken_teams_are_named_in_the_error() {
    let (_dir, teams) = store();
    let err = teams.load("nope").expect_err("missing");
    assert!(matches!(err, TeamError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("teams/nope/config.json"), "{err}");
    assert!(matches!(
        teams.update("nope", |_| ()),
        Err(TeamError::NotFound { .. })
    ));
    assert!(matches!(
        teams.load("../etc"),
        Err(TeamError::InvalidTeamName { .. })
    ));

    teams.create("good", None, lead(), "s").expect("created");
    std::fs::create_dir_all(teams.dir("bad")).expect("dir");
    std::fs::write(teams.config_path("bad"), "{\"name\": ").expect("write");
    std::fs::create_dir_all(teams.dir("half-made")).expect("dir");
    let err = teams.load("bad").expect_err("corrupt");
    assert!(err.to_string().contains("teams/bad/config.json"), "{err}");

    let (listed, problems) = teams.list_with_problems().expect("list");
    assert_eq!(
        listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["good"]
    );
    assert_eq!(problems.len(), 1);
    assert!(matches!(problems[0], TeamError::Corrupt { .. }));
    assert_eq!(teams.list().expect("list").len(), 1);
}

#[test]
fn delete_frees_the_name_and_removes_everything() {
    let (_dir, teams) = store();
    teams.create("crew", None, lead(), "s").expect("created");
    std::fs::write(teams.inboxes_dir("crew").join("alpha.jsonl"), "{}\n").expect("inbox");
    teams.delete("crew").expect("deleted");
    assert!(!teams.dir("crew").exists());
    let left: Vec<_> = std::fs::read_dir(teams.root())
        .expect("list")
        .filter_map(|e| e.ok())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(matches!(
        teams.delete("crew"),
        Err(TeamError::NotFound { .. })
    ));
    assert_eq!(
        teams.create("crew", None, lead(), "s").expect("again").name,
        "crew"
    );
}

#[test]
fn listing_an_empty_home_is_empty() {
    let (_dir, teams) = store();
    assert!(teams.list().expect("list").is_empty());
}

/// `team-config/04-pane-teammates-tmux.json` from the reference, placeholders filled, with
/// names this build does not know: beta runs on a `wezterm` backend and alpha holds an `auto`
/// mode (as a newer Claude Code might write them).
const CLAUDE_CODE_UNKNOWN_NAMES: &str = r#"{
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
      "joinedAt": 1764608401000, "tmuxPaneId": "%1", "subscriptions": [],
      "model": "claude-opus-5-5", "prompt": "You are TM-ALPHA.", "planModeRequired": true,
      "cwd": "/src/app", "backendType": "tmux", "mode": "auto" },
    { "agentId": "beta@session-1a2b3c4d", "name": "beta", "color": "green",
      "joinedAt": 1764608402000, "tmuxPaneId": "w2", "subscriptions": [],
      "model": "claude-opus-5-5", "prompt": "You are TM-BETA.", "planModeRequired": false,
      "cwd": "/src/app", "backendType": "wezterm", "isActive": true }
  ]
}"#;

#[test]
fn a_claude_code_file_with_unknown_names_survives_a_rewrite() {
    let (_dir, teams) = store();
    let team = "session-1a2b3c4d";
    std::fs::create_dir_all(teams.inboxes_dir(team)).expect("team folder");
    std::fs::write(teams.config_path(team), CLAUDE_CODE_UNKNOWN_NAMES).expect("config");

    let config = teams.load(team).expect("reads despite the unknown names");
    let alpha = config.member("alpha").expect("alpha");
    assert_eq!(alpha.backend, fleet_protocol::BackendType::Tmux);
    assert_eq!(alpha.mode, None);
    assert!(alpha.has_mode());
    let beta = config.member("beta").expect("beta");
    assert_eq!(
        beta.backend,
        fleet_protocol::BackendType::Other("wezterm".into())
    );

    // A roster change elsewhere in the file rewrites all of it.
    teams
        .update(team, |config| {
            config
                .members
                .push(Member::new("gamma", team, "general-purpose", "/"));
        })
        .expect("updated");

    let before: serde_json::Value = serde_json::from_str(CLAUDE_CODE_UNKNOWN_NAMES).expect("json");
    let text = std::fs::read_to_string(teams.config_path(team)).expect("file");
    let after: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(after["members"][1]["mode"], "auto", "{text}");
    assert_eq!(after["members"][2]["backendType"], "wezterm", "{text}");
    assert_eq!(after["members"][3]["name"], "gamma");
    // Every key Claude Code wrote is still there with its value.
    for (index, member) in before["members"]
        .as_array()
        .expect("members")
        .iter()
        .enumerate()
    {
        for (key, value) in member.as_object().expect("member") {
            assert_eq!(&after["members"][index][key], value, "member {index} {key}");
        }
    }
    assert_eq!(after["leadProcess"], before["leadProcess"]);
}
