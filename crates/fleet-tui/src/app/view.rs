//! The screen, top to bottom: a pane teammate's header row, the transcript (or a task's transcript), prompts waiting to be
//! taken up, the "working" line, the bottom pane (a question, an open pane, or the composer),
//! the task pills and the status line. The transcript gets whatever the rest leaves.

use super::state::{App, Overlay};
use crate::panes::{pills, status, teammate, ultraplan};
use crate::theme::Role;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use ratatui::Frame;

/// Rows the transcript keeps however tall the bottom pane wants to be.
const MIN_TRANSCRIPT: u16 = 3;
/// Queued prompts shown at most.
const MAX_QUEUED: usize = 3;
const SPINNER: [char; 4] = ['✻', '✳', '✢', '·'];

impl App {
    pub fn draw(&mut self, frame: &mut Frame) {
        let area = frame.area();
        if area.width == 0 || area.height == 0 {
            return;
        }
        let width = area.width;
        let mut queued_rows = self.queued.len().min(MAX_QUEUED) as u16;
        let mut working_rows = u16::from(self.is_working());
        let mut pills_rows = pills::height(&self.board).max(u16::from(self.ultraplan.is_some()));
        let mut header_rows = u16::from(self.identity.is_some());
        let mut fixed = header_rows + queued_rows + working_rows + pills_rows + 1;
        let mut room = area.height.saturating_sub(fixed + MIN_TRANSCRIPT).max(1);
        // A permission question is never cut: it takes the transcript's rows, and on a short
        // terminal the rows of the queued, working, pills and header lines too, until it has
        // what it needs to show its answers and the end of the call.
        if let Some(prompt) = self.prompt_on_screen() {
            let need = prompt.min_height(width);
            if room < need {
                if area.height < fixed + need {
                    (queued_rows, working_rows, pills_rows, header_rows) = (0, 0, 0, 0);
                    fixed = 1;
                }
                room = need.min(area.height.saturating_sub(fixed)).max(room);
            }
        }
        let bottom_rows = self.bottom_height(width).min(room);
        let [header, transcript, queued, working, bottom, pills_area, status_area] =
            Layout::vertical([
                Constraint::Length(header_rows),
                Constraint::Min(0),
                Constraint::Length(queued_rows),
                Constraint::Length(working_rows),
                Constraint::Length(bottom_rows),
                Constraint::Length(pills_rows),
                Constraint::Length(1),
            ])
            .areas(area);
        self.transcript_rows = transcript.height;
        let buf = frame.buffer_mut();
        if let Some(identity) = &self.identity {
            teammate::render(identity, header, buf, &self.theme);
        }
        self.draw_transcript(transcript, buf);
        self.draw_queued(queued, buf);
        self.draw_working(working, buf);
        let cursor = self.draw_bottom(bottom, buf);
        let pills_area = ultraplan::render(self.ultraplan, pills_area, buf, &self.theme);
        pills::render(&self.board, pills_area, buf, &self.theme);
        status::render(&self.status, status_area, buf, &self.theme);
        if let Some((x, y)) = cursor {
            frame.set_cursor_position((x, y));
        }
    }

    /// The permission question in the bottom pane, if one is. The keys go to the question
    /// before any pane but the quit confirmation, so it is drawn over those panes too: a
    /// question that takes keys must never sit behind a picker where Enter would answer it
    /// unseen.
    fn prompt_on_screen(&self) -> Option<&crate::panes::permission::PermissionPrompt> {
        if matches!(self.overlay, Some(Overlay::QuitConfirm(_))) {
            return None;
        }
        self.prompts.front()
    }

    fn bottom_height(&self, width: u16) -> u16 {
        if let Some(prompt) = self.prompt_on_screen() {
            return prompt.height(width);
        }
        if let Some(overlay) = &self.overlay {
            return match overlay {
                Overlay::QuitConfirm(confirm) => confirm.height(width),
                Overlay::Picker(_, picker) => picker.height(12),
                Overlay::Tasks { panel, .. } => panel.height(&self.board, width, 12),
                Overlay::AgentForm(form) => form.height(width),
            };
        }
        self.composer.height(width)
    }

    fn draw_transcript(&mut self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        if let Some(Overlay::Tasks {
            viewing: Some(id), ..
        }) = &self.overlay
        {
            let id = id.clone();
            let title = self
                .board
                .tasks()
                .iter()
                .find(|t| t.task_id == id)
                .map(|t| format!("{}: {}", t.subagent_type, t.description))
                .unwrap_or_else(|| id.clone());
            let [head, body] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
            Line::from(vec![
                Span::styled(format!("◇ {title}"), self.theme.style(Role::Accent)),
                Span::styled("  (esc: back to the list)", self.theme.style(Role::Dim)),
            ])
            .render(head, buf);
            let tool_use_id = self
                .board
                .tasks()
                .iter()
                .find(|t| t.task_id == id)
                .map(|t| t.tool_use_id.clone())
                .unwrap_or(id);
            self.transcript
                .render_agent(&tool_use_id, body, buf, &self.theme);
            return;
        }
        self.transcript.render(area, buf, &self.theme);
    }

    fn draw_queued(&self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        let lines: Vec<Line> = self
            .queued
            .iter()
            .take(area.height as usize)
            .map(|text| {
                let first = text.lines().next().unwrap_or_default();
                Line::styled(format!("  queued: {first}"), self.theme.style(Role::Dim))
            })
            .collect();
        Paragraph::new(lines).render(area, buf);
    }

    fn draw_working(&self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        let Some(since) = self.working_since else {
            return;
        };
        let elapsed = since.elapsed();
        let frame = (elapsed.as_millis() / 250) as usize % SPINNER.len();
        let mut spans = vec![
            Span::styled(
                format!("{} Working… {}s", SPINNER[frame], elapsed.as_secs()),
                self.theme.style(Role::Accent),
            ),
            Span::styled(" · esc to interrupt", self.theme.style(Role::Dim)),
        ];
        if self.board.running() > self.board.running_background() {
            spans.push(Span::styled(
                " · ctrl+b to run in background",
                self.theme.style(Role::Dim),
            ));
        }
        Line::from(spans).render(area, buf);
    }

    fn draw_bottom(&mut self, area: Rect, buf: &mut ratatui::buffer::Buffer) -> Option<(u16, u16)> {
        if area.height == 0 {
            return None;
        }
        if let Some(prompt) = self.prompt_on_screen() {
            prompt.render(area, buf, &self.theme);
            return None;
        }
        if let Some(overlay) = &self.overlay {
            match overlay {
                Overlay::QuitConfirm(confirm) => confirm.render(area, buf, &self.theme),
                Overlay::Picker(_, picker) => picker.render(area, buf, &self.theme),
                Overlay::Tasks { panel, .. } => panel.render(area, buf, &self.board, &self.theme),
                Overlay::AgentForm(form) => form.render(area, buf, &self.theme),
            }
            return None;
        }
        self.composer.render(area, buf, &self.theme)
    }
}
