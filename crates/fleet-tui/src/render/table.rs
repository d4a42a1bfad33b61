//! Markdown tables: padded columns when they fit, and when they do not (a narrow terminal, a
//! wide table), one row at a time as `header: value` lines, which wrap like any text.

use super::wrap::{spans_width, wrap_prefixed};
use crate::theme::{Role, Theme};
use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

type Cell = Vec<Span<'static>>;

/// A table being collected from the parser's events.
#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    head: Vec<Cell>,
    rows: Vec<Vec<Cell>>,
    in_head: bool,
}

impl Table {
    pub fn new(aligns: Vec<Alignment>) -> Self {
        Self {
            aligns,
            ..Self::default()
        }
    }

    pub fn start_head(&mut self) {
        self.in_head = true;
    }

    pub fn end_head(&mut self) {
        self.in_head = false;
    }

    pub fn start_row(&mut self) {
        if !self.in_head {
            self.rows.push(Vec::new());
        }
    }

    pub fn start_cell(&mut self) {
        let row = if self.in_head {
            &mut self.head
        } else {
            match self.rows.last_mut() {
                Some(row) => row,
                None => {
                    self.rows.push(Vec::new());
                    let last = self.rows.len() - 1;
                    &mut self.rows[last]
                }
            }
        };
        row.push(Vec::new());
    }

    /// Appends to the cell being read; text before any cell opens is dropped.
    pub fn push(&mut self, span: Span<'static>) {
        let row = if self.in_head {
            Some(&mut self.head)
        } else {
            self.rows.last_mut()
        };
        if let Some(cell) = row.and_then(|r| r.last_mut()) {
            cell.push(span);
        }
    }

    /// The table as rows that fit `avail` cells.
    pub fn render(self, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.head.len()])
            .max()
            .unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        let mut widths = vec![0; columns];
        for row in self.rows.iter().chain([&self.head]) {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(spans_width(cell));
            }
        }
        let total = widths.iter().sum::<usize>() + 3 * (columns - 1);
        if total <= avail {
            self.grid(&widths, theme)
        } else {
            self.records(avail, theme)
        }
    }

    fn grid(self, widths: &[usize], theme: &Theme) -> Vec<Line<'static>> {
        let bar = theme.style(Role::Dim);
        let bold = theme.style(Role::Text).add_modifier(Modifier::BOLD);
        let Table {
            aligns, head, rows, ..
        } = self;
        let mut out = Vec::with_capacity(rows.len() + 2);
        let row_line = |cells: Vec<Cell>, header: bool| {
            let mut spans = Vec::new();
            let mut cells = cells.into_iter();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", bar));
                }
                let cell = cells.next().unwrap_or_default();
                let pad = width.saturating_sub(spans_width(&cell));
                let align = aligns.get(i).copied().unwrap_or(Alignment::None);
                let (left, right) = match align {
                    Alignment::Right => (pad, 0),
                    Alignment::Center => (pad / 2, pad - pad / 2),
                    Alignment::Left | Alignment::None => (0, pad),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                for span in cell {
                    spans.push(if header { span.patch_style(bold) } else { span });
                }
                if right > 0 && i + 1 < widths.len() {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            Line::from(spans)
        };
        if !head.is_empty() {
            out.push(row_line(head, true));
            let rule = widths
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("─┼─");
            out.push(Line::styled(rule, bar));
        }
        for row in rows {
            out.push(row_line(row, false));
        }
        out
    }

    /// Each body row as `header: value` lines, the first marked with `•`.
    fn records(self, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
        let bold = theme.style(Role::Text).add_modifier(Modifier::BOLD);
        let width = u16::try_from(avail).unwrap_or(u16::MAX);
        let bullet = [Span::raw("• ")];
        let indent = [Span::raw("  ")];
        let mut out = Vec::new();
        for row in self.rows {
            for (i, cell) in row.into_iter().enumerate() {
                let mut spans = Vec::new();
                if let Some(header) = self.head.get(i).filter(|h| !h.is_empty()) {
                    spans.extend(header.iter().cloned().map(|s| s.patch_style(bold)));
                    spans.push(Span::styled(": ", bold));
                }
                spans.extend(cell);
                let first: &[Span<'static>] = if i == 0 { &bullet } else { &indent };
                out.extend(wrap_prefixed(Line::from(spans), width, first, &indent));
            }
        }
        out
    }
}
