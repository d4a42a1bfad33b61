//! Containment of the shell classifier and Bash rules through the real binary (issue 30,
//! items 2, 4, 9, 10, 11): each probe scripts the attacker's Bash calls with the fake model
//! server and checks that what they aimed at did not happen.

use crate::common::*;
use std::process::Output;

async fn run(project: &Project, commands: &[&str], args: &[&str], env: &[(&str, &str)]) -> Output {
    let server = server(bash_calls(commands)).await;
    let mut all = vec!["-p", "go", "--output-format", "stream-json", "--verbose"];
    all.extend_from_slice(args);
    let out = project.run_with_env(&server, &all, env).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    out
}

/// Item 2: a committed bare-layout repository whose fsmonitor writes a marker, and a
/// committed symlink into it. `git -C docs status` must not run it, with the sandbox and
/// where only the classifier protects.
#[tokio::test]
async fn git_through_a_committed_symlink_never_runs_the_embedded_fsmonitor() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let marker = project.home.join("pwned");
    let emb = project.repo.join("vendor/emb");
    for dir in ["objects", "refs/heads", "sub"] {
        std::fs::create_dir_all(emb.join(dir)).unwrap();
    }
    std::fs::write(emb.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        emb.join("config"),
        format!(
            "[core]\n\tbare = false\n\tworktree = sub\n\tfsmonitor = \"touch {}; echo\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(emb.join("sub/notes.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink("vendor/emb/sub", project.repo.join("docs")).unwrap();
    project.git(&["add", "-A"]);
    project.git(&["commit", "-qm", "vendor"]);

    let commands = [
        "git -C docs status",
        "cd docs && git status",
        "git status",
        "git config --get core.fsmonitor; git config --get safe.bareRepository",
    ];
    for env in [&[("FLEET_SANDBOX_UNAVAILABLE", "1")][..], &[][..]] {
        let out = run(&project, &commands, &[], env).await;
        let results = tool_outcomes(&out);
        assert_eq!(results.len(), 4, "{results:#?}");
        for (is_error, text) in &results[..2] {
            assert!(*is_error && text.contains("needs approval"), "{text}");
        }
        assert!(!results[2].0, "{}", results[2].1);
        // Read-only git runs with its program-running configuration turned off, sandboxed
        // (through the launcher) or not.
        let (is_error, config) = &results[3];
        assert!(
            !is_error && config.contains("false") && config.contains("explicit"),
            "{config}"
        );
        assert!(
            !marker.exists(),
            "the embedded repository's fsmonitor ran ({env:?})"
        );
    }
}

/// Item 4: an allow rule for the command does not cover a wrapper's output file or a write
/// of git's configuration, in default mode or bypassPermissions.
#[tokio::test]
async fn allow_rules_do_not_cover_writes_of_protected_files() {
    let project = Project::new(&[("README.md", "# app\n")]);
    let bashrc = project.home.join(".bashrc");
    let time = format!(
        "/usr/bin/time -a -o {} -f PAYLOAD npm test",
        bashrc.display()
    );
    let commands = [
        time.as_str(),
        "/usr/bin/time -a -o ~/.bashrc -f PAYLOAD npm test",
        "git config core.fsmonitor 'touch /tmp/fleet-pwned'",
        "git config --global core.pager evil",
    ];
    for mode in ["default", "bypassPermissions"] {
        let out = run(
            &project,
            &commands,
            &[
                "--permission-mode",
                mode,
                "--allowedTools=Bash(npm test),Bash(git *)",
            ],
            &[],
        )
        .await;
        let results = tool_outcomes(&out);
        assert_eq!(results.len(), 4, "{results:#?}");
        for (is_error, text) in &results {
            assert!(*is_error && text.contains("protected"), "{mode}: {text}");
        }
        assert!(!bashrc.exists(), "{mode}: time -o wrote ~/.bashrc");
        assert!(!project.read(".git/config").contains("fsmonitor"));
        assert!(!project.home.join(".gitconfig").exists());
    }
}

/// Item 9: in bypassPermissions, `Bash(rm *)` holds through wrappers fleet knows (denied) and
/// through programs it does not (a later word starts `rm`: asked, so refused headless).
#[tokio::test]
async fn a_deny_rule_holds_through_wrappers_in_bypass_mode() {
    let project = Project::new(&[("victim/keep.txt", "keep\n")]);
    let commands = [
        "flock /tmp/fleet-flock-probe rm -rf victim",
        "taskset 0x1 rm -rf victim",
        "chrt -o 0 rm -rf victim",
        "script -qc 'rm -rf victim' /dev/null",
        "unshare -r rm -rf victim",
        "strace -f -o /dev/null rm -rf victim",
        "prlimit --nofile=256 rm -rf victim",
        "git -c alias.x='!rm -rf victim' x",
        "setpriv --reuid=0 rm -rf victim",
        "nice -n 1 stdbuf -oL ionice -c3 rm -rf victim",
        "bash -c 'exec -a x \"$0\" \"$@\"' rm -rf victim",
    ];
    let out = run(
        &project,
        &commands,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools=Bash(rm *)",
        ],
        &[],
    )
    .await;
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), commands.len(), "{results:#?}");
    for ((is_error, text), command) in results.iter().zip(commands) {
        assert!(*is_error, "{command}: {text}");
        assert!(text.contains("Bash(rm *)"), "{command}: {text}");
    }
    assert_eq!(project.read("victim/keep.txt"), "keep\n");
}

/// Item 10: `Read(./.env)` is not bypassed through git history; item 11: without the
/// sandbox, a command naming a credential store or a denied file is refused.
#[tokio::test]
async fn read_deny_rules_and_credential_stores_hold_for_bash_arguments() {
    let project = Project::new(&[(".env", "API_TOKEN=hunter2\n"), ("README.md", "# app\n")]);
    project.git(&["rm", "-q", "--cached", ".env"]);
    project.git(&["commit", "-qm", "untrack .env"]);
    std::fs::create_dir_all(project.home.join(".ssh")).unwrap();
    std::fs::write(project.home.join(".ssh/id_rsa"), "PRIVATE-KEY-BYTES\n").unwrap();
    let history = [
        "git show HEAD~1:.env",
        "git log -p",
        "git cat-file -p HEAD~1:.env",
        "git diff HEAD~1 HEAD",
    ];
    let out = run(
        &project,
        &history,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools=Read(./.env)",
        ],
        &[],
    )
    .await;
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), history.len(), "{results:#?}");
    for ((is_error, text), command) in results.iter().zip(history) {
        assert!(
            *is_error && text.contains("Read(./.env)"),
            "{command}: {text}"
        );
        assert!(!text.contains("hunter2"), "{command}: {text}");
    }

    let secrets = [
        "cat ~/.ssh/id_rsa .env",
        "head -n 1 < ~/.ssh/id_rsa",
        "cat README.md",
    ];
    let out = run(
        &project,
        &secrets,
        &["--disallowedTools=Read(./.env)"],
        &[("FLEET_SANDBOX_UNAVAILABLE", "1")],
    )
    .await;
    let results = tool_outcomes(&out);
    assert_eq!(results.len(), 3, "{results:#?}");
    for (is_error, text) in &results[..2] {
        assert!(*is_error && text.contains(".ssh"), "{text}");
        assert!(
            !text.contains("PRIVATE-KEY") && !text.contains("hunter2"),
            "{text}"
        );
    }
    assert!(
        !results[2].0 && results[2].1.contains("# app"),
        "{}",
        results[2].1
    );
}
