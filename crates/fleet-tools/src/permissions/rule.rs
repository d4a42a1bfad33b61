//! Permission rules, `Tool` or `Tool(specifier)`, as written in settings files and on the
//! command line, and which calls each one covers.

use super::bash_match::BashPattern;
use super::call::Call;
use super::path_match::{Candidate, PathPattern};
pub use super::rule_error::{RuleError, RuleProblem};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    Allow,
    Ask,
    Deny,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One parsed rule and where it came from.
#[derive(Debug, Clone)]
pub struct Rule {
    kind: RuleKind,
    tool: String,
    specifier: Option<String>,
    base: PathBuf,
    source: String,
    matcher: Matcher,
}

/// What the specifier compiles to; which one depends on the tool the rule names.
#[derive(Debug, Clone)]
enum Matcher {
    /// No specifier: every call of the tool.
    Any,
    /// `Bash(...)`.
    Command(BashPattern),
    /// `Read(...)`, `Edit(...)`, `Write(...)`, `Glob(...)`, `Grep(...)`.
    Path(PathPattern),
    /// A specifier for a tool whose input fleet cannot see into (`WebFetch(domain:x)`): it can
    /// never allow, and as a deny or ask rule it covers every call of the tool, to be safe.
    Opaque,
}

/// Built-in names, to catch a rule spelled `bash(ls)` that would otherwise never match.
const KNOWN_TOOLS: &[&str] = &["Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Write"];

