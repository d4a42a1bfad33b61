//! The owned model of a parsed command line: what the shell will run, word by word, with
//! every word either known exactly or marked unknown.

use std::fmt;

/// One command line (`bash -c LINE`), or one nested in it (`$(…)`, `<(…)`, `sh -c '…'`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// The text of the line, as written.
    pub source: String,
    /// The simple commands it runs, in source order: through lists, pipelines, subshells,
    /// `{ }`, `if` / `while` / `for` / `case`, negation and function bodies. `[[ … ]]`, `[ … ]`
    /// and `(( … ))` appear as commands named `[[`, `[` and `((`.
    pub commands: Vec<SimpleCommand>,
    /// Redirections attached to compound commands (`{ …; } > f`, `while …; done < f`);
    /// those of a simple command are in its own [`SimpleCommand::redirects`].
    pub redirects: Vec<Redirect>,
    /// Command lines that also run: the bodies of `$(…)`, backticks, `<(…)`, `>(…)` and of
    /// substitutions in here-documents, in source order.
    pub nested: Vec<Line>,
    /// Arithmetic the shell evaluates on text that is not plain literal numbers (`$((x))`,
    /// `${a[i]}`, `${s:n}`, `(( … ))`, `for ((…))`, `${!x}`, `${x@P}`): evaluating a variable
    /// whose value is `a[$(cmd)]` runs `cmd`, so such a line runs code no word shows.
    pub arithmetic: Vec<String>,
    /// Variables the line sets outside a command's own `NAME=value` prefix: loop variables,
    /// `${x:=…}`, assignments in `(( ))`.
    pub sets: Vec<String>,
    /// Functions the line defines; their bodies are among [`Line::commands`].
    pub functions: Vec<String>,
    /// Why the line cannot be read with confidence (a syntax error, a construct the parser
    /// reads differently from bash). What was still found is kept, for deny rules only.
    pub unreadable: Option<String>,
}

impl Line {
    /// Every redirection of the line itself (its commands' and its compound commands'), not
    /// those of nested lines.
    pub fn all_redirects(&self) -> impl Iterator<Item = &Redirect> {
        self.commands
            .iter()
            .flat_map(|command| command.redirects.iter())
            .chain(self.redirects.iter())
    }

    /// This line and every line nested in it, depth first.
    pub fn lines(&self) -> Vec<&Line> {
        let mut out = vec![self];
        let mut i = 0;
        while let Some(line) = out.get(i).copied() {
            out.extend(line.nested.iter());
            i += 1;
        }
        out
    }
}

/// One simple command: `NAME=value… word… redirection…`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The command as written, for messages.
    pub source: String,
    /// Leading `NAME=value` assignments (for `declare`, `local`, `export` … assignments are
    /// ordinary words instead, as the builtin receives them).
    pub assignments: Vec<Assignment>,
    /// The argument vector: the program first. Empty for a command of assignments or
    /// redirections only.
    pub words: Vec<Word>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
}

impl SimpleCommand {
    /// A command of these words alone (what a wrapper runs).
    pub fn of_words(words: Vec<Word>) -> Self {
        let source = words.iter().map(Word::shown).collect::<Vec<_>>().join(" ");
        Self {
            source,
            words,
            ..Self::default()
        }
    }

    /// The program word, if any.
    pub fn program(&self) -> Option<&Word> {
        self.words.first()
    }

    /// Whether any word or assignment value is unknown.
    pub fn has_unknown(&self) -> bool {
        self.words.iter().any(Word::is_unknown)
            || self.assignments.iter().any(|a| a.value.is_unknown())
    }

    /// The words joined by single spaces, unknown ones as written.
    pub fn text(&self) -> String {
        join(self.words.iter().map(Word::shown))
    }

    /// The assignments and words joined by single spaces, unknown ones as written.
    pub fn full_text(&self) -> String {
        join(
            self.assignments
                .iter()
                .map(Assignment::shown)
                .chain(self.words.iter().map(|w| w.shown().to_string())),
        )
    }
}

fn join<S: AsRef<str>>(parts: impl Iterator<Item = S>) -> String {
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part.as_ref());
    }
    out
}

/// `NAME=value` or `NAME+=value` before a command (or alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable name, with its subscript as written when there is one (`a[1]`).
    pub name: String,
    pub value: Word,
    /// `+=`: appends rather than replaces.
    pub append: bool,
}

impl Assignment {
    fn shown(&self) -> String {
        let op = if self.append { "+=" } else { "=" };
        format!("{}{op}{}", self.name, self.value.shown())
    }
}

/// One shell word after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Its exact runtime value: quotes removed, `$'…'` decoded, escapes applied.
    Known(String),
    /// A value only known when the line runs.
    Unknown(Unknown),
}

/// A word whose value depends on the run: a parameter, command or arithmetic expansion, a
/// glob, a brace expansion, `~`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// The word as written, for messages.
    pub source: String,
    /// It expands to exactly one word: no unquoted expansion (which splits), no glob, no
    /// brace expansion, no `"$@"`.
    pub one_field: bool,
    /// One of the words it expands to may start with `-`, and so be read as an option.
    /// False only when every resulting word starts with a known character other than `-`.
    pub may_be_option: bool,
}

impl Word {
    /// The exact value, when known.
    pub fn known(&self) -> Option<&str> {
        match self {
            Self::Known(text) => Some(text),
            Self::Unknown(_) => None,
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }

    /// The value when known, else the word as written.
    pub fn shown(&self) -> &str {
        match self {
            Self::Known(text) => text,
            Self::Unknown(unknown) => &unknown.source,
        }
    }

    /// Whether the shell may hand the program an option here (`-x`), including an unknown
    /// word that could expand to one.
    pub fn may_be_option(&self) -> bool {
        match self {
            Self::Known(text) => text.starts_with('-'),
            Self::Unknown(unknown) => unknown.may_be_option,
        }
    }

    /// An unknown word that could be anything, for what a program is given at run time
    /// (`xargs` input, `find -exec`'s `{}`).
    pub fn anything(source: &str) -> Self {
        Self::Unknown(Unknown {
            source: source.to_string(),
            one_field: false,
            may_be_option: true,
        })
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.shown())
    }
}

/// One redirection: `[fd]OP target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The descriptor number written before the operator.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    /// The file, descriptor number, here-document delimiter or here-string.
    pub target: Word,
}

/// The redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `&>`
    WriteBoth,
    /// `&>>`
    AppendBoth,
    /// `<>`
    ReadWrite,
    /// `>&`: a descriptor copy, or with a file name stdout and stderr into that file.
    DupOut,
    /// `<&`
    DupIn,
    /// `>&-`, `<&-`
    Close,
    /// `<<`, `<<-`: input from the text that follows.
    HereDoc,
    /// `<<<`
    HereString,
}

impl Redirect {
    /// The file this redirection may create or change, if it is one that writes: `>`, `>>`,
    /// `>|`, `&>`, `&>>`, `<>`, and `>& name` when the name is not a descriptor number.
    pub fn written_target(&self) -> Option<&Word> {
        match self.op {
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::WriteBoth
            | RedirectOp::AppendBoth
            | RedirectOp::ReadWrite => Some(&self.target),
            RedirectOp::DupOut => match self.target.known() {
                Some(text) if is_descriptor(text) => None,
                _ => Some(&self.target),
            },
            _ => None,
        }
    }
}

/// A descriptor operand of `>&` / `<&`: digits, optionally followed by `-` (move).
fn is_descriptor(text: &str) -> bool {
    let digits = text.strip_suffix('-').unwrap_or(text);
    text == "-" || (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
}
