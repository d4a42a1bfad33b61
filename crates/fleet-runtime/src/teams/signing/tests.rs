use super::*;

/// An entry as the lead writes it into a teammate's inbox.
fn lead_entry(from: &str) -> MailEntry {
    MailEntry::new(
        from,
        r#"{"type":"shutdown_request","requestId":"shutdown-1@alpha","from":"team-lead","timestamp":"t"}"#,
        "2026-12-01T17:00:00.000Z",
        "0b1f7c52-6a0e-4d1c-9d51-3f0f1d2a9c11",
    )
}

fn signed(key: &LeadKey, mut entry: MailEntry) -> MailEntry {
    key.sign(&mut entry);
    entry
}

fn verifier(key: &LeadKey) -> LeadVerifier {
    LeadVerifier::parse(&key.verify_key_arg()).expect("the lead's own key argument parses")
}

#[test]
fn a_signed_lead_entry_verifies_through_the_command_line_key() {
    let key = LeadKey::generate();
    let check = verifier(&key);
    for from in LEAD_SENDERS {
        let entry = signed(&key, lead_entry(from));
        let sig = entry
            .lead_sig
            .as_deref()
            .expect("a lead sender's entry is signed");
        assert_eq!(sig.len(), 86, "64 bytes, base64url without padding: {sig}");
        assert!(!sig.contains(['=', '+', '/']), "{sig}");
        assert_eq!(check.check(&entry), Verdict::Verified, "{from}");
        assert_eq!(key.verifier().check(&entry), Verdict::Verified);
    }
    // Summary and color are covered too when present.
    let entry = signed(
        &key,
        lead_entry("team-lead")
            .with_summary(Some("stop".into()))
            .with_color(Some("blue".into())),
    );
    assert_eq!(check.check(&entry), Verdict::Verified);
}

#[test]
fn the_verify_key_argument_has_claude_codes_shape() {
    let key = LeadKey::generate();
    let arg = key.verify_key_arg();
    assert_eq!(arg, key.verify_key_arg(), "stable across calls");
    let (stamp, b64) = arg.split_once('.').expect("a dot");
    assert!(stamp.parse::<u64>().expect("epoch ms") > 1_600_000_000_000);
    // 44 DER bytes → 59 base64url characters, no padding; the fixed SPKI prefix reads as
    // `MCowBQYDK2VwAyEA` in every Ed25519 key.
    assert_eq!(b64.len(), 59, "{b64}");
    assert!(b64.starts_with("MCowBQYDK2VwAyEA"), "{b64}");
    assert_ne!(
        arg,
        LeadKey::generate().verify_key_arg(),
        "a fresh key each time"
    );
    assert_eq!(format!("{key:?}"), "LeadKey(..)");
}

#[test]
fn tampering_with_any_signed_field_breaks_the_signature() {
    let key = LeadKey::generate();
    let check = verifier(&key);
    let original = signed(
        &key,
        lead_entry("team-lead").with_color(Some("blue".into())),
    );
    assert_eq!(check.check(&original), Verdict::Verified);
    type Tamper = fn(&mut MailEntry);
    let tampers: [(&str, Tamper); 8] = [
        ("msg_id", |e| e.msg_id.push('x')),
        ("from", |e| e.from = "user".into()),
        ("timestamp", |e| {
            e.timestamp = "2026-12-01T17:00:00.001Z".into()
        }),
        ("text", |e| e.text = e.text.replace("alpha", "beta")),
        ("summary added", |e| e.summary = Some("x".into())),
        ("summary empty", |e| e.summary = Some(String::new())),
        ("color changed", |e| e.color = Some("red".into())),
        ("color removed", |e| e.color = None),
    ];
    for (what, tamper) in tampers {
        let mut entry = original.clone();
        tamper(&mut entry);
        assert_eq!(check.check(&entry), Verdict::BadSignature, "{what}");
    }
    // A summary the lead wrote cannot be taken away either.
    let with_summary = signed(&key, lead_entry("user").with_summary(Some("s".into())));
    let mut removed = with_summary.clone();
    removed.summary = None;
    assert_eq!(check.check(&with_summary), Verdict::Verified);
    assert_eq!(check.check(&removed), Verdict::BadSignature);
    // Fields outside the signature may change (the reader tracks `read` elsewhere).
    let mut read = original.clone();
    read.read = true;
    assert_eq!(check.check(&read), Verdict::Verified);
}

#[test]
fn another_teammates_key_does_not_verify() {
    let alpha_key = LeadKey::generate();
    let beta_key = LeadKey::generate();
    let entry = signed(&beta_key, lead_entry("team-lead"));
    assert_eq!(verifier(&alpha_key).check(&entry), Verdict::BadSignature);
    assert_eq!(verifier(&beta_key).check(&entry), Verdict::Verified);
}

