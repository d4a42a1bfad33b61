//! What reading a Bash command line costs per call: parsing it with tree-sitter-bash into the
//! shell model, classifying it read-only, and deciding it against `Bash(...)` rules. The agent
//! loop does the classification (and the permission check) on every Bash call.
//!
//! Run it with `cargo bench -p fleet-tools --bench shell`; `FLEET_BENCH_ITERS` sets the timed
//! calls per case (default 2000, after 200 warm-up calls). Figures are per call, on one core.

use fleet_tools::permissions::{PermissionMode, Permissions, RuleKind};
use fleet_tools::{check_command, shell, Access, CommandPolicy, Workspace};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

const LINES: &[(&str, &str)] = &[
    ("short", "git status"),
    ("typical", "rg -n 'fn main' src | head -n 20"),
    (
        "compound",
        "cd crates/fleet-tools && git log --oneline -5 -- src && wc -l src/*.rs | sort -n | tail -3",
    ),
    (
        "substitutions",
        "for f in $(git ls-files '*.rs'); do echo \"$f: $(wc -l < \"$f\")\"; done",
    ),
    (
        "heredoc",
        "cat <<'EOF' | grep -c x\nline one\nline two with x\nEOF",
    ),
    ("bypass", "sed s/hello/X/ $'-i' hello.txt"),
];

fn time(iterations: u32, mut f: impl FnMut()) -> Duration {
    for _ in 0..iterations / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    start.elapsed() / iterations
}

fn main() {
    let iterations: u32 = std::env::var("FLEET_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let cwd = Path::new("/srv/project");
    let mut builder = Permissions::builder(Workspace::new(cwd));
    builder.mode(PermissionMode::Default);
    builder
        .rules(
            RuleKind::Allow,
            &["Bash(git *)", "Bash(rg *)", "Bash(ls *)", "Bash(wc *)"],
            cwd,
            "bench",
        )
        .expect("rules parse");
    let perms = builder.build();
    println!(
        "{:<14} {:>7} {:>12} {:>12} {:>12}",
        "line", "bytes", "parse", "read-only", "rules"
    );
    for (name, line) in LINES {
        let parse = time(iterations, || {
            black_box(shell::parse(black_box(line)));
        });
        let classify = time(iterations, || {
            let _ = black_box(check_command(
                black_box(line),
                &CommandPolicy::ReadOnly,
                cwd,
            ));
        });
        let access = Access::Command(line.to_string());
        let rules = time(iterations, || {
            black_box(perms.check("Bash", false, black_box(&access), cwd));
        });
        println!(
            "{name:<14} {:>7} {:>10.1}µs {:>10.1}µs {:>10.1}µs",
            line.len(),
            parse.as_secs_f64() * 1e6,
            classify.as_secs_f64() * 1e6,
            rules.as_secs_f64() * 1e6
        );
    }
}
