//! Splitting a shell command line into the simple commands the shell would run.
//!
//! A rule names one simple command (`npm run *`), but the model sends whole command lines
//! (`git status && rm -rf /`). So a line is split on `&&`, `||`, `;`, `|`, `&`, newlines,
//! parentheses and backticks outside quotes; an allow rule set must vouch for every part, while
//! a single part is enough for a deny or ask rule to catch the line. The splitter is
//! deliberately small and errs on the side of asking: anything it cannot see through (command
//! substitution, process substitution, an unterminated quote) marks the line opaque, and a
//! specifier never allows an opaque line.

use super::bash_match::collapse_spaces;

/// One command line, split for matching.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParsedCommand {
    /// The whole line, trimmed, for rules written against a compound command.
    pub whole: String,
    /// The simple commands, in order; empty ones (`a ;; b`) are dropped.
    pub parts: Vec<SimpleCommand>,
    /// The line runs text no specifier can vouch for: `$(…)`, backticks, `<(…)`, `>(…)`, or
    /// an unterminated quote.
    pub opaque: bool,
    /// Files the line redirects output into (`> out.txt`), quotes removed.
    pub redirects: Vec<String>,
    /// A quote is never closed, so where words and commands end is unknown.
    pub unterminated: bool,
}

/// One simple command in three spellings, so a deny rule catches `"rm" -rf /` and
/// `FOO=1 rm -rf /` while an allow rule only ever sees what will really run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// Words after leading `VAR=value` assignments, joined by single spaces, quotes kept.
    pub text: String,
    /// `text` with quotes and escapes removed.
    pub unquoted: String,
    /// All words, assignments included.
    pub full: String,
    /// A leading assignment sets a variable that changes which program runs or what it
    /// executes (`PATH`, `LD_PRELOAD`, `GIT_SSH_COMMAND`…), so the assignment may not be skipped.
    pub risky_env: bool,
    /// The argument vector the program receives: words after leading assignments, quotes
    /// removed, redirections and their targets left out. Empty for a line of assignments or
    /// redirections only. Programs that judge a command by its options and operands (the
    /// restricted Bash policies) read this rather than re-splitting `text`.
    pub args: Vec<String>,
}

/// One word as the shell reads it: the raw text, the text with quotes removed, and for each
/// unquoted character whether it was quoted (to tell a redirect `>` from a quoted one).
#[derive(Debug, Default)]
struct Word {
    raw: String,
    plain: Vec<(char, bool)>,
}

impl Word {
    fn plain(&self) -> String {
        self.plain.iter().map(|(c, _)| c).collect()
    }

    fn is_bare(&self, text: &str) -> bool {
        self.plain.iter().all(|(_, quoted)| !quoted) && self.raw == text
    }
}

/// Shell words that start or end a construct around simple commands; dropped at the start of a
/// simple command so `if rm -rf x; then …` is seen as `rm -rf x`.
const KEYWORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// Splits `command` into simple commands.
pub(crate) fn parse(command: &str) -> ParsedCommand {
    let mut splitter = Splitter::default();
    splitter.run(command);
    let opaque = splitter.unterminated
        || ["$(", "`", "<(", ">("]
            .iter()
            .any(|needle| command.contains(needle));
    let mut redirects = Vec::new();
    let parts = splitter
        .segments
        .iter()
        .filter_map(|words| {
            collect_redirects(words, &mut redirects);
            simple_command(words)
        })
        .collect();
    ParsedCommand {
        whole: collapse_spaces(command.trim()),
        parts,
        opaque,
        redirects,
        unterminated: splitter.unterminated,
    }
}

#[derive(Default)]
struct Splitter {
    segments: Vec<Vec<Word>>,
    words: Vec<Word>,
    word: Option<Word>,
    unterminated: bool,
}

