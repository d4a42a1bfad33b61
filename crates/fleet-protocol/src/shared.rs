//! [`Shared`]: a list that an agent and the request it is sending hold at once, without a copy.
//!
//! An agent's conversation and tool definitions go into every request it makes. Cloning them
//! per request doubled an agent's bytes for as long as its request was in flight, which is
//! most of an agent's life; with hundreds of agents that was the larger part of the heap. A
//! `Shared` list is copied only when it is changed while a request still reads it (copy on
//! write), which the agent loop never does: a request ends before the next message is added.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Weak};

/// A copy-on-write `Vec<T>`: cheap to clone, readable as a `Vec`, and mutable through
/// [`DerefMut`], which copies the items first only when another holder still shares them.
pub struct Shared<T>(Arc<Vec<T>>);

impl<T> Shared<T> {
    pub fn new() -> Self {
        Self(Arc::new(Vec::new()))
    }

    /// For `skip_serializing_if`, which cannot see through `Deref`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `self` and `other` are the same list (not merely equal ones).
    pub fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A handle to this very list that does not keep its items alive: the key of a cache of
    /// something derived from the list (see [`Self::is`]).
    pub fn downgrade(&self) -> Weak<Vec<T>> {
        Arc::downgrade(&self.0)
    }

    /// Whether `weak` was taken from this very list. A list changed in place since then is a
    /// different list: [`DerefMut`] moves the items to a new allocation while a handle
    /// exists, and the handle keeps the old address from being reused.
    pub fn is(&self, weak: &Weak<Vec<T>>) -> bool {
        std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&self.0))
    }
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        Arc::make_mut(&mut self.0)
    }
}

impl<T> From<Vec<T>> for Shared<T> {
    fn from(items: Vec<T>) -> Self {
        Self(Arc::new(items))
    }
}

impl<T> From<Arc<Vec<T>>> for Shared<T> {
    fn from(items: Arc<Vec<T>>) -> Self {
        Self(items)
    }
}

impl<T> FromIterator<T> for Shared<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self(Arc::new(iter.into_iter().collect()))
    }
}

impl<'a, T> IntoIterator for &'a Shared<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Shared<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self.0 == *other
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;

    #[test]
    fn a_clone_shares_until_one_side_changes() {
        let mut mine: Shared<u32> = vec![1, 2].into();
        let request = mine.clone();
        assert!(mine.same_as(&request));
        mine.push(3);
        assert!(!mine.same_as(&request), "a change while shared copies");
        assert_eq!(*request, vec![1, 2]);
        assert_eq!(*mine, vec![1, 2, 3]);
    }

    #[test]
    fn a_sole_holder_changes_in_place() {
        let mut mine: Shared<u32> = vec![1].into();
        let before = mine.as_ptr();
        drop(mine.clone());
        mine[0] = 7;
        assert_eq!(mine.as_ptr(), before, "no copy when nobody else holds it");
        assert_eq!(*mine, vec![7]);
    }

    #[test]
    fn a_handle_names_the_list_until_it_changes() {
        let mut mine: Shared<u32> = vec![1].into();
        let handle = mine.downgrade();
        assert!(mine.is(&handle));
        assert!(mine.clone().is(&handle), "a clone is the same list");
        assert!(
            !Shared::from(vec![1]).is(&handle),
            "an equal list is another"
        );
        mine.push(2);
        assert!(!mine.is(&handle), "a list changed in place is another");
    }

    #[test]
    fn serializes_as_a_plain_list() {
        let list: Shared<u32> = vec![1, 2].into();
        let text = serde_json::to_string(&list).unwrap_or_default();
        assert_eq!(text, "[1,2]");
        let back: Shared<u32> = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, list);
    }
}
