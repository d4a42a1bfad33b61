//! Colours by role, so every renderer asks for "an error" or "an added line" and the theme
//! decides what that looks like in a dark terminal, a light one, or with `NO_COLOR` (where
//! only bold, dim, italic and reverse remain, so nothing depends on colour to be read).

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Text,
    /// Secondary text: folded results, hints, counters.
    Dim,
    /// The person's own prompts.
    User,
    /// Tool names and the `●` of a tool line.
    Tool,
    Heading,
    Link,
    InlineCode,
    /// Code block background text when highlighting is off.
    Code,
    Error,
    Warning,
    Success,
    DiffAdd,
    DiffDelete,
    /// Hunk headers, line numbers.
    DiffMeta,
    /// Borders, selection in pickers.
    Accent,
    Selected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    Dark,
    Light,
    /// `NO_COLOR` is set: modifiers only.
    Mono,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub palette: Palette,
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    pub fn dark() -> Self {
        Self {
            palette: Palette::Dark,
        }
    }

    pub fn light() -> Self {
        Self {
            palette: Palette::Light,
        }
    }

    pub fn mono() -> Self {
        Self {
            palette: Palette::Mono,
        }
    }

    /// From the environment: `NO_COLOR` (any value) wins; `FLEET_THEME=light|dark` next;
    /// then `COLORFGBG` ("15;0" is light text on dark), which many terminals set.
    pub fn from_env() -> Self {
        if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return Self::mono();
        }
        match std::env::var("FLEET_THEME").as_deref() {
            Ok("light") => return Self::light(),
            Ok("dark") => return Self::dark(),
            _ => {}
        }
        let light_background = std::env::var("COLORFGBG")
            .ok()
            .and_then(|v| v.rsplit(';').next().and_then(|bg| bg.parse::<u8>().ok()))
            .is_some_and(|bg| bg == 7 || bg == 15);
        if light_background {
            Self::light()
        } else {
            Self::dark()
        }
    }

    pub fn colored(&self) -> bool {
        self.palette != Palette::Mono
    }

    pub fn style(&self, role: Role) -> Style {
        let base = Style::default();
        let modifiers = match role {
            Role::Dim => Modifier::DIM,
            Role::Heading | Role::User | Role::Tool => Modifier::BOLD,
            Role::Link => Modifier::UNDERLINED,
            Role::Error => Modifier::BOLD,
            Role::Selected => Modifier::REVERSED,
            _ => Modifier::empty(),
        };
        let style = base.add_modifier(modifiers);
        let color = match (self.palette, role) {
            (Palette::Mono, _) => None,
            (_, Role::Text | Role::Dim | Role::Selected) => None,
            (Palette::Dark, Role::User) => Some(Color::Cyan),
            (Palette::Light, Role::User) => Some(Color::Blue),
            (_, Role::Tool) => Some(Color::Green),
            (Palette::Dark, Role::Heading) => Some(Color::LightMagenta),
            (Palette::Light, Role::Heading) => Some(Color::Magenta),
            (_, Role::Link) => Some(Color::Blue),
            (Palette::Dark, Role::InlineCode | Role::Code) => Some(Color::LightYellow),
            (Palette::Light, Role::InlineCode | Role::Code) => Some(Color::Rgb(130, 80, 0)),
            (_, Role::Error) => Some(Color::Red),
            (Palette::Dark, Role::Warning) => Some(Color::Yellow),
            (Palette::Light, Role::Warning) => Some(Color::Rgb(150, 100, 0)),
            (_, Role::Success) => Some(Color::Green),
            (_, Role::DiffAdd) => Some(Color::Green),
            (_, Role::DiffDelete) => Some(Color::Red),
            (_, Role::DiffMeta) => Some(Color::Cyan),
            (_, Role::Accent) => Some(Color::Cyan),
        };
        match color {
            Some(color) => style.fg(color),
            None => style,
        }
    }

    /// A team member's colour by its name in the team's config (`blue`, `green`, `yellow`,
    /// `purple`, `orange`, `pink`, `cyan`, `red`), bold, so the name stands out in every
    /// palette. With `NO_COLOR`, or for a colour name fleet does not know, bold alone: the
    /// member's name beside it is what says who it is.
    pub fn team(&self, color: &str) -> Style {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let light = self.palette == Palette::Light;
        let color = match color.trim().to_ascii_lowercase().as_str() {
            "blue" if light => Color::Blue,
            "blue" => Color::LightBlue,
            "green" => Color::Green,
            "yellow" if light => Color::Rgb(150, 100, 0),
            "yellow" => Color::Yellow,
            "purple" => Color::Magenta,
            "orange" if light => Color::Indexed(166),
            "orange" => Color::Indexed(208),
            "pink" if light => Color::Indexed(162),
            "pink" => Color::Indexed(211),
            "cyan" if light => Color::Indexed(30),
            "cyan" => Color::Cyan,
            "red" => Color::Red,
            _ => return bold,
        };
        match self.palette {
            Palette::Mono => bold,
            _ => bold.fg(color),
        }
    }

    /// The colour of an agent's name (a teammate's or a subagent's), stable per index.
    pub fn agent(&self, index: usize) -> Style {
        const COLORS: [Color; 6] = [
            Color::Cyan,
            Color::Magenta,
            Color::Yellow,
            Color::Blue,
            Color::Green,
            Color::Red,
        ];
        match self.palette {
            Palette::Mono => Style::default().add_modifier(Modifier::BOLD),
            _ => Style::default().fg(COLORS[index % COLORS.len()]),
        }
    }
}
