//! Where `curl` and `wget` write. Both are allowed to a verification agent (checking an
//! endpoint is a test), but both can save files: curl only when told to, wget by default into
//! the current directory.

use super::args::{Args, OptSpec};
use super::writes::Effect;
use std::path::PathBuf;

/// curl options that take a value. Only options known to take one are listed (see
/// [`super::args`]); the ones that name files curl writes are among them.
const CURL: OptSpec = OptSpec::short("AbcCdDeEFHKmoQrTtuUwxXyYzP").long(&[
    "output",
    "output-dir",
    "dump-header",
    "cookie-jar",
    "trace",
    "trace-ascii",
    "stderr",
    "libcurl",
    "etag-save",
    "header",
    "data",
    "data-raw",
    "data-binary",
    "data-urlencode",
    "user-agent",
    "request",
    "url",
    "user",
    "cookie",
    "form",
    "referer",
    "proxy",
    "max-time",
    "connect-timeout",
    "retry",
    "write-out",
    "config",
    "upload-file",
    "range",
    "cacert",
    "cert",
    "key",
]);

/// Files curl writes: `-o FILE` (inside `--output-dir` when given), the folder `-O` saves
/// into, and its header, cookie and trace files. `-` is standard output.
pub(super) fn curl(rest: &[String]) -> Vec<Effect> {
    let args = Args::parse(rest, &CURL);
    let dir: Option<PathBuf> = args.values(&["--output-dir"]).last().map(PathBuf::from);
    let in_dir = |file: &str| match &dir {
        Some(dir) => dir.join(file),
        None => PathBuf::from(file),
    };
    let mut changed: Vec<PathBuf> = args
        .values(&["-o", "--output"])
        .filter(|f| *f != "-")
        .map(in_dir)
        .collect();
    changed.extend(
        args.values(&[
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
        ])
        .filter(|f| *f != "-")
        .map(PathBuf::from),
    );
    if args.has(&["-O", "--remote-name", "--remote-name-all", "-J"]) {
        changed.push(dir.clone().unwrap_or_else(|| PathBuf::from(".")));
    }
    vec![Effect::Paths(changed)]
}

const WGET: OptSpec = OptSpec::short("OoaPeiBtTwUQDlARIX").long(&[
    "output-document",
    "output-file",
    "append-output",
    "directory-prefix",
    "execute",
    "input-file",
    "base",
    "tries",
    "timeout",
    "wait",
    "user-agent",
    "quota",
    "domains",
    "level",
    "accept",
    "reject",
    "include-directories",
    "exclude-directories",
    "header",
    "post-data",
    "user",
    "password",
]);

/// Files wget writes: `-O FILE`, else downloads into `-P DIR` or the current directory
/// (nothing with `--spider`), and its `-o` / `-a` log.
pub(super) fn wget(rest: &[String]) -> Vec<Effect> {
    let args = Args::parse(rest, &WGET);
    let mut changed: Vec<&str> = args
        .values(&[
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
        ])
        .filter(|f| *f != "-")
        .collect();
    let saves = !args.has(&["--spider", "-O", "--output-document"]);
    if saves {
        let dir = args.values(&["-P", "--directory-prefix"]).last();
        changed.push(dir.unwrap_or("."));
    }
    vec![Effect::Paths(
        changed.into_iter().map(PathBuf::from).collect(),
    )]
}
