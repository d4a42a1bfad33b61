//! The blocks a Markdown row sits in (quotes, lists, items), innermost last, and the prefix
//! each row gets from them: `│ ` for a quote, an item's bullet on its first row and as many
//! spaces after, so wrapped text hangs under the text and not under the bullet.

use super::wrap::spans_width;
use crate::theme::{Role, Theme};
use ratatui::text::{Line, Span};

/// Bullets by nesting depth; deeper lists reuse the last.
const BULLETS: [&str; 3] = ["• ", "◦ ", "▪ "];

#[derive(Debug)]
enum Container {
    Quote,
    /// The next number of an ordered list; `None` for bullets.
    List(Option<u64>),
    /// `used` once the item's first row (the one with the bullet) is out.
    Item {
        bullet: String,
        used: bool,
    },
}

#[derive(Debug, Default)]
pub(super) struct Containers(Vec<Container>);

impl Containers {
    pub fn open_quote(&mut self) {
        self.0.push(Container::Quote);
    }

    pub fn close_quote(&mut self) {
        if matches!(self.0.last(), Some(Container::Quote)) {
            self.0.pop();
        }
    }

    pub fn open_list(&mut self, first: Option<u64>) {
        self.0.push(Container::List(first));
    }

    pub fn close_list(&mut self) {
        if matches!(self.0.last(), Some(Container::List(_))) {
            self.0.pop();
        }
    }

    /// A new item of the innermost list, with its number or a bullet by depth.
    pub fn open_item(&mut self) {
        let depth = self.list_depth().saturating_sub(1);
        let list = self.0.iter_mut().rev().find_map(|c| match c {
            Container::List(next) => Some(next),
            _ => None,
        });
        let bullet = match list {
            Some(Some(n)) => {
                let bullet = format!("{n}. ");
                *n = n.saturating_add(1);
                bullet
            }
            _ => BULLETS[depth.min(BULLETS.len() - 1)].to_string(),
        };
        self.0.push(Container::Item {
            bullet,
            used: false,
        });
    }

    pub fn close_item(&mut self) {
        if matches!(self.0.last(), Some(Container::Item { .. })) {
            self.0.pop();
        }
    }

    /// The innermost item has shown nothing yet (not even its bullet).
    pub fn item_unused(&self) -> bool {
        matches!(self.0.last(), Some(Container::Item { used: false, .. }))
    }

    pub fn list_depth(&self) -> usize {
        self.0
            .iter()
            .filter(|c| matches!(c, Container::List(_)))
            .count()
    }

    /// The prefixes of the next row and of the rows after it.
    pub fn prefixes(&self, theme: &Theme) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let bar = theme.style(Role::Dim);
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &self.0 {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", bar));
                    rest.push(Span::styled("│ ", bar));
                }
                Container::Item { bullet, used } => {
                    let blank = " ".repeat(spans_width(&[Span::raw(bullet.as_str())]));
                    if *used {
                        first.push(Span::raw(blank.clone()));
                    } else {
                        first.push(Span::styled(bullet.clone(), bar));
                    }
                    rest.push(Span::raw(blank));
                }
                Container::List(_) => {}
            }
        }
        (first, rest)
    }

    /// Cells the prefixes take.
    pub fn width(&self) -> usize {
        self.0
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::Item { bullet, .. } => spans_width(&[Span::raw(bullet.as_str())]),
                Container::List(_) => 0,
            })
            .sum()
    }

    /// The blank row between two blocks: quote bars continue through it.
    pub fn blank_row(&self, theme: &Theme) -> Line<'static> {
        let mut bars = String::new();
        for c in &self.0 {
            match c {
                Container::Quote => bars.push_str("│ "),
                Container::Item { bullet, .. } => bars.extend(std::iter::repeat_n(
                    ' ',
                    spans_width(&[Span::raw(bullet.as_str())]),
                )),
                Container::List(_) => {}
            }
        }
        Line::styled(bars.trim_end().to_string(), theme.style(Role::Dim))
    }

    /// A row went out: every open item has shown its bullet.
    pub fn mark_items_used(&mut self) {
        for c in &mut self.0 {
            if let Container::Item { used, .. } = c {
                *used = true;
            }
        }
    }
}
