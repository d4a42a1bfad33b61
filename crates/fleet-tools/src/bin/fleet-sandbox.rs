//! The sandbox launcher and guardian on their own, for tests of crates whose test binaries are
//! not `fleet` (the `fleet` binary itself serves both roles in normal use).

use std::process::ExitCode;

fn main() -> ExitCode {
    match fleet_tools::sandbox::dispatch() {
        Some(code) => code,
        None => {
            eprintln!(
                "fleet-sandbox: run by fleet only (`fleet-sandbox {} …` or `{} …`)",
                fleet_tools::sandbox::launcher::EXEC_MODE,
                fleet_tools::sandbox::launcher::GUARD_MODE
            );
            ExitCode::from(2)
        }
    }
}
