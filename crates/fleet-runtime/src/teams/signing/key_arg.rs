//! The `--lead-verify-key` argument: `<epoch-ms>.<base64url(SPKI DER)>`, the DER being the one
//! fixed encoding an Ed25519 public key has (a 12-byte prefix naming the algorithm, then the 32
//! key bytes), so no ASN.1 library is needed to write or read it.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use ed25519_dalek::{VerifyingKey, PUBLIC_KEY_LENGTH};

use super::SigningError;

/// `SEQUENCE { SEQUENCE { OID 1.3.101.112 (Ed25519) }, BIT STRING (0 unused bits) … }`.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// base64url that reads text with or without `=` padding (Claude Code writes none; a person
/// pasting a key may add it) and still refuses the standard alphabet's `+` and `/`.
pub(super) const URL_SAFE_ANY_PAD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

pub(super) fn encode(issued_ms: u64, key: &VerifyingKey) -> String {
    let mut der = Vec::with_capacity(SPKI_PREFIX.len() + PUBLIC_KEY_LENGTH);
    der.extend_from_slice(&SPKI_PREFIX);
    der.extend_from_slice(key.as_bytes());
    format!(
        "{issued_ms}.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(der)
    )
}

pub(super) fn decode(arg: &str) -> Result<VerifyingKey, SigningError> {
    let bad = || SigningError::BadKey(arg.to_string());
    let (stamp, b64) = arg.split_once('.').ok_or_else(bad)?;
    if stamp.is_empty() || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    stamp.parse::<u64>().map_err(|_| bad())?;
    let der = URL_SAFE_ANY_PAD.decode(b64).map_err(|_| bad())?;
    let key = der.strip_prefix(&SPKI_PREFIX[..]).ok_or_else(bad)?;
    let key: &[u8; PUBLIC_KEY_LENGTH] = key.try_into().map_err(|_| bad())?;
    let key = VerifyingKey::from_bytes(key).map_err(|_| bad())?;
    // A small-order key would accept signatures anyone can make.
    if key.is_weak() {
        return Err(bad());
    }
    Ok(key)
}
