//! Where cells live — the main agent's list and each group's — and how a change to one
//! reaches the screen: the changed cell, and every Agent call that shows it, lose their
//! cached lines, and the viewport measures again from the top-level cell that holds them.

use super::cell::{Cell, CellKind};
use super::group::Counters;
use super::{Loc, Owner, Transcript};

/// Nesting deeper than this is not followed when marking cells stale (a guard against a
/// malformed stream that names a call as its own ancestor).
const MAX_DEPTH: usize = 64;

impl Transcript {
    /// The last cell of `owner`'s list when it is open and of the kind asked for.
    pub(super) fn open_last(&self, owner: &Owner, thinking: bool) -> Option<usize> {
        let list = self.list(owner);
        let index = list.len().checked_sub(1)?;
        let open = match &list[index].kind {
            CellKind::Assistant { open, .. } => *open && !thinking,
            CellKind::Thinking { open, .. } => *open && thinking,
            _ => false,
        };
        open.then_some(index)
    }

    /// Ends any cell still taking deltas in `owner`'s list.
    pub(super) fn close_open(&mut self, owner: &Owner) {
        let Some(index) = self.list(owner).len().checked_sub(1) else {
            return;
        };
        if let Some(CellKind::Assistant { open, .. } | CellKind::Thinking { open, .. }) =
            self.list_mut(owner).get_mut(index).map(|c| &mut c.kind)
        {
            if *open {
                *open = false;
                self.touch(owner, index);
            }
        }
    }

    /// Throws away a half-streamed cell (its request is being retried).
    pub(super) fn drop_open(&mut self, owner: &Owner) {
        let list = self.list_mut(owner);
        if list.last().is_some_and(Cell::is_open) {
            list.pop();
            let index = list.len();
            match owner {
                Owner::Main => self.view.mark(index),
                Owner::Group(call) => {
                    let call = call.clone();
                    self.touch_call(&call);
                }
            }
        }
    }

    pub(super) fn push(&mut self, owner: &Owner, kind: CellKind) -> usize {
        let tool_id = match &kind {
            CellKind::Tool(call) => Some(call.id.clone()),
            _ => None,
        };
        let list = self.list_mut(owner);
        list.push(Cell::new(kind));
        let index = list.len() - 1;
        if let Some(id) = tool_id {
            self.tools.insert(
                id,
                Loc {
                    owner: owner.clone(),
                    index,
                },
            );
        }
        self.touch(owner, index);
        index
    }

    pub(super) fn list(&self, owner: &Owner) -> &[Cell] {
        match owner {
            Owner::Main => &self.cells,
            Owner::Group(call) => self.groups.get(call).map_or(&[], |g| g.cells.as_slice()),
        }
    }

    pub(super) fn list_mut(&mut self, owner: &Owner) -> &mut Vec<Cell> {
        match owner {
            Owner::Main => &mut self.cells,
            Owner::Group(call) => &mut self.groups.entry(call).cells,
        }
    }

    pub(super) fn kind_mut(&mut self, loc: &Loc) -> Option<&mut CellKind> {
        self.list_mut(&loc.owner)
            .get_mut(loc.index)
            .map(|c| &mut c.kind)
    }

    pub(super) fn counters(&mut self, owner: &Owner) -> &mut Counters {
        match owner {
            Owner::Main => &mut self.main,
            Owner::Group(call) => &mut self.groups.entry(call).counters,
        }
    }

    /// A group's header changed (its counters): the call that shows it is drawn again.
    pub(super) fn touch_header(&mut self, owner: &Owner) {
        if let Owner::Group(call) = owner {
            let call = call.clone();
            self.touch_call(&call);
        }
    }

    pub(super) fn touch_call(&mut self, call: &str) {
        if let Some(loc) = self.tools.get(call).cloned() {
            self.touch(&loc.owner, loc.index);
        }
    }

    /// Cell `index` of `owner` changed: its lines, and those of every call that shows it
    /// (a group inside a group inside a cell on screen), are stale.
    pub(super) fn touch(&mut self, owner: &Owner, index: usize) {
        let mut at = Loc {
            owner: owner.clone(),
            index,
        };
        for _ in 0..MAX_DEPTH {
            if let Some(cell) = self.list_mut(&at.owner).get_mut(at.index) {
                cell.cache = None;
            }
            let call = match &at.owner {
                Owner::Main => {
                    self.view.mark(at.index);
                    return;
                }
                Owner::Group(call) => call.clone(),
            };
            match self.tools.get(&call) {
                Some(loc) => at = loc.clone(),
                None => return,
            }
        }
    }
}
