//! The detection table, one test a row, with hand-made environments and a fake `PATH` of
//! temp folders holding fake `tmux` / `it2` programs.

use super::*;
use crate::backends::BackendKind;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use tempfile::TempDir;

/// A folder holding executable stand-ins for `programs`.
fn bin_with(programs: &[&str]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in programs {
        put(dir.path(), name, 0o755);
    }
    dir
}

fn put(dir: &Path, name: &str, mode: u32) {
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn path_of(dirs: &[&Path]) -> Option<std::ffi::OsString> {
    Some(std::env::join_paths(dirs).expect("joinable"))
}

/// A plain terminal on Linux with `bin` as the whole `PATH`.
fn plain(bin: &TempDir) -> Environment {
    Environment {
        path: path_of(&[bin.path()]),
        os: "linux".into(),
        ..Environment::default()
    }
}

fn in_tmux(mut env: Environment) -> Environment {
    env.tmux = Some("/tmp/tmux-1000/default,4242,0".into());
    env.tmux_pane = Some("%7".into());
    env
}

fn in_iterm(mut env: Environment) -> Environment {
    env.term_program = Some("iTerm.app".into());
    env.iterm_session = Some("w0t0p0:6C1B1D7A-0000-4000-8000-000000000001".into());
    env.os = "macos".into();
    env
}

fn inside_choice() -> Choice {
    Choice::TmuxInside {
        socket: PathBuf::from("/tmp/tmux-1000/default"),
        lead_pane: "%7".into(),
    }
}

fn error_text(result: Result<Choice, DetectError>) -> String {
    match result {
        Err(DetectError::NoBackend(text)) => text,
        Ok(choice) => panic!("expected an error, got {choice:?}"),
    }
}

#[test]
fn in_process_mode_stays_in_process_even_inside_tmux() {
    let bin = bin_with(&["tmux", "it2"]);
    let env = in_iterm(in_tmux(plain(&bin)));
    for interactive in [true, false] {
        assert_eq!(
            choose(TeammateMode::InProcess, &env, interactive),
            Ok(Choice::InProcess { notice: None })
        );
    }
}

#[test]
fn auto_when_not_interactive_is_in_process_even_inside_tmux() {
    let bin = bin_with(&["tmux", "it2"]);
    let env = in_tmux(plain(&bin));
    assert_eq!(
        choose(TeammateMode::Auto, &env, false),
        Ok(Choice::InProcess { notice: None })
    );
}

#[test]
fn auto_inside_tmux_splits_the_leads_window_with_the_socket_from_tmux() {
    let bin = bin_with(&["tmux"]);
    let env = in_tmux(plain(&bin));
    assert_eq!(choose(TeammateMode::Auto, &env, true), Ok(inside_choice()));
}

#[test]
fn auto_inside_tmux_inside_iterm2_still_uses_tmux() {
    let bin = bin_with(&["tmux", "it2"]);
    let env = in_tmux(in_iterm(plain(&bin)));
    assert_eq!(choose(TeammateMode::Auto, &env, true), Ok(inside_choice()));
}

#[test]
fn auto_with_tmux_set_but_no_pane_is_not_inside_tmux() {
    let bin = bin_with(&["tmux"]);
    let mut env = in_tmux(plain(&bin));
    env.tmux_pane = None;
    assert_eq!(
        choose(TeammateMode::Auto, &env, true),
        Ok(Choice::InProcess { notice: None })
    );
}

#[test]
fn auto_in_iterm2_with_it2_uses_iterm2_panes() {
    let bin = bin_with(&["tmux", "it2"]);
    let env = in_iterm(plain(&bin));
    assert_eq!(
        choose(TeammateMode::Auto, &env, true),
        Ok(Choice::Iterm2 {
            it2: bin.path().join("it2")
        })
    );
}

#[test]
fn auto_in_iterm2_known_only_by_its_session_id_uses_iterm2() {
    let bin = bin_with(&["it2"]);
    let mut env = in_iterm(plain(&bin));
    env.term_program = Some("tmux".into());
    assert!(matches!(
        choose(TeammateMode::Auto, &env, true),
        Ok(Choice::Iterm2 { .. })
    ));
}

#[test]
fn auto_in_iterm2_without_it2_but_with_tmux_opens_an_external_session_with_a_hint() {
    let bin = bin_with(&["tmux"]);
    let env = in_iterm(plain(&bin));
    let Ok(Choice::TmuxExternal { hint: Some(hint) }) = choose(TeammateMode::Auto, &env, true)
    else {
        panic!("expected an external tmux session with a hint");
    };
    assert!(hint.contains("pip install it2"), "{hint}");
    assert!(hint.contains("uv tool install it2"), "{hint}");
    assert!(hint.contains("Settings → General → Magic"), "{hint}");
}

#[test]
fn auto_in_iterm2_with_neither_runs_in_process_and_says_why() {
    let bin = bin_with(&[]);
    let env = in_iterm(plain(&bin));
    let Ok(Choice::InProcess {
        notice: Some(notice),
    }) = choose(TeammateMode::Auto, &env, true)
    else {
        panic!("expected in-process with a notice");
    };
    assert!(notice.contains("neither it2 nor tmux"), "{notice}");
    assert!(notice.contains("pip install it2"), "{notice}");
    assert!(notice.contains("Python API"), "{notice}");
}

#[test]
fn auto_in_a_plain_terminal_is_in_process_even_with_tmux_installed() {
    let bin = bin_with(&["tmux", "it2"]);
    assert_eq!(
        choose(TeammateMode::Auto, &plain(&bin), true),
        Ok(Choice::InProcess { notice: None })
    );
}

#[test]
fn tmux_forced_inside_tmux_splits_the_leads_window_interactive_or_not() {
    let bin = bin_with(&["tmux"]);
    let env = in_tmux(plain(&bin));
    for interactive in [true, false] {
        assert_eq!(
            choose(TeammateMode::Tmux, &env, interactive),
            Ok(inside_choice())
        );
    }
}

#[test]
fn tmux_forced_outside_tmux_with_tmux_installed_opens_an_external_session() {
    let bin = bin_with(&["tmux"]);
    for interactive in [true, false] {
        assert_eq!(
            choose(TeammateMode::Tmux, &plain(&bin), interactive),
            Ok(Choice::TmuxExternal { hint: None })
        );
    }
}

#[test]
fn tmux_forced_without_tmux_on_linux_names_the_package_managers() {
    let bin = bin_with(&["it2"]);
    let text = error_text(choose(TeammateMode::Tmux, &plain(&bin), true));
    assert!(text.contains("--teammate-mode tmux"), "{text}");
    assert!(text.contains("sudo apt-get install tmux"), "{text}");
    assert!(text.contains("sudo dnf install tmux"), "{text}");
    assert!(text.contains("sudo pacman -S tmux"), "{text}");
    assert!(text.contains("--teammate-mode in-process"), "{text}");
    assert!(!text.contains("brew"), "{text}");
}

#[test]
fn tmux_forced_without_tmux_on_macos_says_brew() {
    let bin = bin_with(&[]);
    let mut env = plain(&bin);
    env.os = "macos".into();
    let text = error_text(choose(TeammateMode::Tmux, &env, false));
    assert!(text.contains("brew install tmux"), "{text}");
    assert!(text.contains("--teammate-mode in-process"), "{text}");
    assert!(!text.contains("apt-get"), "{text}");
}

#[test]
fn tmux_forced_without_tmux_elsewhere_points_at_the_tmux_wiki() {
    let bin = bin_with(&[]);
    let mut env = plain(&bin);
    env.os = "freebsd".into();
    let text = error_text(choose(TeammateMode::Tmux, &env, true));
    assert!(
        text.contains("https://github.com/tmux/tmux/wiki/Installing"),
        "{text}"
    );
    assert!(text.contains("--teammate-mode tmux"), "{text}");
}

#[test]
fn iterm2_forced_in_iterm2_with_it2_uses_it() {
    let bin = bin_with(&["it2"]);
    assert_eq!(
        choose(TeammateMode::Iterm2, &in_iterm(plain(&bin)), false),
        Ok(Choice::Iterm2 {
            it2: bin.path().join("it2")
        })
    );
}

#[test]
fn iterm2_forced_inside_tmux_in_iterm2_still_uses_iterm2() {
    let bin = bin_with(&["tmux", "it2"]);
    assert_eq!(
        choose(TeammateMode::Iterm2, &in_tmux(in_iterm(plain(&bin))), true),
        Ok(Choice::Iterm2 {
            it2: bin.path().join("it2")
        })
    );
}

#[test]
fn iterm2_forced_without_it2_says_how_to_install_it_and_enable_the_api() {
    let bin = bin_with(&["tmux"]);
    let text = error_text(choose(TeammateMode::Iterm2, &in_iterm(plain(&bin)), true));
    assert!(text.contains("pip install it2"), "{text}");
    assert!(text.contains("uv tool install it2"), "{text}");
    assert!(
        text.contains("Settings → General → Magic → Enable Python API"),
        "{text}"
    );
    assert!(text.contains("--teammate-mode in-process"), "{text}");
}

#[test]
fn iterm2_forced_outside_iterm2_says_iterm2_is_needed() {
    let bin = bin_with(&["tmux", "it2"]);
    let text = error_text(choose(TeammateMode::Iterm2, &in_tmux(plain(&bin)), true));
    assert!(text.contains("not running in iTerm2"), "{text}");
    assert!(text.contains("--teammate-mode iterm2"), "{text}");
}

#[test]
fn find_returns_the_first_executable_on_path() {
    let first = bin_with(&[]);
    put(first.path(), "tmux", 0o644); // not executable: skipped
    std::fs::create_dir(first.path().join("it2")).expect("dir"); // a folder: skipped
    let second = bin_with(&["tmux", "it2"]);
    let third = bin_with(&["tmux"]);
    let env = Environment {
        path: path_of(&[first.path(), second.path(), third.path()]),
        ..Environment::default()
    };
    assert_eq!(env.find("tmux"), Some(second.path().join("tmux")));
    assert_eq!(env.find("it2"), Some(second.path().join("it2")));
    assert_eq!(env.find("missing"), None);
    assert_eq!(env.find("../tmux"), None);
    assert_eq!(Environment::default().find("tmux"), None);
}

#[test]
fn find_skips_empty_path_entries() {
    let bin = bin_with(&["tmux"]);
    let env = Environment {
        path: Some(format!(":{}:", bin.path().display()).into()),
        ..Environment::default()
    };
    assert_eq!(env.find("tmux"), Some(bin.path().join("tmux")));
}

#[test]
fn backend_for_builds_the_chosen_backend() {
    assert!(backend_for(&Choice::InProcess { notice: None }, "t").is_none());
    let inside = backend_for(&inside_choice(), "t").expect("a backend");
    assert_eq!(inside.kind(), BackendKind::Tmux);
    assert_eq!(inside.where_to_look(), None);
    let external = backend_for(&Choice::TmuxExternal { hint: None }, "alpha").expect("backend");
    assert_eq!(
        external.where_to_look().as_deref(),
        Some("tmux attach -t fleet-alpha")
    );
    let iterm = backend_for(
        &Choice::Iterm2 {
            it2: PathBuf::from("/bin/it2"),
        },
        "t",
    )
    .expect("a backend");
    assert_eq!(iterm.kind(), BackendKind::ITerm2);
}

#[test]
fn modes_read_back_what_they_print() {
    for mode in [
        TeammateMode::Auto,
        TeammateMode::InProcess,
        TeammateMode::Tmux,
        TeammateMode::Iterm2,
    ] {
        assert_eq!(mode.as_str().parse::<TeammateMode>(), Ok(mode));
    }
    assert!("panes".parse::<TeammateMode>().is_err());
}
