//! Line numbers in tool input. Models now and then send `"offset": "120"` or `120.0`; those
//! mean exactly one thing, so they are taken, while anything else (`"ten"`, `-3`, `1.5`) is
//! refused with an error naming the field. The schema the model is shown still says integer.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// `deserialize_with` for an optional non-negative integer that tolerates numeric strings.
pub(crate) fn optional_u64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    deserializer.deserialize_option(OptionalU64)
}

struct OptionalU64;

impl<'de> Visitor<'de> for OptionalU64 {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative whole number")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        u64::try_from(value)
            .map(Some)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(value), &self))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        if value >= 0.0 && value.fract() == 0.0 && value <= u64::MAX as f64 {
            Ok(Some(value as u64))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(value), &self))
        }
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        value
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| E::invalid_value(de::Unexpected::Str(value), &self))
    }
}
