//! Where the screen is in a transcript of any length: a prefix sum of the cells' heights (so
//! the first visible cell is a binary search away), the range still to be measured, and the
//! scroll position.
//!
//! The position is kept as "follow the bottom" or as an anchor on a cell and a row inside
//! it, not as a distance from the bottom: output arriving below — or a background agent's
//! group growing above — then leaves the rows a person is reading where they are.

use super::cell::RenderKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor {
    cell: usize,
    row: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Viewport {
    /// `prefix[i]`: rows taken by the cells before cell `i`; one more entry than cells.
    prefix: Vec<usize>,
    /// Cells from here on must be measured again (their content or position changed).
    dirty_from: usize,
    /// What the heights were measured for; a new key measures everything again.
    key: Option<RenderKey>,
    /// `None`: follow the bottom.
    anchor: Option<Anchor>,
    /// The height of the area last drawn, which scrolling by keys is relative to.
    height: usize,
}

impl Viewport {
    /// Cell `index` changed (or was added, or removed): it and everything after it must be
    /// measured again before the next frame.
    pub fn mark(&mut self, index: usize) {
        self.dirty_from = self.dirty_from.min(index);
    }

    /// A new, empty transcript: nothing measured, following the bottom.
    pub fn reset(&mut self) {
        self.prefix.clear();
        self.dirty_from = 0;
        self.anchor = None;
    }

    pub fn key(&self) -> Option<RenderKey> {
        self.key
    }

    /// Brings the prefix sum up to date for `cells` cells drawn with `key`; `height_of(i)`
    /// draws cell `i` if its cached lines are stale and says how many rows it takes. Only
    /// the cells from the first changed one on are asked.
    pub fn layout(
        &mut self,
        cells: usize,
        key: RenderKey,
        mut height_of: impl FnMut(usize) -> usize,
    ) {
        if self.key != Some(key) {
            self.key = Some(key);
            self.dirty_from = 0;
        }
        let from = self.dirty_from.min(cells);
        self.prefix.truncate(from + 1);
        if self.prefix.is_empty() {
            self.prefix.push(0);
        }
        for i in from..cells {
            let before = self.prefix[i];
            self.prefix.push(before + height_of(i));
        }
        self.dirty_from = cells;
    }

    /// Cells measured by the last layout.
    fn cells(&self) -> usize {
        self.prefix.len().saturating_sub(1)
    }

    /// Rows of the whole transcript as last laid out.
    pub fn total(&self) -> usize {
        self.prefix.last().copied().unwrap_or(0)
    }

    /// The first row on screen for an area `height` rows tall, and remembers the height for
    /// scrolling by keys.
    pub fn top(&mut self, height: usize) -> usize {
        self.height = height;
        self.top_for(height)
    }

    fn top_for(&self, height: usize) -> usize {
        let bottom_top = self.total().saturating_sub(height);
        match self.anchor {
            None => bottom_top,
            Some(anchor) => self.row_of(anchor).min(bottom_top),
        }
    }

    fn row_of(&self, anchor: Anchor) -> usize {
        let cells = self.cells();
        if cells == 0 {
            return 0;
        }
        let cell = anchor.cell.min(cells - 1);
        let start = self.prefix[cell];
        let height = self.prefix[cell + 1] - start;
        start + anchor.row.min(height.saturating_sub(1))
    }

    /// The cell holding transcript row `row`, and the row's place inside it.
    pub fn locate(&self, row: usize) -> (usize, usize) {
        let cells = self.cells();
        if cells == 0 {
            return (0, 0);
        }
        // Entries of prefix[..cells] at or before `row`; the last of them starts the cell.
        let count = self.prefix[..cells].partition_point(|&start| start <= row);
        let cell = count.saturating_sub(1);
        (cell, row - self.prefix[cell].min(row))
    }

    /// Rows scrolled back from the bottom (0 while following).
    pub fn offset(&self) -> usize {
        let bottom_top = self.total().saturating_sub(self.height);
        bottom_top - self.top_for(self.height).min(bottom_top)
    }

    pub fn scroll_up(&mut self, rows: usize) {
        if self.height == 0 || self.total() <= self.height {
            return;
        }
        let top = self.top_for(self.height).saturating_sub(rows);
        let (cell, row) = self.locate(top);
        self.anchor = Some(Anchor { cell, row });
    }

    pub fn scroll_down(&mut self, rows: usize) {
        if self.anchor.is_none() {
            return;
        }
        let top = self.top_for(self.height).saturating_add(rows);
        if top >= self.total().saturating_sub(self.height) {
            self.anchor = None;
        } else {
            let (cell, row) = self.locate(top);
            self.anchor = Some(Anchor { cell, row });
        }
    }

    pub fn scroll_to_bottom(&mut self) {
        self.anchor = None;
    }
}
