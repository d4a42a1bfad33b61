//! Crash points for tests: a debug build panics at a named point when `FLEET_FAILPOINT` names
//! it, so the tests can prove what a panic that escapes every guard does to a run (an error
//! result, a non-zero exit, a transcript that resumes). Release builds compile this to nothing.

/// Panics here when `FLEET_FAILPOINT` is `name` (debug builds only).
pub(crate) fn hit(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("FLEET_FAILPOINT").is_ok_and(|wanted| wanted == name) {
        panic!("failpoint {name}");
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}
