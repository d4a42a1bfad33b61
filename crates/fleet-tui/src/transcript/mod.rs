//! The conversation as the person sees it: a list of cells (a prompt, the assistant's
//! Markdown, a tool call with its folded result, a subagent's group, a notice), built from
//! `AgentEvent`s, and a viewport that renders only the rows on screen from a per-width cache.
//!
//! - `cell`: what a cell holds, and its cached lines.
//! - `build`: events into cells (streaming text, tool calls and results, tasks, warnings).
//! - `message`: committed messages into cells (prompts, notifications, replies without
//!   deltas), which a resumed session's history (`history`) goes through too.
//! - `group`: a subagent's activity under its Agent call, with its counters.
//! - `draw`, `tool_cell` and `mail_cell`: a cell into lines, through the pure renderers of `render`.
//! - `lists`: where cells live, and how a change reaches the screen.
//! - `viewport`: heights, scrolling, and which rows are on screen.

mod build;
mod cell;
mod draw;
mod group;
mod history;
mod lists;
mod mail_cell;
mod message;
mod tool_cell;
mod viewport;

use crate::port::NoticeLevel;
use crate::theme::{Palette, Theme};
use cell::{Cell, CellKind, RenderKey};
use fleet_protocol::{AgentEvent, Message};
use group::{Counters, Groups};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use std::collections::{HashMap, HashSet};
use viewport::Viewport;

/// One agent's figures, for `/cost` and the task panel.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSummary {
    pub agent_id: String,
    /// The Agent call that started it (`None` for the main agent).
    pub tool_use_id: Option<String>,
    pub subagent_type: String,
    pub description: String,
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Known once it is done, and only if some reply reported usage.
    pub cost_usd: Option<f64>,
    pub done: bool,
    /// It has replies and none reported usage: the token counts are unknown, not zero.
    pub usage_unreported: bool,
}

/// Whose list of cells something lands in: the main agent's (the screen) or a subagent's
/// group, named by the Agent call that started it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    Main,
    Group(String),
}

/// Where a tool call's cell is, so its result, refusal or group can find it.
#[derive(Debug, Clone)]
struct Loc {
    owner: Owner,
    index: usize,
}

#[derive(Debug, Default)]
pub struct Transcript {
    /// The main agent's cells: the transcript's rows, top to bottom.
    cells: Vec<Cell>,
    groups: Groups,
    /// Every tool call seen, by tool_use id.
    tools: HashMap<String, Loc>,
    main: Counters,
    main_agent_id: Option<String>,
    /// The main agent's run costs, summed over its runs.
    main_cost: Option<f64>,
    /// Agents whose reply in progress arrived as `AssistantBlock`s, so its committed
    /// message adds nothing new.
    blocks_seen: HashSet<String>,
    expanded: bool,
    view: Viewport,
    /// Cells drawn since the start (the measure of "only what changed is drawn again").
    draws: u64,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in one event of any agent.
    pub fn apply(&mut self, event: &AgentEvent) {
        self.apply_event(event);
    }

    /// The conversation of a resumed session, in place of what was shown.
    pub fn load_history(&mut self, messages: &[Message]) {
        self.clear();
        self.replay(messages);
    }

    /// A resumed conversation after what is shown already (the session's header).
    pub fn append_history(&mut self, messages: &[Message]) {
        self.replay(messages);
    }

    pub fn push_notice(&mut self, level: NoticeLevel, text: &str) {
        self.push(
            &Owner::Main,
            CellKind::Notice {
                level,
                text: text.to_string(),
            },
        );
    }

    /// Lines the UI itself made (`/help`, `/cost`).
    pub fn push_lines(&mut self, lines: Vec<Line<'static>>) {
        self.push(&Owner::Main, CellKind::Lines(lines));
    }

    pub fn push_shell(&mut self, command: &str, output: &str, exit_code: Option<i32>) {
        self.push(
            &Owner::Main,
            CellKind::Shell {
                command: command.to_string(),
                output: output.to_string(),
                exit_code,
            },
        );
    }

    pub fn clear(&mut self) {
        self.cells.clear();
        self.groups.clear();
        self.tools.clear();
        self.main = Counters::default();
        self.main_agent_id = None;
        self.main_cost = None;
        self.blocks_seen.clear();
        self.view.reset();
    }

