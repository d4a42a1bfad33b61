//! The keys a worker runs jobs for: `remote.trustedKeys` in the worker user's own settings
//! file (`$FLEET_HOME/settings.json`) and its `--trust-key` flags. A repository's settings
//! never count: a worker's folder may be anyone's checkout, and a key listed there would let
//! its author run jobs.
//!
//! With none configured, the worker trusts its own user's key (the one in its
//! `$FLEET_HOME`): a person running a worker for themselves, sharing the home with the
//! sessions that submit, needs no setup, and a stranger's job still does not run.

use std::path::{Path, PathBuf};

use super::{PublicKey, SigningError, UserKey};

/// Where a worker's trusted keys came from, for its startup line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// `remote.trustedKeys` and `--trust-key`: this many from each.
    Configured { settings: usize, flags: usize },
    /// Nothing configured: the worker user's own key, from this file.
    OwnKey(PathBuf),
}

/// The public keys whose jobs a worker runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKeys {
    keys: Vec<PublicKey>,
    source: TrustSource,
}

impl TrustedKeys {
    /// Exactly `keys` (tests, embedding).
    pub fn new(keys: Vec<PublicKey>) -> Self {
        let flags = keys.len();
        Self {
            keys,
            source: TrustSource::Configured { settings: 0, flags },
        }
    }

    /// The keys a worker whose fleet home is `home` trusts, given its `--trust-key` flags.
    /// A key that does not parse is an error naming it (a typo must not leave the worker
    /// trusting fewer keys than meant without a word).
    pub fn for_worker(home: &Path, flags: &[String]) -> Result<Self, SigningError> {
        let mut keys = from_settings(&home.join("settings.json"))?;
        let settings = keys.len();
        for flag in flags {
            keys.push(PublicKey::parse(flag)?);
        }
        dedup(&mut keys);
        if keys.is_empty() {
            let own = UserKey::load_or_create(home)?;
            return Ok(Self {
                keys: vec![own.public_key()],
                source: TrustSource::OwnKey(own.path().to_path_buf()),
            });
        }
        Ok(Self {
            keys,
            source: TrustSource::Configured {
                settings,
                flags: flags.len(),
            },
        })
    }

    pub fn contains(&self, key: &PublicKey) -> bool {
        self.keys.contains(key)
    }

    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    pub fn source(&self) -> &TrustSource {
        &self.source
    }

    /// One line for the worker's start: which keys it runs jobs for, and how to add one.
    pub fn describe(&self) -> String {
        let list: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        match &self.source {
            TrustSource::OwnKey(path) => format!(
                "no remote.trustedKeys configured: runs only jobs signed by this user's own key \
                 {} ({}); add submitters' keys (`fleet remote key` prints one) to \
                 \"remote\": {{\"trustedKeys\": [...]}} in $FLEET_HOME/settings.json or pass \
                 --trust-key",
                list.join(", "),
                path.display()
            ),
            TrustSource::Configured { .. } => format!(
                "runs jobs signed by {} key{}: {}",
                list.len(),
                if list.len() == 1 { "" } else { "s" },
                list.join(", ")
            ),
        }
    }
}

fn dedup(keys: &mut Vec<PublicKey>) {
    let mut seen = Vec::with_capacity(keys.len());
    keys.retain(|k| {
        let new = !seen.contains(k);
        seen.push(*k);
        new
    });
}

/// `remote.trustedKeys` of the settings file at `path`; none when the file or key is absent.
fn from_settings(path: &Path) -> Result<Vec<PublicKey>, SigningError> {
    let bad = |reason: String| SigningError::Settings {
        path: path.display().to_string(),
        reason,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(bad(err.to_string())),
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("the file is not JSON: {e}")))?;
    let Some(list) = value.pointer("/remote/trustedKeys") else {
        return Ok(Vec::new());
    };
    let items = list
        .as_array()
        .ok_or_else(|| bad("must be a list of \"ed25519:...\" strings".into()))?;
    items
        .iter()
        .map(|item| {
            let text = item
                .as_str()
                .ok_or_else(|| bad(format!("{item} is not a string")))?;
            PublicKey::parse(text).map_err(|e| bad(e.to_string()))
        })
        .collect()
}
