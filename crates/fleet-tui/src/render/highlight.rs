//! Syntax highlighting of code with syntect. The syntax and theme sets take a noticeable
//! moment to load, so they load once, lazily, the first time a code block is shown — a session
//! that never shows code never pays for them.

use crate::theme::{Palette, Role, Theme};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme as SynTheme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Columns a tab advances to (the next multiple of this).
const TAB_STOP: usize = 4;
/// Past this many bytes a line is shown plain: syntect's regexes can be slow on huge
/// minified lines, and colour adds little there.
const MAX_HIGHLIGHT_LINE: usize = 4_000;
/// Past this many bytes a block is shown plain, for the same reason.
const MAX_HIGHLIGHT_BLOCK: usize = 512 * 1024;

const DARK_THEME: &str = "base16-ocean.dark";
const LIGHT_THEME: &str = "InspiredGitHub";

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// syntect's bundled set has no TOML; ours lives in a set of its own, because adding it to
/// the bundled one would rebuild every grammar (seconds in a debug build).
fn toml_syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(super::toml_syntax::toml_set)
}

fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// Code, highlighted for `lang` (a fence's info string or a file extension); plain
/// `Role::Code` lines when the language is unknown or the theme has no colours. Tabs are
/// expanded to stops of four columns.
pub fn code(source: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    let source = expand_tabs(source);
    let syntax_theme = match theme.palette {
        Palette::Mono => None,
        Palette::Dark => themes().themes.get(DARK_THEME),
        Palette::Light => themes().themes.get(LIGHT_THEME),
    };
    let highlighted = match (syntax_theme, source.len() <= MAX_HIGHLIGHT_BLOCK) {
        (Some(syn_theme), true) => {
            find_syntax(lang).map(|(syntax, set)| highlight(&source, syntax, set, syn_theme, theme))
        }
        _ => None,
    };
    highlighted.unwrap_or_else(|| plain(&source, theme))
}

/// Whether `lang` names a language the highlighter knows.
pub fn knows_language(lang: &str) -> bool {
    find_syntax(lang).is_some()
}

/// The syntax for a fence's info string (`rust`, `rust,ignore`, `py title="x"`), a language
/// name, a file extension, or a file path; with the set it belongs to.
fn find_syntax(lang: &str) -> Option<(&'static SyntaxReference, &'static SyntaxSet)> {
    let token = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .trim_start_matches('.');
    if token.is_empty() {
        return None;
    }
    let token = alias(&token.to_ascii_lowercase());
    // A file path or name: its extension, or the whole name (`Makefile`).
    let name = token.rsplit('/').next().unwrap_or(&token);
    let ext = name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or(name);
    for set in [syntaxes(), toml_syntaxes()] {
        let found = set
            .find_syntax_by_token(&token)
            .or_else(|| set.find_syntax_by_extension(ext))
            .or_else(|| set.find_syntax_by_token(alias(ext).as_str()));
        if let Some(found) = found {
            return Some((found, set));
        }
    }
    None
}

/// Names people write in fences that syntect's default set spells differently or lacks.
fn alias(token: &str) -> String {
    match token {
        "shell" | "console" | "zsh" | "sh-session" | "shellscript" => "bash",
        "py3" | "python3" => "python",
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "typescript" => "javascript",
        "yml" => "yaml",
        "golang" => "go",
        "c++" | "hpp" | "cc" => "cpp",
        "jsonc" | "json5" => "json",
        other => other,
    }
    .to_string()
}

fn highlight(
    source: &str,
    syntax: &SyntaxReference,
    set: &SyntaxSet,
    syn_theme: &SynTheme,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let default_fg = syn_theme.settings.foreground;
    let mut lines = Vec::new();
    let mut highlighter = HighlightLines::new(syntax, syn_theme);
    let mut broken = false;
    for raw in LinesWithEndings::from(source) {
        let text = raw.trim_end_matches(['\n', '\r']);
        if broken || raw.len() > MAX_HIGHLIGHT_LINE {
            lines.push(Line::styled(text.to_string(), theme.style(Role::Code)));
            continue;
        }
        match highlighter.highlight_line(raw, set) {
            Ok(regions) => {
                let spans: Vec<Span<'static>> = regions
                    .into_iter()
                    .filter_map(|(style, piece)| {
                        let piece = piece.trim_end_matches(['\n', '\r']);
                        (!piece.is_empty())
                            .then(|| Span::styled(piece.to_string(), to_style(style, default_fg)))
                    })
                    .collect();
                lines.push(Line::from(spans));
            }
            Err(err) => {
                // A grammar that fails once keeps failing: the rest goes plain.
                tracing::debug!(%err, "highlighting stopped");
                broken = true;
                lines.push(Line::styled(text.to_string(), theme.style(Role::Code)));
            }
        }
    }
    lines
}

/// syntect's style as ratatui's; the theme's default foreground is left to the terminal so
/// plain identifiers read in the person's own text colour.
fn to_style(
    style: syntect::highlighting::Style,
    default_fg: Option<syntect::highlighting::Color>,
) -> Style {
    let fg = style.foreground;
    let mut out = Style::default();
    if default_fg.is_none_or(|d| d.r != fg.r || d.g != fg.g || d.b != fg.b) {
        out = out.fg(Color::Rgb(fg.r, fg.g, fg.b));
    }
    let font = style.font_style;
    if font.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if font.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if font.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

fn plain(source: &str, theme: &Theme) -> Vec<Line<'static>> {
    source
        .lines()
        .map(|l| Line::styled(l.to_string(), theme.style(Role::Code)))
        .collect()
}

/// Tabs as spaces up to the next stop, counted in cells so a wide character before a tab
/// does not shift the columns after it.
pub(crate) fn expand_tabs(source: &str) -> String {
    if !source.contains('\t') {
        return source.to_string();
    }
    let mut out = String::with_capacity(source.len() + 16);
    let mut col = 0;
    for c in source.chars() {
        match c {
            '\t' => {
                let n = TAB_STOP - col % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' => {
                out.push(c);
                col = 0;
            }
            _ => {
                out.push(c);
                col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
        }
    }
    out
}
