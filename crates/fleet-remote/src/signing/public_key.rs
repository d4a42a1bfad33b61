//! A public key as people copy it between machines: `ed25519:<base64 of the 32 key bytes>`.
//! Hex (64 digits) and base64url are read too, since a key pasted from elsewhere may come in
//! either; what fleet prints is always standard padded base64.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use ed25519_dalek::{Signature, VerifyingKey, PUBLIC_KEY_LENGTH, SIGNATURE_LENGTH};

use super::SigningError;

/// The prefix naming the algorithm, so another kind of key can be added without guessing.
pub const PREFIX: &str = "ed25519:";

const ANY_PAD: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_ANY_PAD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, ANY_PAD);
const URL_SAFE_ANY_PAD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, ANY_PAD);

/// An Ed25519 public key that signs jobs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(VerifyingKey);

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({self})")
    }
}

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b64 = base64::engine::general_purpose::STANDARD.encode(self.0.as_bytes());
        write!(f, "{PREFIX}{b64}")
    }
}

impl std::str::FromStr for PublicKey {
    type Err = SigningError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl PublicKey {
    pub(crate) fn from_verifying(key: VerifyingKey) -> Self {
        Self(key)
    }

    /// Reads `ed25519:<base64>` or `ed25519:<64 hex digits>` (surrounding blanks ignored).
    /// A weak (small-order) key is refused: it would accept signatures anyone can make.
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        let bad = |reason: &str| SigningError::BadPublicKey {
            key: text.to_string(),
            reason: reason.to_string(),
        };
        let body = text
            .trim()
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("it does not start with `ed25519:`"))?;
        let bytes =
            if body.len() == 2 * PUBLIC_KEY_LENGTH && body.bytes().all(|b| b.is_ascii_hexdigit()) {
                decode_hex(body).ok_or_else(|| bad("bad hex"))?
            } else {
                STANDARD_ANY_PAD
                    .decode(body)
                    .or_else(|_| URL_SAFE_ANY_PAD.decode(body))
                    .map_err(|_| bad("neither base64 nor 64 hex digits"))?
            };
        let bytes: [u8; PUBLIC_KEY_LENGTH] =
            bytes.try_into().map_err(|_| bad("not 32 bytes long"))?;
        let key = VerifyingKey::from_bytes(&bytes).map_err(|_| bad("not a point on the curve"))?;
        if key.is_weak() {
            return Err(bad("a weak (small-order) key"));
        }
        Ok(Self(key))
    }

    /// Whether `signature` (64 bytes) is this key's over `message`. Strict: no non-canonical
    /// signature passes.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(bytes) = <[u8; SIGNATURE_LENGTH]>::try_from(signature) else {
            return false;
        };
        self.0
            .verify_strict(message, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