    /// Ctrl+O: every folded result and thinking block at once.
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
    }

    pub fn expanded(&self) -> bool {
        self.expanded
    }

    /// Rows scrolled back from the bottom; 0 follows the stream.
    pub fn scroll_up(&mut self, rows: usize) {
        self.relayout();
        self.view.scroll_up(rows);
    }

    pub fn scroll_down(&mut self, rows: usize) {
        self.relayout();
        self.view.scroll_down(rows);
    }

    pub fn scroll_to_bottom(&mut self) {
        self.view.scroll_to_bottom();
    }

    /// Rows between the bottom of the screen and the end of the transcript, as of the last
    /// frame (0 while following the stream): for a "↓ more below" hint.
    pub fn scroll_offset(&self) -> usize {
        self.view.offset()
    }

    /// Draws the rows that fit in `area`, bottom-aligned while following the stream.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let key = self.key(area.width, theme.palette);
        self.layout(key, theme);
        let height = usize::from(area.height);
        let top = self.view.top(height);
        let rows = height.min(self.view.total() - top);
        let mut y = area.y + (height - rows) as u16;
        let (mut index, mut skip) = self.view.locate(top);
        let mut left = rows;
        while left > 0 && index < self.cells.len() {
            let lines = self.cells[index].cached(key).unwrap_or(&[]);
            for line in lines.iter().skip(skip).take(left) {
                buf.set_line(area.x, y, line, area.width);
                y += 1;
                left -= 1;
            }
            skip = 0;
            index += 1;
        }
    }

    /// One agent's activity alone, everything expanded (the task panel's view of a task),
    /// found by its Agent call's tool_use id or its agent id.
    pub fn render_agent(&mut self, id: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let Some(call) = self.groups.find(id).map(|g| g.tool_use_id.clone()) else {
            return;
        };
        let key = RenderKey {
            width: area.width,
            expanded: true,
            palette: theme.palette,
        };
        let lines = match self.groups.take(&call) {
            Some(mut group) => {
                let lines = tool_cell::group_lines(&mut group, &mut self.groups, key, theme);
                self.groups.put_back(group);
                lines
            }
            None => Vec::new(),
        };
        self.draws += 1;
        let height = usize::from(area.height);
        let start = lines.len().saturating_sub(height);
        for (row, line) in lines[start..].iter().enumerate() {
            buf.set_line(area.x, area.y + row as u16, line, area.width);
        }
    }

    /// Every agent seen, the main agent first.
    pub fn agents(&self) -> Vec<AgentSummary> {
        let mut out = vec![AgentSummary {
            agent_id: self.main_agent_id.clone().unwrap_or_else(|| "main".into()),
            tool_use_id: None,
            subagent_type: "main".into(),
            description: String::new(),
            turns: self.main.turns,
            input_tokens: self.main.input(),
            output_tokens: self.main.output(),
            cost_usd: self.main_cost,
            done: false,
            usage_unreported: self.main.nothing_reported(),
        }];
        out.extend(self.groups.in_order().map(|g| {
            AgentSummary {
                agent_id: if g.agent_id.is_empty() {
                    g.task_id.clone().unwrap_or_default()
                } else {
                    g.agent_id.clone()
                },
                tool_use_id: Some(g.tool_use_id.clone()),
                subagent_type: g.subagent_type.clone(),
                description: g.description.clone(),
                turns: g
                    .outcome
                    .turns
                    .unwrap_or(g.counters.turns)
                    .max(g.counters.turns),
                input_tokens: g.counters.input(),
                output_tokens: g.counters.output(),
                cost_usd: g.outcome.cost_usd,
                done: g.done(),
                usage_unreported: g.counters.nothing_reported(),
            }
        }));
        out
    }

    /// The conversation as it is left in the terminal's scrollback at exit, at `width`:
    /// every cell folded, thinking left out, a tool call cut to its line and the first line
    /// of its result (or its group's header), a blank line between cells.
    pub fn scrollback(&mut self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let key = RenderKey {
            width: width.max(1),
            expanded: false,
            palette: theme.palette,
        };
        let mut out: Vec<Line<'static>> = Vec::new();
        for cell in &self.cells {
            let mut lines = match &cell.kind {
                CellKind::Thinking { .. } => continue,
                kind => draw::draw(kind, &mut self.groups, key, theme),
            };
            if matches!(cell.kind, CellKind::Tool(_)) {
                lines.truncate(2);
            }
            if lines.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(Line::default());
            }
            out.extend(lines);
        }
        out
    }

    /// Rows in the whole transcript at `width` (for benches and the scroll indicator).
    pub fn height(&mut self, width: u16) -> usize {
        let palette = self.view.key().map_or(Palette::Dark, |k| k.palette);
        let key = self.key(width, palette);
        self.layout(key, &Theme { palette });
        self.view.total()
    }

    /// Lines held in the render cache, over every cell and group: it grows with the
    /// transcript, never with the number of frames drawn.
    pub fn cached_rows(&self) -> usize {
        let groups: usize = self
            .groups
            .in_order()
            .flat_map(|g| g.cells.iter())
            .map(Cell::cached_height)
            .sum();
        self.cells.iter().map(Cell::cached_height).sum::<usize>() + groups
    }

    /// Cells drawn (rendered to lines) since the transcript was made; a frame with nothing
    /// new draws none, and a streamed delta draws only the cell it lands in.
    pub fn cells_drawn(&self) -> u64 {
        self.draws
    }

    /// The renderers are never asked for width 0: a cell drawn one column wide is still a
    /// cell whose height is known.
    fn key(&self, width: u16, palette: Palette) -> RenderKey {
        RenderKey {
            width: width.max(1),
            expanded: self.expanded,
            palette,
        }
    }

    /// Lays out again for the key of the last frame (scrolling between frames).
    fn relayout(&mut self) {
        if let Some(last) = self.view.key() {
            let key = self.key(last.width, last.palette);
            self.layout(
                key,
                &Theme {
                    palette: last.palette,
                },
            );
        }
    }

    /// Draws the cells whose lines are stale and brings the heights up to date. A cell after
    /// the first starts with a blank row, which separates it from the one above.
    fn layout(&mut self, key: RenderKey, theme: &Theme) {
        let Self {
            cells,
            groups,
            view,
            draws,
            ..
        } = self;
        view.layout(cells.len(), key, |i| {
            let cell = &mut cells[i];
            if cell.cached(key).is_none() {
                *draws += 1;
                let mut lines = draw::draw(&cell.kind, groups, key, theme);
                if i > 0 && !lines.is_empty() {
                    lines.insert(0, Line::default());
                }
                cell.cache = Some(cell::Rendered { key, lines });
            }
            cell.cached_height()
        });
    }
}
