//! Helpers shared by the fuzz targets: splitting an input into network-like chunks, and a
//! scratch folder for targets whose parser reads files.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Cuts `data` into chunks whose sizes come from `seed`: the SSE decoders must give the same
/// events wherever the network splits a stream, so targets feed the same bytes whole and in
/// these pieces and compare.
pub fn chunks(seed: u16, data: &[u8]) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x1_0000;
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        // xorshift32: cheap, and the same input always cuts the same way.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = match state % 8 {
            0 => 1,
            1 => 2,
            2 => 3,
            _ => 1 + (state >> 8) as usize % 97,
        }
        .min(rest.len());
        let (head, tail) = rest.split_at(size);
        out.push(head);
        rest = tail;
    }
    out
}

/// The two leading bytes as a seed, and the rest.
pub fn seed_and_rest(data: &[u8]) -> (u16, &[u8]) {
    match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]), rest),
        _ => (0, data),
    }
}

/// A folder of this process's own, made once and reused by every run (libFuzzer runs inputs
/// one after another in one process). On tmpfs when there is one: the mailbox syncs every
/// append, which on a disk would make each run wait for it.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // `scripts/fuzz.sh` names a folder it removes when the run ends.
        let shm = Path::new("/dev/shm");
        let base = match std::env::var_os("FLEET_FUZZ_SCRATCH") {
            Some(dir) => PathBuf::from(dir),
            None if shm.is_dir() => shm.to_path_buf(),
            None => std::env::temp_dir(),
        };
        let dir = base.join(format!("fleet-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the fuzz scratch folder can be made");
        dir
    })
}

/// Empties `dir` (made if missing) so each input starts from the same state.
pub fn fresh_dir(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("the fuzz scratch folder can be made");
}
