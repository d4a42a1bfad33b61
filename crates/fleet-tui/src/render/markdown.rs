//! The assistant's Markdown as styled lines, in one pass over pulldown-cmark's events.
//!
//! Blocks nest (a list in a quote in a list), so the writer keeps a stack of containers and
//! asks it for each row's prefix: `│ ` for a quote, a bullet on an item's first row and its
//! width in spaces after. Text collects into one logical line at a time, which is wrapped to
//! what the prefix leaves. Everything that marks structure is a character (`#`, `•`, `│`,
//! `─`, backticks without colour), so the text reads the same under `NO_COLOR`.
//!
//! The text may still be streaming. pulldown-cmark closes whatever is open at the end of
//! the input, so an unclosed fence arrives as a code block that runs to the end: the code so
//! far, highlighted.

use super::containers::Containers;
use super::highlight::code;
use super::table::Table;
use super::wrap::wrap_prefixed;
use crate::theme::{Role, Theme};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Code blocks sit this far in from the text around them.
const CODE_INDENT: &str = "  ";

/// Markdown (the assistant's text) as lines at `width`. The text may be incomplete while it
/// streams: an unclosed code fence or list is shown as far as it goes.
pub fn markdown(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut writer = Writer::new(width, theme);
    for event in Parser::new_ext(text, options) {
        writer.event(event);
    }
    writer.finish()
}

/// Inline styles open at this point of the text, as nesting counts.
#[derive(Debug, Default)]
struct Inline {
    bold: u32,
    italic: u32,
    strike: u32,
    heading: bool,
}

struct Writer<'t> {
    theme: &'t Theme,
    width: u16,
    out: Vec<Line<'static>>,
    containers: Containers,
    /// The logical line being collected.
    line: Vec<Span<'static>>,
    inline: Inline,
    /// Open links: their destination and the text seen so far (to leave out a url that only
    /// repeats the text).
    links: Vec<(String, String)>,
    /// An open code block: its language and text.
    code: Option<(String, String)>,
    table: Option<Table>,
    /// A block ended: the next one starts after a blank row.
    blank_pending: bool,
}