#[test]
fn only_lead_senders_need_a_signature() {
    assert!(needs_signature("team-lead"));
    assert!(needs_signature("user"));
    assert!(needs_signature("system"));
    assert!(!needs_signature("alpha"));
    let key = LeadKey::generate();
    let check = verifier(&key);
    // A peer's entry is not signed, and needs no signature.
    let peer = signed(&key, lead_entry("alpha"));
    assert_eq!(peer.lead_sig, None);
    assert_eq!(check.check(&peer), Verdict::Peer);
    // A junk (or even a valid lead) signature on a peer's entry changes nothing.
    for junk in ["", "!!", "AAAA", "not a signature at all"] {
        let mut entry = lead_entry("alpha");
        entry.lead_sig = Some(junk.into());
        assert_eq!(check.check(&entry), Verdict::Peer, "{junk:?}");
    }
}

#[test]
fn a_lead_sender_without_a_usable_signature_is_refused() {
    let key = LeadKey::generate();
    let check = verifier(&key);
    let unsigned = lead_entry("system");
    assert_eq!(check.check(&unsigned), Verdict::Unsigned);
    let mut empty = lead_entry("system");
    empty.lead_sig = Some(String::new());
    assert_eq!(check.check(&empty), Verdict::Unsigned);
    assert!(!Verdict::Unsigned.trusted());

    let good = signed(&key, lead_entry("system")).lead_sig.expect("signed");
    let padded = format!("{good}==");
    let bad_sigs = [
        "not base64!".to_string(),
        "AAAA".to_string(),                              // decodes, but 3 bytes
        good[..good.len() - 2].to_string(),              // truncated
        format!("{good}AA"),                             // 65 bytes
        good.replace('-', "+").replace('_', "/") + "+/", // standard alphabet
        "A".repeat(86), // 64 zero-ish bytes: not a signature by this key
    ];
    for sig in bad_sigs {
        let mut entry = lead_entry("system");
        entry.lead_sig = Some(sig.clone());
        assert_eq!(check.check(&entry), Verdict::BadSignature, "{sig:?}");
    }
    assert!(!Verdict::BadSignature.trusted());
    // The same signature with padding is still the same signature.
    let mut entry = lead_entry("system");
    entry.lead_sig = Some(padded);
    assert_eq!(check.check(&entry), Verdict::Verified);
    assert!(Verdict::Verified.trusted() && Verdict::Peer.trusted());
}

#[test]
fn malformed_verify_keys_are_refused() {
    let good = LeadKey::generate().verify_key_arg();
    let (stamp, b64) = good.split_once('.').expect("a dot");
    let der = key_arg::URL_SAFE_ANY_PAD.decode(b64).expect("base64url");
    let b64url = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let mut x25519 = der.clone();
    x25519[8] = 0x6e; // OID 1.3.101.110: an X25519 key, not Ed25519
    let mut identity = der[..12].to_vec();
    identity.extend_from_slice(&[1]);
    identity.extend_from_slice(&[0; 31]); // the identity point: weak, anyone could "sign"
                                          // Some 32-byte strings are no point on the curve at all.
    let not_a_point = (0u8..=255)
        .map(|b| [[b].as_slice(), &[0; 31]].concat())
        .find(|k| {
            let k: &[u8; 32] = k.as_slice().try_into().expect("32 bytes");
            VerifyingKey::from_bytes(k).is_err()
        })
        .expect("some y has no x");
    let bad = [
        String::new(),
        stamp.to_string(),
        b64.to_string(),
        format!(".{b64}"),
        format!("{stamp}."),
        format!("{stamp}{b64}"),
        format!("-{stamp}.{b64}"),
        format!("+{stamp}.{b64}"),
        format!("1e3.{b64}"),
        format!(" {stamp}.{b64}"),
        format!("{stamp}.{b64} "),
        format!("99999999999999999999999.{b64}"),
        format!("{stamp}.{b64}.{b64}"),
        format!("{stamp}.not*base64"),
        format!("{stamp}.{}", b64url(&der[..43])),
        format!("{stamp}.{}", b64url(&[der.as_slice(), &[0]].concat())),
        format!("{stamp}.{}", b64url(&der[12..])),
        format!("{stamp}.{}", b64url(&x25519)),
        format!("{stamp}.{}", b64url(&identity)),
        format!(
            "{stamp}.{}",
            b64url(&[&der[..12], not_a_point.as_slice()].concat())
        ),
        // Node's key below in the standard alphabet (a random key may happen to have no
        // character where the alphabets differ, so a fixed one).
        "1764608400000.MCowBQYDK2VwAyEAHjFDsx16y1f4Pr1E63Q2261/9J0rTABpMdCkTAR67Sc".to_string(),
    ];
    for arg in bad {
        assert_eq!(
            LeadVerifier::parse(&arg).map(|_| ()),
            Err(SigningError::BadKey(arg.clone())),
            "{arg:?}"
        );
    }
    // Padding is optional.
    let padded = format!(
        "{stamp}.{}",
        base64::engine::general_purpose::URL_SAFE.encode(&der)
    );
    assert!(padded.ends_with('='));
    assert!(LeadVerifier::parse(&padded).is_ok());
    // No prefix of a good key parses, and none panics.
    for end in 0..good.len() {
        assert!(LeadVerifier::parse(&good[..end]).is_err(), "{end}");
    }
}