impl Rule {
    /// Parses `text`. `base` is the folder `/x` path specifiers are relative to: the folder the
    /// settings file's project is rooted at, or the cwd for rules from the command line.
    pub fn parse(
        kind: RuleKind,
        text: &str,
        base: PathBuf,
        source: &str,
    ) -> Result<Self, RuleError> {
        let fail = |problem: RuleProblem| RuleError {
            origin: source.to_string(),
            rule: text.to_string(),
            problem,
        };
        let trimmed = text.trim();
        let (tool, specifier) = split_rule(trimmed).map_err(fail)?;
        check_tool_name(tool).map_err(fail)?;
        let specifier = specifier
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "*");
        let matcher = match specifier {
            None => Matcher::Any,
            Some(spec) => match tool {
                "Bash" => Matcher::Command(BashPattern::parse(spec).map_err(fail)?),
                "Read" | "Edit" | "Write" | "Glob" | "Grep" => {
                    Matcher::Path(PathPattern::parse(spec).map_err(fail)?)
                }
                _ => Matcher::Opaque,
            },
        };
        Ok(Self {
            kind,
            tool: tool.to_string(),
            specifier: specifier.map(str::to_string),
            base,
            source: source.to_string(),
            matcher,
        })
    }

    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The text between the parentheses; None for a rule covering every call (`Tool`,
    /// `Tool()`, `Tool(*)`).
    pub fn specifier(&self) -> Option<&str> {
        self.specifier.as_deref()
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Where the rule was written: a settings file or a command-line flag.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The path pattern of a `Read(...)` / `Edit(...)`-style rule; `None` for a rule without
    /// a path specifier. The read guard and the sandbox turn it into what they enforce.
    pub(crate) fn path_pattern(&self) -> Option<&PathPattern> {
        match &self.matcher {
            Matcher::Path(pattern) => Some(pattern),
            _ => None,
        }
    }

    /// Whether the rule names paths, so an allow rule may open a folder outside the workspace.
    pub fn names_paths(&self) -> bool {
        matches!(self.matcher, Matcher::Path(_))
    }

    /// Whether the rule's tool covers `call`, ignoring any specifier. `Read` covers every read
    /// (Glob and Grep too) and `Edit` / `Write` every write, since which tool touches a file
    /// matters less than the file. `mcp__server` and `mcp__server__*` cover all of a server's
    /// tools.
    fn covers_tool(&self, call: &Call<'_>) -> bool {
        let tool = self.tool.as_str();
        if tool == call.tool {
            return true;
        }
        match tool {
            "Read" => call.read.is_some(),
            "Edit" | "Write" => call.write.is_some(),
            _ => mcp_server(tool).is_some_and(|server| {
                call.tool
                    .strip_prefix(server)
                    .is_some_and(|rest| rest.starts_with("__"))
            }),
        }
    }

    /// Whether a deny or ask rule catches `call`. It is generous on purpose: any spelling of
    /// a path, any simple command of a line, any redirect target of a line counts.
    pub(crate) fn catches(&self, call: &Call<'_>) -> bool {
        match &self.matcher {
            Matcher::Any => self.covers_tool(call),
            Matcher::Opaque => self.tool == call.tool,
            Matcher::Command(pattern) => {
                self.tool == call.tool
                    && call.command.as_ref().is_some_and(|cmd| {
                        pattern.matches_text(&cmd.whole)
                            || cmd.parts.iter().any(|p| pattern.catches(p))
                    })
            }
            Matcher::Path(pattern) => {
                let anchors = call.anchors(&self.base);
                let direct = self
                    .path_in_scope(call)
                    .is_some_and(|c| pattern.matches_any_form(c, anchors));
                let redirected = matches!(self.tool.as_str(), "Edit" | "Write")
                    && call
                        .redirects
                        .iter()
                        .any(|c| pattern.matches_any_form(c, anchors));
                direct || redirected
            }
        }
    }

    /// Whether an allow rule vouches for `call` on its own. `Bash(...)` rules are not asked
    /// here: a command line needs every simple command vouched for, see
    /// [`RuleSet::allowing`].
    pub(super) fn allows(&self, call: &Call<'_>) -> bool {
        match &self.matcher {
            Matcher::Any => self.covers_tool(call),
            Matcher::Opaque | Matcher::Command(_) => false,
            Matcher::Path(pattern) => self
                .path_in_scope(call)
                .is_some_and(|c| pattern.matches_resolved(c, call.anchors(&self.base))),
        }
    }

    /// Whether this is an `Edit(...)`/`Write(...)` allow rule whose path pattern covers where
    /// `candidate` really lands.
    pub(crate) fn allows_write_to(&self, candidate: &Candidate, call: &Call<'_>) -> bool {
        matches!(self.tool.as_str(), "Edit" | "Write")
            && matches!(&self.matcher, Matcher::Path(p) if p.matches_resolved(candidate, call.anchors(&self.base)))
    }

    /// The path of `call` this rule's specifier is about: reads for `Read`, writes for `Edit`
    /// and `Write`, the tool's own path for `Glob` and `Grep`.
    fn path_in_scope<'c>(&self, call: &'c Call<'_>) -> Option<&'c Candidate> {
        match self.tool.as_str() {
            "Read" => call.read.as_ref(),
            "Edit" | "Write" => call.write.as_ref(),
            tool if tool == call.tool => call.read.as_ref().or(call.write.as_ref()),
            _ => None,
        }
    }
}

/// The server part of an MCP server-wide rule: `mcp__srv` or `mcp__srv__*` give `mcp__srv`.
fn mcp_server(tool: &str) -> Option<&str> {
    let rest = tool.strip_prefix("mcp__")?;
    let server = rest.strip_suffix("__*").unwrap_or(rest);
    (!server.is_empty() && !server.contains("__")).then(|| &tool[..5 + server.len()])
}

/// `Tool(spec)` into `Tool` and `spec`: the specifier runs from the first `(` to the last
/// `)`, so `Bash(echo (hi))` keeps its inner parentheses.
fn split_rule(text: &str) -> Result<(&str, Option<&str>), RuleProblem> {
    if text.is_empty() {
        return Err(RuleProblem::Empty);
    }
    let Some(open) = text.find('(') else {
        if text.contains(')') {
            return Err(RuleProblem::UnopenedParenthesis);
        }
        return Ok((text, None));
    };
    let tool = text[..open].trim_end();
    if tool.is_empty() {
        return Err(RuleProblem::NoToolName);
    }
    let Some(spec) = text[open + 1..].strip_suffix(')') else {
        return Err(RuleProblem::UnclosedParenthesis {
            tool: tool.to_string(),
        });
    };
    Ok((tool, Some(spec)))
}

fn check_tool_name(tool: &str) -> Result<(), RuleProblem> {
    let body = if mcp_server(tool).is_some() {
        tool.strip_suffix("__*").unwrap_or(tool)
    } else {
        tool
    };
    if let Some(bad) = body
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(RuleProblem::NotAToolName {
            tool: tool.to_string(),
            bad,
        });
    }
    if let Some(known) = KNOWN_TOOLS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(tool) && **k != tool)
    {
        return Err(RuleProblem::WrongCase { known });
    }
    Ok(())
}

