//! Open vocabularies: a fixed set of names fleet writes, read back from data fleet does not
//! control (transcripts of a newer build, Claude Code's team files, an SDK host's JSON, a
//! hook's answer). Reading such data must not fail on a name this build has never seen, so
//! every open vocabulary keeps an unknown name as `Other(String)` and writes it back
//! unchanged; a person's input (`FromStr`) is strict instead, and names the known values.

/// A name that is not in a vocabulary, for input that must be one of the known values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {vocabulary} `{value}`; expected one of {}", .expected.join(", "))]
pub struct UnknownValue {
    /// What the value should have been, in words (`permission decision`).
    pub vocabulary: &'static str,
    /// What was given.
    pub value: String,
    /// Every name the vocabulary knows, as written on the wire.
    pub expected: &'static [&'static str],
}

/// Declares an open vocabulary: the known names as unit variants plus `Other(String)`,
/// serialised as the bare wire name (so a field keeps the exact bytes it had as a `String`).
///
/// What it gives: `as_str`, `KNOWN`, `known`, `is_known`, `Display`, lenient
/// `From<&str>` / `From<String>` and `Deserialize` (unknown names become `Other`), strict
/// `FromStr` (unknown names are an [`UnknownValue`]). There is deliberately no
/// `PartialEq<str>`: code compares variants, so a misspelt name cannot compile.
macro_rules! open_vocabulary {
    (
        $(#[$meta:meta])*
        pub enum $name:ident as $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A name this build does not know (a newer fleet's, or another program's),
            /// kept as read so it is written back unchanged. Build values with `From`, which
            /// never puts a known name here.
            Other(String),
        }

        impl $name {
            /// Every name this build knows, as written on the wire.
            pub const KNOWN: &'static [&'static str] = &[$($wire),+];

            /// The wire name.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )+
                    Self::Other(name) => name,
                }
            }

            /// The known value of a wire name, or `None` for a name this build does not know.
            pub fn known(name: &str) -> Option<Self> {
                match name {
                    $( $wire => Some(Self::$variant), )+
                    _ => None,
                }
            }

            /// Whether this build knows the name (it is not `Other`).
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Other(_))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(name: &str) -> Self {
                Self::known(name).unwrap_or_else(|| Self::Other(name.to_string()))
            }
        }

        impl From<String> for $name {
            fn from(name: String) -> Self {
                match Self::known(&name) {
                    Some(known) => known,
                    None => Self::Other(name),
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::vocab::UnknownValue;

            fn from_str(name: &str) -> Result<Self, Self::Err> {
                Self::known(name).ok_or_else(|| $crate::vocab::UnknownValue {
                    vocabulary: $what,
                    value: name.to_string(),
                    expected: Self::KNOWN,
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <String as serde::Deserialize>::deserialize(deserializer).map(Self::from)
            }
        }
    };
}

pub(crate) use open_vocabulary;