/// A key pair and signatures made by node 20's `crypto` (`generateKeyPairSync('ed25519')`,
/// SPKI DER exported as base64url, `crypto.sign(null, Buffer.from(JSON.stringify([...])), k)`),
/// which is what Claude Code runs: fleet reads its files.
mod node_vector {
    use super::*;

    const KEY: &str = "1764608400000.MCowBQYDK2VwAyEAHjFDsx16y1f4Pr1E63Q2261_9J0rTABpMdCkTAR67Sc";

    /// Quotes, a backslash, newline, tab, control characters, DEL, non-ASCII, an astral
    /// character, U+2028/U+2029 and `</script>`.
    const TEXT: &str =
        "Say \"hi\" to C:\\tmp\nthen\ttab \u{1}\u{1f}\u{7f} \u{e9} \u{6f22}\u{5b57} \
                        \u{1f680} \u{2028} \u{2029} </script>";
    /// `JSON.stringify` of the array signed for the first entry, as node wrote it.
    const PAYLOAD: &str =
        "[\"claude-team-lead-entry-v1\",\"b7c1e2d4-0000-4000-8000-000000000001\",\
                           \"team-lead\",\"2026-12-01T17:00:00.000Z\",\"Say \\\"hi\\\" to \
                           C:\\\\tmp\\nthen\\ttab \\u0001\\u001f\u{7f} \u{e9} \u{6f22}\u{5b57} \
                           \u{1f680} \u{2028} \u{2029} </script>\",null,null,null]";
    const SIG_1: &str =
        "9EMUZvxY_z0nDcR6RCwHxQPBAm55vMk_iUAJEj2Yh4BINRwBfAdhtjQdD-y0CEb89DWZOvnxRILstOdGnif2Ag";
    const SIG_2: &str =
        "r3MH13z_n_iPYZVIIjI3ERd5VWYJDPSuzM4dxo9TgANzmcvIoMKrznVKfaT5Jo6SQKFLCOsIimFwZHrTGLaPAg";

    fn first() -> MailEntry {
        let mut entry = MailEntry::new(
            "team-lead",
            TEXT,
            "2026-12-01T17:00:00.000Z",
            "b7c1e2d4-0000-4000-8000-000000000001",
        );
        entry.lead_sig = Some(SIG_1.into());
        entry
    }

    fn second() -> MailEntry {
        let mut entry = MailEntry::new(
            "user",
            r#"{"type":"shutdown_request","requestId":"shutdown-1764608400000@alpha","from":"team-lead","timestamp":"2026-12-01T17:00:00.000Z"}"#,
            "2026-12-01T17:00:01.000Z",
            "b7c1e2d4-0000-4000-8000-000000000002",
        )
        .with_summary(Some("stop \"now\"".into()))
        .with_color(Some("blue".into()));
        entry.lead_sig = Some(SIG_2.into());
        entry
    }

    #[test]
    fn fleet_writes_the_bytes_node_signed() {
        assert_eq!(signed_payload(&first()), PAYLOAD);
    }

    #[test]
    fn fleet_verifies_signatures_made_by_node() {
        let check = LeadVerifier::parse(KEY).expect("node's SPKI key parses");
        assert_eq!(check.check(&first()), Verdict::Verified);
        assert_eq!(check.check(&second()), Verdict::Verified);
        // Swapped signatures, and a changed character in the text, do not verify.
        let mut swapped = first();
        swapped.lead_sig = Some(SIG_2.into());
        assert_eq!(check.check(&swapped), Verdict::BadSignature);
        let mut edited = first();
        edited.text = edited.text.replace('\u{2028}', "\u{2029}");
        assert_eq!(check.check(&edited), Verdict::BadSignature);
    }

    #[test]
    fn an_entry_as_claude_code_stores_it_verifies() {
        // The second entry as a line of a Claude Code inbox file.
        let json = format!(
            r#"{{"from":"user","text":{},"summary":"stop \"now\"","timestamp":"2026-12-01T17:00:01.000Z","color":"blue","msgV":1,"msg_id":"b7c1e2d4-0000-4000-8000-000000000002","type":"message","read":false,"lead_sig":"{SIG_2}"}}"#,
            serde_json::to_string(&second().text).expect("a string serializes")
        );
        let entry: MailEntry = serde_json::from_str(&json).expect("an inbox entry parses");
        let check = LeadVerifier::parse(KEY).expect("node's SPKI key parses");
        assert_eq!(check.check(&entry), Verdict::Verified);
    }
}