/// Rules print as written, minus redundant spellings: `Bash(*)` prints as `Bash`.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(spec) => write!(f, "{}({spec})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Two rules are the same when written the same way in the same place; the compiled matcher
/// follows from the text.
impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.tool == other.tool
            && self.specifier == other.specifier
            && self.base == other.base
            && self.source == other.source
    }
}

impl Eq for Rule {}

/// The rules in force, by kind. Shared (`Arc`) so a decision can name its rule cheaply.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub allow: Vec<Arc<Rule>>,
    pub ask: Vec<Arc<Rule>>,
    pub deny: Vec<Arc<Rule>>,
}

impl RuleSet {
    /// Parses `text` (`Bash(npm run *)`) and adds it to the list for `kind`.
    pub fn add(
        &mut self,
        kind: RuleKind,
        text: &str,
        base: PathBuf,
        source: &str,
    ) -> Result<(), RuleError> {
        let rule = Rule::parse(kind, text, base, source)?;
        let list = match kind {
            RuleKind::Allow => &mut self.allow,
            RuleKind::Ask => &mut self.ask,
            RuleKind::Deny => &mut self.deny,
        };
        if !list.iter().any(|existing| **existing == rule) {
            list.push(Arc::new(rule));
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    pub(crate) fn denying(&self, call: &Call<'_>) -> Option<&Arc<Rule>> {
        self.deny.iter().find(|rule| rule.catches(call))
    }

    /// A `Bash(...)` deny rule that a command read from a later word of some simple command
    /// matches (`flock /tmp/l rm -rf x`, `mytool --run rm -rf x` for `Bash(rm *)`). A program
    /// fleet does not know as a wrapper may run its arguments, so such a line asks rather
    /// than run, in every mode; wrappers fleet knows are unwrapped and denied outright.
    pub(crate) fn denying_later(&self, call: &Call<'_>) -> Option<&Arc<Rule>> {
        let command = call.command.as_ref()?;
        self.deny.iter().find(|rule| {
            rule.tool == call.tool
                && matches!(&rule.matcher, Matcher::Command(pattern) if command
                    .parts
                    .iter()
                    .any(|part| part.later.iter().any(|text| pattern.matches_text(text))))
        })
    }

    pub(crate) fn asking(&self, call: &Call<'_>) -> Option<&Arc<Rule>> {
        self.ask.iter().find(|rule| rule.catches(call))
    }

    /// The allow rule that names the path of `call`: the only kind that may open a folder
    /// outside the workspace, since a bare `Edit` says nothing about where.
    pub(crate) fn allowing_path(&self, call: &Call<'_>) -> Option<&Arc<Rule>> {
        self.allow
            .iter()
            .find(|rule| rule.names_paths() && rule.allows(call))
    }

    /// The allow rule that vouches for `call`. A command line is allowed by specifiers only if
    /// every simple command in it (nested ones and what wrappers run included) is matched by
    /// some `Bash(...)` rule, all its words are known, and its redirects stay inside the
    /// workspace — and write into files only when the mode accepts edits (a redirect is a
    /// file edit, which default mode asks about); the rule returned is the one that matched
    /// the first simple command.
    pub(crate) fn allowing(&self, call: &Call<'_>) -> Option<&Arc<Rule>> {
        if let Some(rule) = self.allow.iter().find(|rule| rule.allows(call)) {
            return Some(rule);
        }
        let command = call.command.as_ref()?;
        if command.opaque
            || command.units.is_empty()
            || !call.redirects_stay_inside()
            || (call.writes_files() && !call.edits_accepted)
        {
            return None;
        }
        let mut first = None;
        for unit in &command.units {
            let rule = self.allow.iter().find(|rule| {
                rule.tool == call.tool
                    && matches!(&rule.matcher, Matcher::Command(p) if p.allows(unit))
            })?;
            first.get_or_insert(rule);
        }
        first
    }
}

/// Splits a command-line rule list (`--allowedTools "Bash(git *) Edit,Read"`) on commas and
/// whitespace outside parentheses.
pub fn split_rule_list(list: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}
