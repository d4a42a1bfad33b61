//! The task list against a real folder: ids, claim checks, links, deletes, races.

use serde_json::{json, Map, Value};

use super::*;

fn list() -> (tempfile::TempDir, TaskList) {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = TaskList::open(&FleetHome::at(dir.path()), "crew").expect("opened");
    (dir, list)
}

fn new(subject: &str) -> NewTask {
    NewTask {
        subject: subject.into(),
        description: format!("do {subject}"),
        ..Default::default()
    }
}

fn status(status: PatchStatus) -> TaskPatch {
    TaskPatch {
        status: Some(status),
        ..Default::default()
    }
}

fn owner(name: Option<&str>) -> TaskPatch {
    TaskPatch {
        owner: Some(name.map(str::to_string)),
        ..Default::default()
    }
}

fn blocked_by(ids: &[&str]) -> TaskPatch {
    TaskPatch {
        add_blocked_by: ids.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn lead() -> Actor {
    Actor::lead("team-lead")
}

#[test]
fn a_new_task_is_pending_with_the_next_id_in_claude_codes_schema() {
    let (_dir, list) = list();
    let first = list
        .create(NewTask {
            active_form: Some("Doing A".into()),
            metadata: Some(map(json!({"prio": "high", "gone": null}))),
            ..new("A")
        })
        .expect("created");
    let second = list.create(new("B")).expect("created");
    assert_eq!((first.id.as_str(), second.id.as_str()), ("1", "2"));
    let text = std::fs::read_to_string(list.dir().join("1.json")).expect("file");
    let on_disk: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        on_disk,
        json!({"id": "1", "subject": "A", "description": "do A", "activeForm": "Doing A",
               "status": "pending", "blocks": [], "blockedBy": [], "metadata": {"prio": "high"}})
    );
    assert_eq!(
        std::fs::read_to_string(list.dir().join(".highwatermark")).expect("mark"),
        "2"
    );
    assert_eq!(list.get("#2").expect("get"), Some(second));
    assert_eq!(list.get("99").expect("get"), None);
    assert_eq!(list.get("../1").expect("get"), None);
}

#[test]
fn list_is_in_numeric_order() {
    let (_dir, list) = list();
    for i in 1..=11 {
        list.create(new(&format!("t{i}"))).expect("created");
    }
    let ids: Vec<String> = list
        .list()
        .expect("list")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, (1..=11).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[test]
fn a_deleted_id_is_never_reused_and_its_links_go_with_it() {
    let (_dir, list) = list();
    list.create(new("A")).expect("1");
    list.create(new("B")).expect("2");
    list.create(new("C")).expect("3");
    list.update("2", blocked_by(&["1"]), &lead()).expect("link");
    list.update("3", blocked_by(&["2"]), &lead()).expect("link");

    let deleted = list
        .update("2", status(PatchStatus::Deleted), &lead())
        .expect("deleted");
    assert_eq!(deleted.changed, ["deleted"]);
    assert_eq!(deleted.task, None);
    assert!(!list.dir().join("2.json").exists());
    assert_eq!(list.get("1").expect("get").map(|t| t.blocks), Some(vec![]));
    assert_eq!(
        list.get("3").expect("get").map(|t| t.blocked_by),
        Some(vec![])
    );

    list.update("3", status(PatchStatus::Deleted), &lead())
        .expect("deleted the highest");
    assert_eq!(list.create(new("D")).expect("created").id, "4");
    assert!(matches!(
        list.update("2", status(PatchStatus::Completed), &lead()),
        Err(TaskListError::NotFound { ref id }) if id == "2"
    ));
}

#[test]
fn a_task_owned_by_another_member_cannot_be_claimed_but_the_lead_may_reassign_it() {
    let (_dir, list) = list();
    list.create(new("A")).expect("created");
    let taken = list
        .update("1", owner(Some("alpha")), &Actor::member("alpha"))
        .expect("alpha claims");
    assert_eq!(taken.changed, ["owner"]);
    assert_eq!(taken.new_owner.as_deref(), Some("alpha"));

    for patch in [
        owner(Some("beta")),
        owner(None),
        status(PatchStatus::InProgress),
    ] {
        let err = list
            .update("1", patch, &Actor::member("beta"))
            .expect_err("refused");
        assert!(
            matches!(err, TaskListError::Claimed { ref id, ref owner } if id == "1" && owner == "alpha"),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains("task #1 is owned by alpha"), "{text}");
        assert!(text.contains("TaskList"), "{text}");
    }
    assert_eq!(
        list.get("1").expect("get").and_then(|t| t.owner).as_deref(),
        Some("alpha")
    );

    // The owner works on it; the lead hands it over.
    list.update(
        "1",
        status(PatchStatus::InProgress),
        &Actor::member("alpha"),
    )
    .expect("owner starts");
    let moved = list
        .update("1", owner(Some("beta")), &lead())
        .expect("lead reassigns");
    assert_eq!(moved.new_owner.as_deref(), Some("beta"));
    assert_eq!(moved.changed, ["owner"]);
}

#[test]
fn starting_an_unowned_task_makes_the_member_its_owner() {
    let (_dir, list) = list();
    list.create(new("A")).expect("created");
    let started = list
        .update(
            "1",
            status(PatchStatus::InProgress),
            &Actor::member("alpha"),
        )
        .expect("started");
    assert_eq!(started.changed, ["owner", "status"]);
    assert_eq!(started.new_owner.as_deref(), Some("alpha"));
    let done = list
        .update("1", status(PatchStatus::Completed), &Actor::member("alpha"))
        .expect("completed");
    assert_eq!(done.changed, ["status"]);
    assert_eq!(done.new_owner, None);
    let again = list
        .update("1", status(PatchStatus::Completed), &Actor::member("alpha"))
        .expect("no-op");
    assert!(again.changed.is_empty());
}

#[test]
fn a_blocked_task_cannot_be_started_until_its_blockers_are_completed() {
    let (_dir, list) = list();
    list.create(new("A")).expect("1");
    list.create(new("B")).expect("2");
    let linked = list.update("2", blocked_by(&["1"]), &lead()).expect("link");
    assert_eq!(linked.changed, ["blockedBy"]);
    assert_eq!(
        list.get("1").expect("get").map(|t| t.blocks),
        Some(vec!["2".to_string()])
    );

    for (patch, actor) in [
        (status(PatchStatus::InProgress), Actor::member("alpha")),
        (owner(Some("alpha")), Actor::member("alpha")),
        (status(PatchStatus::InProgress), lead()),
    ] {
        let err = list.update("2", patch, &actor).expect_err("blocked");
        match &err {
            TaskListError::Blocked { id, by } => {
                assert_eq!(id, "2");
                assert_eq!(by, &[("1".to_string(), "A".to_string())]);
            }
            other => panic!("expected Blocked, got {other}"),
        }
        assert!(err.to_string().contains("#1 \"A\""), "{err}");
    }
    // The lead may assign it ahead of time; the owner still cannot start it.
    list.update("2", owner(Some("alpha")), &lead())
        .expect("assigned ahead");
    assert!(matches!(
        list.update(
            "2",
            status(PatchStatus::InProgress),
            &Actor::member("alpha")
        ),
        Err(TaskListError::Blocked { .. })
    ));
    list.update("1", status(PatchStatus::Completed), &lead())
        .expect("blocker done");
    list.update(
        "2",
        status(PatchStatus::InProgress),
        &Actor::member("alpha"),
    )
    .expect("unblocked");
}

#[test]
fn links_to_unknown_tasks_themselves_or_loops_are_refused_and_nothing_is_written() {
    let (_dir, list) = list();
    list.create(new("A")).expect("1");
    list.create(new("B")).expect("2");
    list.create(new("C")).expect("3");
    assert!(matches!(
        list.update("1", blocked_by(&["2", "42"]), &lead()),
        Err(TaskListError::NotFound { ref id }) if id == "42"
    ));
    assert_eq!(
        list.get("1").expect("get").map(|t| t.blocked_by),
        Some(vec![])
    );
    assert_eq!(list.get("2").expect("get").map(|t| t.blocks), Some(vec![]));
    assert!(matches!(
        list.update("1", blocked_by(&["1"]), &lead()),
        Err(TaskListError::SelfDependency { .. })
    ));
    list.update("2", blocked_by(&["1"]), &lead())
        .expect("2 waits on 1");
    list.update("3", blocked_by(&["2"]), &lead())
        .expect("3 waits on 2");
    let err = list
        .update(
            "3",
            TaskPatch {
                add_blocks: vec!["1".into()],
                ..Default::default()
            },
            &lead(),
        )
        .expect_err("loop");
    assert!(matches!(err, TaskListError::Cycle { .. }), "{err}");
    assert!(matches!(
        list.update("x", status(PatchStatus::Completed), &lead()),
        Err(TaskListError::NotFound { ref id }) if id == "x"
    ));
}

#[test]
fn metadata_is_merged_and_null_deletes_a_key() {
    let (_dir, list) = list();
    list.create(NewTask {
        metadata: Some(map(json!({"prio": "high"}))),
        ..new("A")
    })
    .expect("created");
    let updated = list
        .update(
            "1",
            TaskPatch {
                metadata: Some(map(json!({"prio": null, "note": "x"}))),
                ..owner(Some("alpha"))
            },
            &lead(),
        )
        .expect("updated");
    assert_eq!(updated.changed, ["owner", "metadata"]);
    assert_eq!(
        updated.task.and_then(|t| t.metadata),
        Some(map(json!({"note": "x"})))
    );
    let emptied = list
        .update(
            "1",
            TaskPatch {
                metadata: Some(map(json!({"note": null}))),
                ..Default::default()
            },
            &lead(),
        )
        .expect("updated");
    assert_eq!(emptied.task.and_then(|t| t.metadata), None);
}

#[test]
fn a_stopped_members_unfinished_tasks_go_back_to_pending() {
    let (_dir, list) = list();
    for s in ["A", "B", "C", "D"] {
        list.create(new(s)).expect("created");
    }
    let alpha = Actor::member("alpha");
    list.update("1", status(PatchStatus::InProgress), &alpha)
        .expect("1");
    list.update("2", owner(Some("alpha")), &alpha).expect("2");
    list.update("3", status(PatchStatus::InProgress), &alpha)
        .expect("3");
    list.update("3", status(PatchStatus::Completed), &alpha)
        .expect("3 done");
    list.update("4", owner(Some("beta")), &lead()).expect("4");

    let released = list.release_owned_by("alpha").expect("released");
    let ids: Vec<&str> = released.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["1", "2"]);
    for task in list.list().expect("list") {
        match task.id.as_str() {
            "1" | "2" => {
                assert_eq!(task.owner, None);
                assert_eq!(task.status, TaskState::Pending);
            }
            "3" => assert_eq!(task.owner.as_deref(), Some("alpha")),
            _ => assert_eq!(task.owner.as_deref(), Some("beta")),
        }
    }
}

#[test]
fn eight_members_racing_to_claim_one_task_give_exactly_one_owner() {
    let (_dir, list) = list();
    list.create(new("prize")).expect("created");
    let results: Vec<(String, Result<Updated>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let list = list.clone();
                s.spawn(move || {
                    let name = format!("m{i}");
                    let patch = if i % 2 == 0 {
                        status(PatchStatus::InProgress)
                    } else {
                        owner(Some(&name))
                    };
                    let result = list.update("1", patch, &Actor::member(&name));
                    (name, result)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let winners: Vec<&String> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(name, _)| name)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let winner = winners[0];
    for (name, result) in &results {
        if let Err(err) = result {
            assert!(
                matches!(err, TaskListError::Claimed { owner, .. } if owner == winner),
                "{name}: {err}"
            );
        }
    }
    assert_eq!(
        list.get("1").expect("get").and_then(|t| t.owner).as_ref(),
        Some(winner)
    );
}

#[test]
fn concurrent_creates_never_share_an_id() {
    let (dir, list) = list();
    std::thread::scope(|s| {
        for t in 0..8 {
            // Separate handles, as separate processes would have.
            let list = TaskList::open(&FleetHome::at(dir.path()), "crew").expect("opened");
            s.spawn(move || {
                for i in 0..25 {
                    list.create(new(&format!("t{t}-{i}"))).expect("created");
                }
            });
        }
    });
    let tasks = list.list().expect("list");
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(ids, (1..=200).map(|i| i.to_string()).collect::<Vec<_>>());
    let mut subjects: Vec<&str> = tasks.iter().map(|t| t.subject.as_str()).collect();
    subjects.sort();
    subjects.dedup();
    assert_eq!(subjects.len(), 200);
}

#[test]
fn a_corrupt_task_file_is_named() {
    let (_dir, list) = list();
    list.create(new("A")).expect("created");
    std::fs::write(list.dir().join("1.json"), "{\"id\":").expect("write");
    let err = list.list().expect_err("corrupt");
    assert!(err.to_string().contains("1.json"), "{err}");
    assert!(matches!(
        TaskList::open(&FleetHome::at(list.dir()), "../x"),
        Err(TaskListError::InvalidTeamName { .. })
    ));
}

/// Set in a child process started by the cross-process test: the list's home and the member.
const CHILD_HOME: &str = "FLEET_TASKLIST_TEST_HOME";
const CHILD_NAME: &str = "FLEET_TASKLIST_TEST_MEMBER";

/// Runs only as a child of `separate_processes_racing_to_claim_one_task_give_exactly_one_owner`:
/// claims task 1 and prints the outcome.
#[test]
fn claim_once_as_a_child_process() {
    let (Some(home), Some(name)) = (std::env::var_os(CHILD_HOME), std::env::var(CHILD_NAME).ok())
    else {
        return;
    };
    let list = TaskList::open(&FleetHome::at(home), "crew").expect("opened");
    match list.update("1", status(PatchStatus::InProgress), &Actor::member(&name)) {
        Ok(_) => println!("OUTCOME won"),
        Err(TaskListError::Claimed { owner, .. }) => println!("OUTCOME claimed-by {owner}"),
        Err(other) => println!("OUTCOME error {other}"),
    }
}

#[test]
fn separate_processes_racing_to_claim_one_task_give_exactly_one_owner() {
    let (dir, list) = list();
    list.create(new("prize")).expect("created");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..6)
        .map(|i| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "tasklist::tests::claim_once_as_a_child_process",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_HOME, dir.path())
                .env(CHILD_NAME, format!("p{i}"))
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("child started")
        })
        .collect();
    let outcomes: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("child ran");
            assert!(out.status.success(), "{out:?}");
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .find_map(|l| l.split_once("OUTCOME ").map(|(_, o)| o.trim().to_string()))
                .expect("child printed its outcome")
        })
        .collect();
    let owner = list
        .get("1")
        .expect("get")
        .and_then(|t| t.owner)
        .expect("someone owns it");
    assert_eq!(
        outcomes.iter().filter(|o| *o == "won").count(),
        1,
        "{outcomes:?}"
    );
    let refused = format!("claimed-by {owner}");
    assert_eq!(
        outcomes.iter().filter(|o| **o == refused).count(),
        5,
        "{outcomes:?}"
    );
}
