#![allow(clippy::unwrap_used)]
//! Finding sessions on disk: project folders, `--continue`, `--resume <id>`, listing.

use crate::common;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{assistant_calling, temp_store, user, write_session};
use fleet_store::{project_slug, FleetHome, StoreError, TranscriptWriter};

fn set_mtime(path: &Path, secs: u64) {
    let file = OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn slug_replaces_every_character_that_is_not_ascii_alphanumeric() {
    assert_eq!(project_slug(Path::new("/tmp/x_y/repo")), "-tmp-x-y-repo");
    assert_eq!(
        project_slug(Path::new("/home/me/café.d")),
        "-home-me-caf--d"
    );
    let home = FleetHome::at("/data/fleet");
    assert_eq!(
        home.project_dir(Path::new("/a b/c")),
        PathBuf::from("/data/fleet/projects/-a-b-c")
    );
}

#[test]
fn long_slug_is_cut_and_given_a_hash_of_the_full_path() {
    let long = format!("/{}", "d".repeat(300));
    let slug = project_slug(Path::new(&format!("{long}/one")));
    let other = project_slug(Path::new(&format!("{long}/two")));
    assert_eq!(slug.len(), 200 + 1 + 16);
    assert!(slug.starts_with(&format!("-{}", "d".repeat(199))));
    assert_ne!(
        slug, other,
        "paths differing past the cut must not share a folder"
    );
    assert_eq!(slug, project_slug(Path::new(&format!("{long}/one"))));
    assert!(slug.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
}

#[test]
fn latest_session_is_the_most_recently_modified_one() {
    let (_dir, store) = temp_store();
    let cwd = Path::new("/w/app");
    assert_eq!(store.latest_session(cwd).unwrap(), None);
    let old = write_session(&store, cwd, vec![user("old")]);
    let newest = write_session(&store, cwd, vec![user("newest")]);
    let middle = write_session(&store, cwd, vec![user("middle")]);
    let elsewhere = write_session(&store, Path::new("/w/other"), vec![user("x")]);
    set_mtime(&old, 1_000);
    set_mtime(&newest, 3_000);
    set_mtime(&middle, 2_000);
    set_mtime(&elsewhere, 9_000);

    let latest = store.latest_session(cwd).unwrap().unwrap();
    assert_eq!(latest.path, newest);
    assert_eq!(latest.id, newest.file_stem().unwrap().to_str().unwrap());

    let listed: Vec<(PathBuf, Option<String>)> = store
        .list_sessions(cwd)
        .unwrap()
        .into_iter()
        .map(|s| (s.session.path, s.first_prompt))
        .collect();
    assert_eq!(
        listed,
        [
            (newest, Some("newest".into())),
            (middle, Some("middle".into())),
            (old, Some("old".into())),
        ]
    );
}

#[test]
fn listing_previews_the_first_typed_prompt_on_one_line() {
    let (_dir, store) = temp_store();
    let cwd = Path::new("/w");
    let long = format!("fix\nthe   {}", "é".repeat(200));
    write_session(
        &store,
        cwd,
        vec![user("instructions").meta(), user(&long), user("later")],
    );
    let listed = store.list_sessions(cwd).unwrap();
    let preview = listed[0].first_prompt.clone().unwrap();
    assert!(preview.starts_with("fix the éé"), "{preview}");
    assert_eq!(preview.chars().count(), 101);
    assert!(preview.ends_with('…'));

    let (_dir2, store2) = temp_store();
    write_session(&store2, cwd, vec![assistant_calling(&["t"])]);
    assert_eq!(store2.list_sessions(cwd).unwrap()[0].first_prompt, None);
}

#[test]
fn find_session_looks_here_first_then_in_every_project() {
    let (_dir, store) = temp_store();
    let here = Path::new("/w/here");
    let there = Path::new("/w/there");
    let mut remote =
        TranscriptWriter::create(store.home(), there, "a1b2c3d4-0000-only-there").unwrap();
    remote.append(user("x")).unwrap();
    let found = store
        .find_session(here, "a1b2c3d4-0000-only-there")
        .unwrap();
    assert_eq!(found.path, remote.path());

    // The same id in both folders: this folder's wins.
    TranscriptWriter::create(store.home(), there, "shared-id").unwrap();
    let local = TranscriptWriter::create(store.home(), here, "shared-id").unwrap();
    assert_eq!(
        store.find_session(here, "shared-id").unwrap().path,
        local.path()
    );

    // A unique prefix of at least 8 characters is enough; a shorter one is not.
    assert_eq!(
        store.find_session(here, "a1b2c3d4").unwrap().path,
        remote.path()
    );
    let short = store.find_session(here, "a1b2c3").unwrap_err();
    assert!(
        matches!(short, StoreError::SessionNotFound { .. }),
        "{short}"
    );

    TranscriptWriter::create(store.home(), here, "a1b2c3d4-1111-here").unwrap();
    // Unique here, so it wins over the match in the other folder.
    let here_match = store.find_session(here, "a1b2c3d4-").unwrap();
    assert_eq!(here_match.id, "a1b2c3d4-1111-here");
    // Seen from a third folder it is unique nowhere: an error listing both.
    let err = store
        .find_session(Path::new("/w/third"), "a1b2c3d4-")
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, StoreError::AmbiguousSession { .. }));
    assert!(message.contains("a1b2c3d4-0000-only-there") && message.contains("a1b2c3d4-1111-here"));

    let missing = store.find_session(here, "no-such-session").unwrap_err();
    assert!(missing.to_string().contains("no-such-session"), "{missing}");
}

#[test]
fn invalid_session_ids_are_refused_before_any_path_is_built() {
    let (dir, store) = temp_store();
    let cwd = Path::new("/w");
    for id in [
        "../../etc/passwd",
        "",
        "a/b",
        "..",
        "x.jsonl",
        "tab\tid",
        &"a".repeat(129),
    ] {
        let errors = [
            store.session_path(cwd, id).unwrap_err(),
            store.find_session(cwd, id).unwrap_err(),
            TranscriptWriter::create(store.home(), cwd, id).unwrap_err(),
        ];
        for err in errors {
            assert!(
                matches!(err, StoreError::InvalidSessionId { .. }),
                "{id:?}: {err}"
            );
        }
    }
    assert!(!dir.path().join("home").exists(), "nothing may be created");
    for id in [
        "0b5c5d9e-4f8a-4a7e-9c1d-2e3f4a5b6c7d",
        "abc_DEF-1",
        &"a".repeat(128),
    ] {
        assert!(store.session_path(cwd, id).is_ok(), "{id}");
    }
}
