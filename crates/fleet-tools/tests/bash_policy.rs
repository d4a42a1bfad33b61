//! Command policies for restricted Bash: tables of allowed and refused command lines for both
//! policies, and `GuardedBash` end to end against real processes.
#![allow(clippy::unwrap_used)]

use fleet_tools::builtin::BashTool;
use fleet_tools::{
    check_command, CommandPolicy, GuardedBash, Parallelism, PolicyRefusal, Tool, ToolContext,
    ToolError, Workspace,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

/// A project folder that does not exist: the checks are about text, and a project under the
/// temp folder would make every write in it allowed.
const PROJECT: &str = "/srv/fleet-policy-test/project";

/// (command, allowed?) for the read-only policy.
#[rustfmt::skip]
const READ_ONLY: &[(&str, bool)] = &[
    // Listed programs, alone and combined.
    ("ls -la", true),
    ("cat src/main.rs | head -n 20", true),
    ("grep -rn 'fn main' src && wc -l src/*.rs", true),
    ("rg --files | sort | uniq -c", true),
    ("rg -n 'TODO' --glob '!target' .", true),
    ("find . -name '*.rs' -type f", true),
    ("find . -name '*.rs' -print0 | xargs -0 wc -l", true),
    ("fd -e rs main", true),
    ("tree -L 2", true),
    ("stat -c %s f && du -sh . && df -h", true),
    ("head -c 100 f; tail -n 5 f", true),
    ("printf '%s\\n' a b | tr a-z A-Z | cut -c1", true),
    ("jq '.dependencies' package.json", true),
    ("env", true),
    ("date +%Y-%m-%d", true),
    ("command -v cargo", true),
    ("/usr/bin/ls -l", true),
    ("readlink -f . && realpath .. && basename \"$PWD\"", true),
    ("cd src && ls", true),
    ("if [ -f Cargo.toml ]; then cat Cargo.toml; fi", true),
    ("for f in *.md; do wc -l \"$f\"; done", true),
    // cargo's configuration can run programs even for `cargo metadata`: never read-only.
    ("cargo tree -d 2>&1 | head", false),
    ("cargo metadata --format-version 1 > /dev/null", false),
    // git that only looks.
    ("git status --short", true),
    ("git log --oneline -n 5 -- src/", true),
    ("git diff HEAD~1 --stat", true),
    ("git show HEAD:README.md > /dev/null", true),
    ("git blame -L 1,10 src/lib.rs", true),
    ("git branch -a", true),
    ("git branch --list 'feat/*'", true),
    ("git branch --contains HEAD", true),
    ("git tag -l 'v1.*'", true),
    ("git remote -v", true),
    ("git config --get user.name", true),
    // Another folder may hold a repository whose configuration runs programs.
    ("git -C ../other log -1", false),
    // sed and awk that only print.
    ("sed -n '1,20p' src/lib.rs", true),
    ("sed -e 's/a/b/' -e '/x/d' f", true),
    ("awk '{print $1}' f | sort -u", true),
    ("awk -F: '$3 > 1000 {n++} END {print n}' /etc/passwd", true),
    // Quoting, substitutions and redirections that change nothing.
    ("echo 'rm -rf / ; > out'", true),
    ("echo \"a && b\" | wc -c", true),
    ("echo \"$(git rev-parse HEAD)\"", true),
    ("wc -l $(git ls-files '*.rs')", true),
    ("diff <(sort a.txt) <(sort b.txt)", true),
    ("echo $((1 + 2))", true),
    ("ls missing 2>/dev/null || echo none", true),
    ("cat <<< 'here string'", true),
    ("while read -r line; do echo \"$line\"; done < list.txt", true),
    ("ls >& /dev/null", true),
    ("git reflog -n 5", true),

    // Programs that change files, or are not on the list.
    ("rm -rf build", false),
    ("touch x", false),
    ("cp a b", false),
    ("sudo ls", false),
    ("make build", false),
    ("cargo build", false),
    ("npm test", false),
    ("./ls", false),
    // A shell's command string is read as a line of its own.
    ("bash -c 'ls'", true),
    ("bash -c 'ls; rm x'", false),
    ("echo ok | sh", false),
    ("cat f | python3 -c 'print(1)'", false),
    // Compound lines: one bad part is enough.
    ("ls && touch x", false),
    ("ls; mkdir d", false),
    ("ls || chmod +x f", false),
    ("ls | tee out.txt", false),
    ("ls & rm x", false),
    ("ls\nrm x", false),
    // Redirections into files.
    ("ls > files.txt", false),
    ("echo hi >> notes.md", false),
    ("diff a b > out.diff", false),
    ("ls 2>errors.log", false),
    ("ls &>all.log", false),
    ("cat > f <<EOF\nx\nEOF", false),
    // Listed programs used to change things.
    ("find . -name '*.tmp' -delete", false),
    ("find . -exec rm {} \\;", false),
    ("find . -fprint out.txt", false),
    ("fd -x rm", false),
    ("rg --pre ./script pattern", false),
    ("sort -o sorted.txt f", false),
    ("uniq in.txt out.txt", false),
    ("tree -o out.txt", false),
    ("date -s '2020-01-01'", false),
    ("sed -i 's/a/b/' f", false),
    ("sed -i.bak -e 's/a/b/' f", false),
    ("sed -ni 's/a/b/p' f", false),
    ("sed 's/a/b/w out.txt' f", false),
    ("awk '{system(\"rm x\")}' f", false),
    ("awk '{print > \"out\"}' f", false),
    ("awk '{print | \"sh\"}' f", false),
    ("xargs rm < list", false),
    ("find . -print0 | xargs -0 rm", false),
    ("env rm x", false),
    ("for PATH in /tmp/evil; do ls; done", false),
    ("read PATH", false),
    ("printf -v PATH /tmp/evil", false),
    ("echo hi >& out", false),
    // Abbreviated long options, and wrappers whose command may start later than it seems.
    ("sed --in-pl 's/a/b/' f", false),
    ("sort --out=x f", false),
    ("git log --out=x", false),
    ("git branch --del x", false),
    ("xargs --arg ls rm", false),
    // git that changes the repository.
    ("git branch -D feature", false),
    ("git branch new-feature", false),
    ("git tag v2", false),
    ("git tag -d v1", false),
    ("git commit -m 'x'", false),
    ("git checkout main", false),
    ("git stash", false),
    ("git config user.name bob", false),
    ("git -c core.pager=evil log", false),
    ("git log --output=log.txt", false),
    ("git diff --ext-diff", false),
    ("git -C /x push", false),
    ("git remote -v add origin https://example.com/r.git", false),
    ("git reflog expire --all", false),
    // Substitutions run commands too.
    ("echo \"$(rm -rf x)\"", false),
    ("ls `touch x`", false),
    ("$(echo rm) -rf x", false),
    ("echo $(( $(touch x) + 1 ))", false),
    // Variables that change what runs, and lines that cannot be read.
    ("PATH=/tmp/evil ls", false),
    // A variable that changes nothing by itself may be set; PATH and the like may not.
    ("X=1", true),
    ("PATH=/tmp/evil", false),
    ("echo 'unterminated", false),
    ("echo $(ls", false),
];

/// (command, allowed?) for writes only under the temp folder, from [`PROJECT`]; `{tmp}` is
/// the temp folder.
#[rustfmt::skip]
const WRITES_UNDER_TMP: &[(&str, bool)] = &[
    // Builds and tests run, wherever they write.
    ("cargo test", true),
    ("cargo test --target-dir {tmp}/target", true),
    ("npm test", true),
    ("pytest -q", true),
    ("make check", true),
    ("go test ./...", true),
    ("python3 -c 'print(1)'", true),
    ("env FOO=1 cargo test", true),
    ("timeout 60 cargo test", true),
    ("curl -s http://localhost:8080/health", true),
    ("git status && git diff", true),
    ("grep -r foo . | xargs echo", true),
    ("sudo -u nobody ls", true),
    // Writes under the temp folder.
    ("ls -la > {tmp}/listing.txt", true),
    ("cargo test 2>&1 | tee {tmp}/test.log", true),
    ("npm test > {tmp}/npm.log 2>&1", true),
    ("echo x > /dev/null", true),
    ("echo \"$(date)\" >> {tmp}/log", true),
    ("git log --oneline > {tmp}/log.txt", true),
    ("mkdir -p {tmp}/verify && touch {tmp}/verify/a", true),
    ("cd {tmp} && echo hi > {tmp}/x", true),
    ("cp -r src {tmp}/copy", true),
    ("cp a b -t {tmp}", true),
    ("mv {tmp}/a {tmp}/b", true),
    ("rm -rf {tmp}/verify", true),
    ("rm -rf {tmp}/x/../y", true),
    ("rm -f {tmp}/build/*.o", true),
    ("touch {tmp}/a {tmp}/b", true),
    ("ln -s /srv/project/src {tmp}/src-link", true),
    ("chmod +x {tmp}/run.sh", true),
    ("dd if=/dev/zero of={tmp}/zero bs=1 count=1", true),
    ("sed -i 's/a/b/' {tmp}/copy.txt", true),
    ("find {tmp}/verify -name '*.o' -delete", true),
    ("find {tmp}/v -type f -exec rm {} +", true),
    ("find {tmp}/v -name '*.rs' -exec mv {} {}.bak \\;", true),
    ("curl -o {tmp}/page.html http://localhost/", true),
    ("curl -sSLo {tmp}/page.html http://localhost/", true),
    ("wget -O {tmp}/f http://localhost/", true),
    ("git -C {tmp}/repo commit -m wip", true),
    ("git clone https://example.com/r.git {tmp}/r", true),
    ("git init {tmp}/newrepo", true),
    ("bash -c 'touch {tmp}/x'", true),
    ("tar czf {tmp}/src.tgz src", true),
    ("tar -xzf {tmp}/src.tgz -C {tmp}/src", true),
    ("tar tzf {tmp}/src.tgz", true),
    ("unzip -l {tmp}/a.zip", true),
    ("FOO=1 cargo test", true),
    ("cargo fmt --check", true),
    ("cargo clippy -- -D warnings", true),
    ("black --check .", true),
    ("npm run build", true),
    ("cargo fmt --manifest-path {tmp}/p/Cargo.toml", true),
    ("npm install --prefix {tmp}/deps", true),
    ("sort -o {tmp}/sorted f", true),

    // Redirections into the project.
    ("echo x > notes.txt", false),
    ("cargo test > test.log", false),
    ("npm test &> /srv/project/out.log", false),
    ("echo x >| out", false),
    ("exec > log.txt", false),
    ("cat <<EOF > notes.md\nhi\nEOF", false),
    // File-changing programs aimed at the project.
    ("rm -rf build", false),
    ("touch marker", false),
    ("mkdir newdir", false),
    ("cp {tmp}/a src/a", false),
    ("mv src/a {tmp}/a", false),
    ("ln -s {tmp}/x link", false),
    ("chmod -x script.sh", false),
    ("chmod 644 README.md", false),
    ("chown me f", false),
    ("truncate -s 0 log.txt", false),
    ("dd if=/dev/zero of=disk.img", false),
    ("cat x | tee out.txt", false),
    ("sed -i 's/a/b/' src/lib.rs", false),
    ("perl -pi -e 's/a/b/' src/lib.rs", false),
    ("patch -p1 < fix.diff", false),
    ("install -m 755 bin/tool /usr/local/bin/tool", false),
    ("rsync -a src/ backup/", false),
    ("cp --target /srv/project {tmp}/a", false),
    ("tar xzf {tmp}/src.tgz", false),
    ("unzip {tmp}/a.zip", false),
    ("cat x | sponge out.txt", false),
    ("mktemp ./tmp.XXXX", false),
    ("curl -o page.html http://x", false),
    ("curl -O http://x/file", false),
    ("wget http://x/file", false),
    ("find . -delete", false),
    ("find . -name '*.o' -exec rm {} \\;", false),
    ("find . | xargs rm", false),
    ("sort -o sorted.txt f", false),
    ("uniq in.txt out.txt", false),
    ("awk '{print > \"out\"}' f", false),
    ("echo hi >& out.log", false),
    // Formatters, fixers and package managers rewrite the project.
    ("cargo fmt", false),
    ("cargo clippy --fix", false),
    ("cargo add serde", false),
    ("rustfmt --emit files src/lib.rs", false),
    ("prettier --write src", false),
    ("black .", false),
    ("npm install", false),
    ("yarn", false),
    ("go mod tidy", false),
    // git that changes the project's repository.
    ("git add .", false),
    ("git commit -am wip", false),
    ("git checkout -- src", false),
    ("git stash", false),
    ("git reset --hard", false),
    ("git branch -D old", false),
    ("git tag -d v1", false),
    ("git clean -fdx", false),
    ("git push", false),
    ("git clone https://example.com/r.git", false),
    ("git -C /srv/project commit -m x", false),
    // Escapes from the temp folder.
    ("rm -rf {tmp}/../srv", false),
    ("touch {tmp}/a/../../etc/x", false),
    ("echo x > {tmp}/../out", false),
    ("rm -rf {tmp}/{a,../../srv}", false),
    ("rm -rf {tmp}/.*/x", false),
    // Paths and programs only known at run time.
    ("echo hi > $HOME/x", false),
    ("rm -rf ~/x", false),
    ("rm $FILE", false),
    ("$CMD -rf x", false),
    ("$(echo rm) -rf x", false),
    // Wrappers and nested command lines.
    ("sudo rm -rf /", false),
    ("env rm x", false),
    ("nice -n 5 rm x", false),
    ("sudo --user root rm -rf src", false),
    ("GIT_DIR=/srv/project/.git git -C {tmp}/r commit -m x", false),
    ("env GIT_WORK_TREE=/srv/project git -C {tmp}/r checkout .", false),
    ("xargs --arg list rm", false),
    ("timeout 5 rm x", false),
    ("command rm x", false),
    ("bash -c 'rm -rf src'", false),
    ("sh -c \"echo hi > out\"", false),
    ("eval 'rm x'", false),
    ("echo \"$(rm -rf src)\"", false),
    ("echo `touch x`", false),
    ("function f { rm x; }", false),
    ("alias ls='rm -rf src'", false),
    ("trap 'rm -rf src' EXIT", false),
    // A cd this check cannot follow makes relative paths unknowable.
    ("cd .. && rm -rf x", false),
    ("cd - && touch x", false),
    ("cd {tmp} && rm -rf src", false),
];

fn tmp() -> String {
    std::env::temp_dir()
        .to_string_lossy()
        .trim_end_matches('/')
        .to_string()
}

/// Runs a table; every mismatch is reported at once, with the refusal when there was one.
fn run_table(policy: &CommandPolicy, table: &[(&str, bool)]) {
    let tmp = tmp();
    let failures: Vec<String> = table
        .iter()
        .filter_map(|(command, allowed)| {
            let command = command.replace("{tmp}", &tmp);
            let result = check_command(&command, policy, Path::new(PROJECT));
            (result.is_ok() != *allowed).then(|| match result {
                Ok(()) => format!("allowed but should be refused: {command:?}"),
                Err(refusal) => format!("refused but should be allowed: {command:?}: {refusal}"),
            })
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn read_only_table() {
    assert!(READ_ONLY.iter().filter(|(_, ok)| *ok).count() >= 40);
    assert!(READ_ONLY.iter().filter(|(_, ok)| !*ok).count() >= 40);
    run_table(&CommandPolicy::ReadOnly, READ_ONLY);
}

#[test]
fn writes_under_tmp_table() {
    assert!(WRITES_UNDER_TMP.iter().filter(|(_, ok)| *ok).count() >= 40);
    assert!(WRITES_UNDER_TMP.iter().filter(|(_, ok)| !*ok).count() >= 40);
    run_table(&CommandPolicy::temp_dir_only(), WRITES_UNDER_TMP);
}

#[test]
fn read_only_refusals_quote_the_offending_part() {
    let refusal = check_command(
        "git status && rm -rf build",
        &CommandPolicy::ReadOnly,
        Path::new(PROJECT),
    )
    .unwrap_err();
    assert!(
        matches!(refusal, PolicyRefusal::ReadOnly { .. }),
        "{refusal:?}"
    );
    let text = refusal.to_string();
    assert!(
        text.contains("`rm -rf build` would change files") && text.contains("read-only"),
        "{text}"
    );

    let text = check_command("make all", &CommandPolicy::ReadOnly, Path::new(PROJECT))
        .unwrap_err()
        .to_string();
    assert!(text.contains("`make all` runs make"), "{text}");
    assert!(
        text.contains("ls, cat"),
        "the allowed programs are named: {text}"
    );

    let text = check_command("ls > out.txt", &CommandPolicy::ReadOnly, Path::new(PROJECT))
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("`out.txt`") && text.contains("/dev/null"),
        "{text}"
    );
}

#[test]
fn write_refusals_name_the_path_and_the_allowed_folder() {
    let policy = CommandPolicy::WritesOnlyUnder(vec![PathBuf::from("/scratch/area")]);
    let refusal = check_command("ls && rm -rf build", &policy, Path::new(PROJECT)).unwrap_err();
    assert_eq!(
        refusal,
        PolicyRefusal::Outside {
            command: "rm -rf build".into(),
            path: format!("{PROJECT}/build"),
            allowed: "/scratch/area".into(),
        }
    );
    let text = check_command("rm $X", &policy, Path::new(PROJECT))
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("`$X`") && text.contains("/scratch/area"),
        "{text}"
    );
}

#[test]
fn a_cd_into_the_project_is_followed() {
    let scratch = tmp();
    let policy = CommandPolicy::temp_dir_only();
    let from_tmp = Path::new(&scratch);
    assert!(check_command("touch x", &policy, from_tmp).is_ok());
    let refusal = check_command(&format!("cd {PROJECT} && touch x"), &policy, from_tmp);
    assert!(
        matches!(&refusal, Err(PolicyRefusal::Outside { path, .. }) if path == &format!("{PROJECT}/x")),
        "{refusal:?}"
    );
    // The same holds inside a substitution, which runs after the cd.
    let refusal = check_command(
        &format!("cd {PROJECT}; echo \"$(rm x)\""),
        &policy,
        from_tmp,
    );
    assert!(
        matches!(refusal, Err(PolicyRefusal::Outside { .. })),
        "{refusal:?}"
    );
}

#[test]
fn a_symlink_in_the_scratch_folder_does_not_reach_the_project() {
    let root = TempDir::new().unwrap();
    let scratch = root.path().join("scratch");
    let project = root.path().join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    std::os::unix::fs::symlink(&project, scratch.join("p")).unwrap();
    let policy = CommandPolicy::WritesOnlyUnder(vec![scratch.clone()]);

    let through_link = format!("rm -rf {}/p/src", scratch.display());
    let refusal = check_command(&through_link, &policy, &project).unwrap_err();
    assert!(
        matches!(&refusal, PolicyRefusal::Outside { path, .. } if path.ends_with("project/src")),
        "{refusal:?}"
    );
    let plain = format!("rm -rf {}/other", scratch.display());
    assert_eq!(check_command(&plain, &policy, &project), Ok(()));
}

// GuardedBash end to end.

fn context(dir: &Path) -> ToolContext {
    ToolContext::new(dir.to_path_buf(), Arc::new(Workspace::new(dir)))
}

fn guarded(policy: CommandPolicy) -> GuardedBash {
    GuardedBash::new(Arc::new(BashTool::with_max_output(30_000)), policy)
}

#[tokio::test]
async fn read_only_bash_refuses_without_running_and_runs_what_it_allows() {
    let project = TempDir::new().unwrap();
    let tool = guarded(CommandPolicy::ReadOnly);
    let ctx = context(project.path());

    let refused = tool
        .call(json!({ "command": "echo start && touch marker" }), &ctx)
        .await
        .unwrap_err();
    assert!(
        !project.path().join("marker").exists(),
        "a refused command must not run at all"
    );
    let ToolError::Policy {
        tool: name,
        refusal,
        ..
    } = &refused
    else {
        panic!("expected a policy refusal, got {refused:?}");
    };
    assert!(
        matches!(**refusal, PolicyRefusal::ReadOnly { .. }),
        "{refusal:?}"
    );
    assert_eq!(name, "Bash");
    let reason = refused.to_string();
    assert!(reason.contains("`touch marker`"), "{reason}");
    assert!(
        reason.contains("read-only") && reason.contains("ls, cat"),
        "{reason}"
    );

    std::fs::write(project.path().join("seen.txt"), "hello\n").unwrap();
    let output = tool
        .call(json!({ "command": "cat seen.txt | wc -l" }), &ctx)
        .await
        .unwrap();
    assert!(!output.is_error, "{output:?}");
    assert_eq!(output.content.trim(), "1");
}

#[tokio::test]
async fn temp_only_bash_refuses_project_writes_and_allows_scratch_writes() {
    let project = TempDir::new().unwrap();
    let scratch = TempDir::new().unwrap();
    let tool = guarded(CommandPolicy::WritesOnlyUnder(vec![scratch
        .path()
        .to_path_buf()]));
    let ctx = context(project.path());

    let refused = tool
        .call(json!({ "command": "echo made > marker" }), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &refused,
            ToolError::Policy { refusal, .. } if matches!(**refusal, PolicyRefusal::Outside { .. })
        ),
        "{refused:?}"
    );
    assert!(!project.path().join("marker").exists());

    let written = scratch.path().join("ok.txt");
    let command = format!("echo made > {} && echo done", written.display());
    let output = tool
        .call(json!({ "command": command }), &ctx)
        .await
        .unwrap();
    assert!(!output.is_error, "{output:?}");
    assert_eq!(output.content.trim(), "done");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "made\n");
}

#[test]
fn guarded_bash_looks_like_bash_and_says_what_it_refuses() {
    let inner = BashTool::with_max_output(30_000);
    let read_only = guarded(CommandPolicy::ReadOnly);
    assert_eq!(read_only.name(), "Bash");
    assert_eq!(read_only.input_schema(), Tool::input_schema(&inner));
    assert!(read_only
        .description()
        .starts_with(&Tool::description(&inner)));
    assert!(read_only.description().contains("read-only"));
    assert!(read_only.is_read_only());
    assert_eq!(read_only.parallelism(), Parallelism::Shared);

    let temp_only = guarded(CommandPolicy::temp_dir_only());
    assert!(!temp_only.is_read_only());
    assert_eq!(temp_only.parallelism(), Parallelism::Exclusive);
    assert!(temp_only.description().contains(&tmp()));
}

#[tokio::test]
async fn a_bad_input_is_the_inner_tools_validation_error() {
    let project = TempDir::new().unwrap();
    let tool = guarded(CommandPolicy::ReadOnly);
    let err = tool
        .call(json!({ "command": 42 }), &context(project.path()))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidInput { .. }), "{err:?}");
}