impl Splitter {
    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn push(&mut self, c: char, quoted: bool) {
        let word = self.word();
        word.raw.push(c);
        word.plain.push((c, quoted));
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.words.push(word);
        }
    }

    fn end_segment(&mut self) {
        self.end_word();
        let words = std::mem::take(&mut self.words);
        if !words.is_empty() {
            self.segments.push(words);
        }
    }

    fn run(&mut self, command: &str) {
        let chars: Vec<char> = command.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match c {
                '\\' => match next {
                    // A backslash-newline joins lines and leaves nothing behind.
                    Some('\n') => i += 1,
                    Some(n) => {
                        let word = self.word();
                        word.raw.push('\\');
                        word.raw.push(n);
                        word.plain.push((n, true));
                        i += 1;
                    }
                    None => self.push('\\', false),
                },
                '\'' => i = self.single_quoted(&chars, i),
                '"' => i = self.double_quoted(&chars, i),
                '#' if self.word.is_none() => {
                    while i + 1 < chars.len() && chars[i + 1] != '\n' {
                        i += 1;
                    }
                }
                '\n' | ';' | '(' | ')' | '`' => self.end_segment(),
                '|' if self.word.as_ref().is_some_and(|w| w.raw.ends_with('>')) => {
                    self.push(c, false);
                }
                '|' => {
                    self.end_segment();
                    if matches!(next, Some('|' | '&')) {
                        i += 1;
                    }
                }
                '&' if self
                    .word
                    .as_ref()
                    .is_some_and(|w| w.raw.ends_with('>') || w.raw.ends_with('<'))
                    || next == Some('>') =>
                {
                    self.push(c, false);
                }
                '&' => {
                    self.end_segment();
                    if next == Some('&') {
                        i += 1;
                    }
                }
                c if c.is_whitespace() => self.end_word(),
                c => self.push(c, false),
            }
            i += 1;
        }
        self.end_segment();
    }

    /// Consumes `'…'` starting at `start`; returns the index of the closing quote.
    fn single_quoted(&mut self, chars: &[char], start: usize) -> usize {
        self.word().raw.push('\'');
        let mut i = start + 1;
        while let Some(&c) = chars.get(i) {
            if c == '\'' {
                self.word().raw.push('\'');
                return i;
            }
            self.push(c, true);
            i += 1;
        }
        self.unterminated = true;
        i
    }

    /// Consumes `"…"` starting at `start`, where a backslash escapes only `"`, `\`, `$`, a
    /// backtick and a newline; returns the index of the closing quote.
    fn double_quoted(&mut self, chars: &[char], start: usize) -> usize {
        self.word().raw.push('"');
        let mut i = start + 1;
        while let Some(&c) = chars.get(i) {
            match c {
                '"' => {
                    self.word().raw.push('"');
                    return i;
                }
                '\\' if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`' | '\n')) => {
                    let escaped = chars[i + 1];
                    let word = self.word();
                    word.raw.push('\\');
                    word.raw.push(escaped);
                    word.plain.push((escaped, true));
                    i += 1;
                }
                c => self.push(c, true),
            }
            i += 1;
        }
        self.unterminated = true;
        i
    }
}

/// Builds the simple command from its words, or None when only keywords are left.
fn simple_command(words: &[Word]) -> Option<SimpleCommand> {
    let start = words
        .iter()
        .position(|w| !KEYWORDS.iter().any(|k| w.is_bare(k)))?;
    let words = &words[start..];
    let assignments = words.iter().take_while(|w| assignment_name(w).is_some());
    let risky_env = assignments
        .clone()
        .filter_map(assignment_name)
        .any(|name| is_risky_variable(&name));
    let skipped = assignments.count();
    let join = |words: &[Word], plain: bool| {
        words
            .iter()
            .map(|w| if plain { w.plain() } else { w.raw.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let full = join(words, false);
    let rest = &words[skipped..];
    // A line of assignments only still runs something (it changes the shell's variables),
    // so it is matched as written rather than as an empty command.
    let (text, unquoted) = if rest.is_empty() {
        (full.clone(), join(words, true))
    } else {
        (join(rest, false), join(rest, true))
    };
    Some(SimpleCommand {
        text,
        unquoted,
        full,
        risky_env: risky_env || rest.is_empty(),
        args: argv(rest),
    })
}

/// The words of a simple command with redirections removed: `2>/dev/null`, `> out`, `<in`,
/// `<<EOF`, `>&2` and the word naming their target when it stands apart. The part of a word
/// before an unquoted `<` or `>` stays an argument unless it is a descriptor number
/// (`echo a>b` passes `a`; `2>b` passes nothing).
fn argv(words: &[Word]) -> Vec<String> {
    let mut args = Vec::new();
    let mut target_follows = false;
    for word in words {
        if std::mem::take(&mut target_follows) {
            continue;
        }
        let plain = &word.plain;
        let Some(op) = plain
            .iter()
            .position(|&(c, quoted)| !quoted && (c == '<' || c == '>'))
        else {
            args.push(word.plain());
            continue;
        };
        let before: String = plain[..op].iter().map(|(c, _)| c).collect();
        let descriptor =
            before.is_empty() || before == "&" || before.chars().all(|c| c.is_ascii_digit());
        if !descriptor {
            args.push(before);
        }
        let mut end = op;
        while matches!(plain.get(end), Some(('<' | '>' | '&' | '|', false))) {
            end += 1;
        }
        // A lone operator (`>`, `2>`, `>&`, `<<`) takes the next word as its target.
        target_follows = end == plain.len();
    }
    args
}

/// The variable name when `word` is an unquoted `NAME=value`.
fn assignment_name(word: &Word) -> Option<String> {
    let eq = word.plain.iter().position(|(c, _)| *c == '=')?;
    let name = &word.plain[..eq];
    let valid = name
        .first()
        .is_some_and(|(c, _)| c.is_ascii_alphabetic() || *c == '_')
        && name
            .iter()
            .all(|(c, quoted)| !quoted && (c.is_ascii_alphanumeric() || *c == '_'));
    valid.then(|| name.iter().map(|(c, _)| c).collect())
}

/// Variables that make a shell, a dynamic loader or a common tool run other code.
pub(crate) fn is_risky_variable(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "RUBYOPT",
    ];
    const PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_"];
    const SUFFIXES: &[&str] = &["_COMMAND", "_EDITOR", "_PAGER"];
    NAMES.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Appends the targets of output redirections in `words` (`> f`, `>>f`, `2>f`, `&>f`, `>|f`,
/// `<>f`, `>& f`); descriptor copies such as `2>&1` or `>& 2` are not files.
fn collect_redirects(words: &[Word], out: &mut Vec<String>) {
    let mut expect_target = false;
    // The operator before the expected target ended in `&`, so a number there is a descriptor.
    let mut after_ampersand = false;
    for word in words {
        let plain = &word.plain;
        let mut i = 0;
        if expect_target {
            expect_target = false;
            let target = word.plain();
            let descriptor = std::mem::take(&mut after_ampersand)
                && !target.is_empty()
                && target.chars().all(|c| c.is_ascii_digit() || c == '-');
            if !descriptor {
                out.push(target);
            }
            continue;
        }
        while i < plain.len() {
            if plain[i] != ('>', false) {
                i += 1;
                continue;
            }
            i += 1;
            while matches!(plain.get(i), Some(('>' | '|', false))) {
                i += 1;
            }
            if plain.get(i) == Some(&('&', false)) {
                let rest = &plain[i + 1..];
                if rest.is_empty() {
                    // `>& file` (a file, stdout and stderr both) or `>& 2` (a copy).
                    expect_target = true;
                    after_ampersand = true;
                    break;
                }
                if rest.iter().all(|(c, _)| c.is_ascii_digit() || *c == '-') {
                    break;
                }
                i += 1;
            }
            let target: String = plain[i..].iter().map(|(c, _)| c).collect();
            if target.is_empty() {
                expect_target = true;
            } else {
                out.push(target);
            }
            break;
        }
    }
    if expect_target {
        // `echo hi >` with nothing after: the shell refuses it; record an empty target so
        // the line is not vouched for.
        out.push(String::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<String> {
        parse(command).parts.into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn splits_outside_quotes_only() {
        assert_eq!(
            texts("git status && rm -rf / ; echo 'a && b' | wc -l & sleep 1\nls"),
            [
                "git status",
                "rm -rf /",
                "echo 'a && b'",
                "wc -l",
                "sleep 1",
                "ls"
            ]
        );
        assert_eq!(texts(r#"echo "x; y" \; z"#), [r#"echo "x; y" \; z"#]);
        assert_eq!(texts("a || b |& c"), ["a", "b", "c"]);
    }

    #[test]
    fn redirects_are_not_separators() {
        let parsed = parse("npm test 2>&1 &>log.txt >> out | tee x");
        assert_eq!(parsed.parts.len(), 2);
        assert_eq!(parsed.redirects, ["log.txt", "out"]);
        assert_eq!(parse("echo '>' x").redirects, Vec::<String>::new());
        assert_eq!(parse("echo hi >& out 2>& 1 >& 2").redirects, ["out"]);
    }

    #[test]
    fn args_leave_out_quotes_assignments_and_redirections() {
        let args = |command: &str| -> Vec<Vec<String>> {
            parse(command).parts.into_iter().map(|p| p.args).collect()
        };
        assert_eq!(
            args("FOO=1 grep -n 'a b' \"x y\" 2>/dev/null > out.txt < in"),
            [["grep", "-n", "a b", "x y"]]
        );
        assert_eq!(args("echo a>b c 2>&1 >&2"), [["echo", "a", "c"]]);
        assert_eq!(args("cat <<EOF"), [["cat"]]);
        assert_eq!(args("echo '>' x"), [["echo", ">", "x"]]);
        assert_eq!(args("X=1"), [Vec::<String>::new()]);
    }

    #[test]
    fn keywords_and_groups_are_seen_through() {
        assert_eq!(
            texts("if true; then rm -rf x; fi; (cd a && make); { ls; }"),
            ["true", "rm -rf x", "cd a", "make", "ls"]
        );
    }

    #[test]
    fn substitutions_are_opaque_but_still_split() {
        let parsed = parse("echo $(rm -rf /)");
        assert!(parsed.opaque);
        assert!(parsed.parts.iter().any(|p| p.text == "rm -rf /"));
        assert!(parse("echo 'unterminated").opaque);
        assert!(!parse("echo fine").opaque);
    }
}