impl<'t> Writer<'t> {
    fn new(width: u16, theme: &'t Theme) -> Self {
        Self {
            theme,
            width,
            out: Vec::new(),
            containers: Containers::default(),
            line: Vec::new(),
            inline: Inline::default(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_pending: false,
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if self.code.is_some() {
            self.end_code();
        }
        self.flush();
        self.out
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, buf)) = &mut self.code {
                    buf.push_str(&text);
                } else {
                    self.text(&text, self.style());
                }
            }
            Event::Code(text) => self.inline_code(&text),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.inline_code(&text),
            Event::Html(html) => {
                for (i, row) in html.lines().enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.text(row, self.theme.style(Role::Dim));
                }
            }
            Event::InlineHtml(html) => self.text(&html, self.theme.style(Role::Dim)),
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]"), self.style()),
            // Models write a single newline meaning a new line (addresses, step lists without
            // markers, short poems); joining them as Markdown's soft break would garble those.
            Event::SoftBreak => self.flush(),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.start_block();
                let avail = usize::from(self.width).saturating_sub(self.containers.width());
                let rule = Line::styled("─".repeat(avail), self.theme.style(Role::Dim));
                self.emit_rows(vec![rule]);
                self.blank_pending = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.text(mark, self.theme.style(Role::Dim));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => {
                self.flush();
                self.start_block();
            }
            Tag::Heading { level, .. } => {
                self.flush();
                self.start_block();
                self.inline.heading = true;
                let marks = "#".repeat(heading_depth(level));
                self.text(&format!("{marks} "), self.style());
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.start_block();
                self.containers.open_quote();
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.start_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                self.flush();
                if self.containers.list_depth() == 0 {
                    self.start_block();
                }
                self.containers.open_list(first);
            }
            Tag::Item => {
                self.flush();
                self.start_block();
                self.containers.open_item();
            }
            Tag::FootnoteDefinition(label) => {
                self.flush();
                self.start_block();
                self.text(&format!("[^{label}]: "), self.theme.style(Role::Dim));
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.flush();
            }
            Tag::Table(aligns) => {
                self.flush();
                self.start_block();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead => self.with_table(Table::start_head),
            Tag::TableRow => self.with_table(Table::start_row),
            Tag::TableCell => self.with_table(Table::start_cell),
            Tag::Emphasis => self.inline.italic += 1,
            Tag::Strong => self.inline.bold += 1,
            Tag::Strikethrough => self.inline.strike += 1,
            Tag::Superscript | Tag::Subscript => {}
            Tag::Link { dest_url, .. } => self.links.push((dest_url.to_string(), String::new())),
            Tag::Image { dest_url, .. } => {
                self.text("[image: ", self.theme.style(Role::Dim));
                self.links.push((dest_url.to_string(), String::new()));
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) => self.end_block(),
            TagEnd::FootnoteDefinition | TagEnd::DefinitionList => self.end_block(),
            TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.inline.heading = false;
                self.blank_pending = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.close_quote();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::List(_) => {
                self.flush();
                self.containers.close_list();
                if self.containers.list_depth() == 0 {
                    self.blank_pending = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                if self.containers.item_unused() {
                    // An item with nothing in it yet (`- ` while streaming): its bullet alone.
                    self.emit_rows(vec![Line::default()]);
                }
                self.containers.close_item();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let avail = usize::from(self.width).saturating_sub(self.containers.width());
                    let rows = table.render(avail, self.theme);
                    self.emit_rows(rows);
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead => self.with_table(Table::end_head),
            TagEnd::TableRow | TagEnd::TableCell => {}
            TagEnd::Emphasis => self.inline.italic = self.inline.italic.saturating_sub(1),
            TagEnd::Strong => self.inline.bold = self.inline.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.inline.strike = self.inline.strike.saturating_sub(1),
            TagEnd::Superscript | TagEnd::Subscript => {}
            TagEnd::Link => self.end_link(false),
            TagEnd::Image => self.end_link(true),
        }
    }

    fn end_block(&mut self) {
        self.flush();
        self.blank_pending = true;
    }

    fn with_table(&mut self, f: impl FnOnce(&mut Table)) {
        if let Some(table) = &mut self.table {
            f(table);
        }
    }

    /// The style of text at this point: heading or body, with the open emphasis.
    fn style(&self) -> Style {
        let base = if self.inline.heading {
            self.theme.style(Role::Heading)
        } else {
            self.theme.style(Role::Text)
        };
        let mut style = base;
        if self.inline.bold > 0 {
            style = style.add_modifier(Modifier::BOLD);
        }
        if self.inline.italic > 0 {
            style = style.add_modifier(Modifier::ITALIC);
        }
        if self.inline.strike > 0 {
            style = style.add_modifier(Modifier::CROSSED_OUT);
        }
        if !self.links.is_empty() {
            style = style.patch(self.theme.style(Role::Link));
        }
        style
    }

    fn text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        if let Some((_, link_text)) = self.links.last_mut() {
            link_text.push_str(text);
        }
        let span = Span::styled(text.to_string(), style);
        match &mut self.table {
            Some(table) => table.push(span),
            None => self.line.push(span),
        }
    }

    /// Inline code keeps its backticks when there is no colour to set it apart.
    fn inline_code(&mut self, code: &str) {
        let style = self.style().patch(self.theme.style(Role::InlineCode));
        if self.theme.colored() {
            self.text(code, style);
        } else {
            self.text(&format!("`{code}`"), style);
        }
    }

    /// `text (url)` when the url says something the text does not.
    fn end_link(&mut self, image: bool) {
        let Some((url, text)) = self.links.pop() else {
            return;
        };
        if image {
            self.text("]", self.theme.style(Role::Dim));
        }
        let text = text.trim();
        let same = url.is_empty()
            || text == url
            || url.strip_prefix("mailto:") == Some(text)
            || url.split_once("://").map(|(_, rest)| rest) == Some(text);
        if !same {
            self.text(&format!(" ({url})"), self.theme.style(Role::Dim));
        }
    }

    fn end_code(&mut self) {
        let Some((lang, source)) = self.code.take() else {
            return;
        };
        // The width the code gets after the prefixes; the indent comes out of it.
        let room = usize::from(self.width).saturating_sub(self.containers.width());
        let room = u16::try_from(room).unwrap_or(u16::MAX);
        let mut rows = Vec::new();
        for line in code(&source, &lang, self.theme) {
            // A wrapped code line goes on under its own indentation, so the shape of the
            // code survives a narrow terminal.
            let lead = line
                .spans
                .iter()
                .flat_map(|s| s.content.chars())
                .take_while(|c| *c == ' ')
                .count()
                .min(usize::from(room) / 2);
            let line = strip_leading_spaces(line, lead);
            let hang = [Span::raw(format!("{CODE_INDENT}{}", " ".repeat(lead)))];
            rows.extend(wrap_prefixed(line, room, &hang, &hang));
        }
        self.emit_rows(rows);
        self.blank_pending = true;
    }

    /// Before a block: the blank row that separates it from the one before.
    fn start_block(&mut self) {
        if self.blank_pending && !self.out.is_empty() {
            self.out.push(self.containers.blank_row(self.theme));
        }
        self.blank_pending = false;
    }

    /// The collected logical line, wrapped under its prefixes.
    fn flush(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let line = Line::from(std::mem::take(&mut self.line));
        let (first, rest) = self.containers.prefixes(self.theme);
        let rows = wrap_prefixed(line, self.width, &first, &rest);
        self.out.extend(rows);
        self.containers.mark_items_used();
    }

    /// Rows already fitted to the space left by the prefixes, given those prefixes.
    fn emit_rows(&mut self, rows: Vec<Line<'static>>) {
        let (first, rest) = self.containers.prefixes(self.theme);
        for (i, mut row) in rows.into_iter().enumerate() {
            let prefix = if i == 0 { &first } else { &rest };
            let mut spans = prefix.clone();
            spans.append(&mut row.spans);
            row.spans = spans;
            self.out.push(row);
        }
        self.containers.mark_items_used();
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// `line` without its first `n` characters, which are spaces.
fn strip_leading_spaces(mut line: Line<'static>, mut n: usize) -> Line<'static> {
    for span in &mut line.spans {
        if n == 0 {
            break;
        }
        let take = span
            .content
            .chars()
            .take(n)
            .take_while(|c| *c == ' ')
            .count();
        span.content = span.content[take..].to_string().into();
        n -= take;
    }
    line.spans.retain(|s| !s.content.is_empty());
    line
}
