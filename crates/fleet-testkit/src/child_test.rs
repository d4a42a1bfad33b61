//! Re-running one test of the running test binary in a child process (a second process that
//! shares a repository, an accept loop out of descriptors). libtest knows a test by its module
//! path without the crate's name; deriving it from `module_path!()` keeps the child pointed at
//! the right test when files move between modules; a stale literal makes `--exact` match
//! nothing, and the child passes having run no test.

/// The name `--exact` needs for `function` in the module whose `module_path!()` is given.
pub fn test_name(module_path: &str, function: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, path)) => format!("{path}::{function}"),
        None => function.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::test_name;

    #[test]
    fn the_crate_name_is_dropped_and_the_rest_kept() {
        assert_eq!(
            test_name("integration::isolation::concurrency", "child"),
            "isolation::concurrency::child"
        );
        assert_eq!(test_name("uds_accept", "child"), "child");
    }
}
