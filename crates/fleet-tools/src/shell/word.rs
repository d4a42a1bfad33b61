//! What one word expands to: quote removal, `$'…'` decoding and escapes for the parts that are
//! known; expansions, globs, brace expansion and `~` for the parts that are not. Also the
//! side effects of reading a word: the command lines nested in it and the arithmetic it
//! evaluates.

use super::model::{Unknown, Word};
use super::parse::Builder;
use tree_sitter::Node;

/// Where a word stands, which decides the expansions it undergoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    /// An argument: split on unquoted expansions, globbed, brace-expanded.
    Argument,
    /// The value of `NAME=value`: none of those, only `~` after `=` or `:`.
    Assignment,
}

/// One character of a word, or an expansion whose value is unknown.
#[derive(Debug, Clone, Copy)]
pub(super) enum Piece {
    Char(char, bool),
    Expansion {
        quoted: bool,
        /// Expands to several words even when quoted (`"$@"`).
        multi: bool,
        /// Its value cannot start with `-` (a process substitution is `/dev/fd/N`).
        safe_start: bool,
    },
}

impl Builder<'_> {
    /// The word the nodes make; several nodes are parts the parser split that bash reads as
    /// one word, which is then taken as unknown.
    pub(super) fn word(&mut self, nodes: &[Node<'_>], ctx: Ctx) -> Word {
        let mut pieces = Vec::new();
        for node in nodes {
            self.pieces(*node, false, &mut pieces);
        }
        match nodes {
            [one] => finish(&pieces, self.text(*one), ctx),
            [first, .., last] => Word::anything(
                self.src
                    .get(first.start_byte()..last.end_byte())
                    .unwrap_or_default(),
            ),
            [] => Word::Known(String::new()),
        }
    }

    pub(super) fn pieces(&mut self, node: Node<'_>, quoted: bool, out: &mut Vec<Piece>) {
        if !self.enter() {
            return;
        }
        self.pieces_inner(node, quoted, out);
        self.leave();
    }

    pub(super) fn pieces_inner(&mut self, node: Node<'_>, quoted: bool, out: &mut Vec<Piece>) {
        let text = self.text(node);
        if node.is_missing() || node.is_error() {
            self.problem(format!("a syntax error near `{text}`"));
            out.push(unknown(quoted));
            return;
        }
        match node.kind() {
            "word" => self.bare(text, out),
            "number" | "variable_name" | "test_operator" | "special_variable_name" => {
                if node.named_child_count() > 0 {
                    self.scan(node);
                    out.push(unknown(quoted));
                } else {
                    out.extend(text.chars().map(|c| Piece::Char(c, true)));
                }
            }
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                out.extend(inner.chars().map(|c| Piece::Char(c, true)));
            }
            "ansi_c_string" => {
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                out.extend(
                    super::ansi_c::decode_ansi_c(inner)
                        .chars()
                        .map(|c| Piece::Char(c, true)),
                );
            }
            "string" => self.double_quoted(node, out),
            "translated_string" => {
                // `$"…"` may be replaced by a translation, so its value is not known.
                self.scan(node);
                out.push(unknown(true));
            }
            "concatenation" | "command_name" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    self.pieces(child, quoted, out);
                }
            }
            "simple_expansion" => out.push(Piece::Expansion {
                quoted,
                multi: quoted && matches!(text, "$@" | "$*"),
                safe_start: false,
            }),
            "expansion" => {
                self.expansion(node);
                out.push(Piece::Expansion {
                    quoted,
                    multi: quoted && text.contains('@'),
                    safe_start: false,
                });
            }
            "command_substitution" => {
                self.substitution(node);
                out.push(unknown(quoted));
            }
            "process_substitution" => {
                self.substitution(node);
                out.push(Piece::Expansion {
                    quoted: true,
                    multi: false,
                    safe_start: true,
                });
            }
            "arithmetic_expansion" => {
                self.arithmetic_expansion(node);
                out.push(unknown(quoted));
            }
            "array" => {
                // `a=(…)`: the elements' substitutions run; the value is a list.
                self.scan(node);
                out.push(unknown(quoted));
            }
            "brace_expression" => out.push(Piece::Expansion {
                quoted: false,
                multi: true,
                safe_start: false,
            }),
            "extglob_pattern" | "regex" => {
                // Patterns: their special characters are matching syntax, not globs.
                self.hidden_substitution(text);
                if text.contains('$') {
                    out.push(unknown(quoted));
                } else {
                    out.extend(text.chars().map(|c| Piece::Char(c, true)));
                }
            }
            "variable_assignment" => {
                // `declare NAME=value`: the builtin gets the whole `NAME=value` word.
                let assignment = self.assignment(node);
                out.extend(assignment.name.chars().map(|c| Piece::Char(c, true)));
                let op = if assignment.append { "+=" } else { "=" };
                out.extend(op.chars().map(|c| Piece::Char(c, true)));
                match assignment.value {
                    Word::Known(value) => out.extend(value.chars().map(|c| Piece::Char(c, true))),
                    Word::Unknown(_) => out.push(unknown(true)),
                }
            }
            "$" if !node.is_named() => out.push(Piece::Char('$', quoted)),
            _ if !node.is_named() => out.extend(text.chars().map(|c| Piece::Char(c, true))),
            other => {
                self.problem(format!(
                    "the parser found `{other}` (`{text}`) where a word belongs"
                ));
                out.push(unknown(quoted));
            }
        }
    }

    /// An unquoted word as the parser left it: backslash escapes, and characters that must
    /// not be there if the parser read the word as bash does.
    pub(super) fn bare(&mut self, text: &str, out: &mut Vec<Piece>) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') => {}
                    Some(next) => out.push(Piece::Char(next, true)),
                    None => out.push(Piece::Char('\\', false)),
                },
                '$' => match chars.peek() {
                    Some(next) if starts_expansion(*next) => {
                        self.problem(format!("the parser did not see the expansion in `{text}`"));
                        out.push(unknown(false));
                    }
                    _ => out.push(Piece::Char('$', false)),
                },
                c if c.is_whitespace()
                    || matches!(
                        c,
                        '`' | '\'' | '"' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
                    ) =>
                {
                    self.problem(format!(
                        "the parser read `{text}` as one word, which bash would not"
                    ));
                    out.push(unknown(false));
                }
                c => out.push(Piece::Char(c, false)),
            }
        }
    }

    /// `"…"`: escapes of `$`, `` ` ``, `"`, `\` and newline; expansions stay one word.
    pub(super) fn double_quoted(&mut self, node: Node<'_>, out: &mut Vec<Piece>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "\"" if !child.is_named() => {}
                "string_content" => {
                    let text = self.text(child);
                    self.hidden_substitution(text);
                    let mut chars = text.chars().peekable();
                    while let Some(c) = chars.next() {
                        match (c, chars.peek().copied()) {
                            ('\\', Some('\n')) => {
                                chars.next();
                            }
                            ('\\', Some(next @ ('$' | '`' | '"' | '\\'))) => {
                                chars.next();
                                out.push(Piece::Char(next, true));
                            }
                            ('$', Some(next)) if starts_expansion(next) => {
                                self.problem(format!(
                                    "the parser did not see the expansion in `{text}`"
                                ));
                                out.push(unknown(true));
                            }
                            (c, _) => out.push(Piece::Char(c, true)),
                        }
                    }
                }
                _ => self.pieces(child, true, out),
            }
        }
    }
}

pub(super) fn unknown(quoted: bool) -> Piece {
    Piece::Expansion {
        quoted,
        multi: false,
        safe_start: false,
    }
}

/// A character after `$` that makes it an expansion.
pub(super) fn starts_expansion(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | '{' | '(' | '[' | '`' | '@' | '*' | '#' | '?' | '-' | '$' | '!'
        )
}

/// The word the pieces make.
fn finish(pieces: &[Piece], source: &str, ctx: Ctx) -> Word {
    let splits = ctx == Ctx::Argument;
    let mut special = false;
    let mut unquoted_expansion = false;
    let mut multi = false;
    for (i, piece) in pieces.iter().enumerate() {
        match *piece {
            Piece::Expansion {
                quoted, multi: m, ..
            } => {
                special = true;
                unquoted_expansion |= !quoted && splits;
                multi |= m;
            }
            Piece::Char('~', false) => {
                let after = if i == 0 {
                    true
                } else {
                    matches!(pieces[i - 1], Piece::Char('=' | ':', false))
                };
                special |= after;
            }
            Piece::Char(_, _) => {}
        }
    }
    let glob = splits && has_glob(pieces);
    let brace = splits && has_brace(pieces);
    if !special && !glob && !brace {
        let text = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Char(c, _) => Some(*c),
                Piece::Expansion { .. } => None,
            })
            .collect();
        return Word::Known(text);
    }
    let one_field = !unquoted_expansion && !multi && !glob && !brace;
    let safe_first = match pieces.first() {
        Some(Piece::Char(c, quoted)) => {
            *c != '-' && (*quoted || !matches!(c, '*' | '?' | '[' | '{' | '~'))
        }
        Some(Piece::Expansion { safe_start, .. }) => *safe_start,
        None => false,
    };
    Word::Unknown(Unknown {
        source: source.to_string(),
        one_field,
        may_be_option: !(safe_first && !unquoted_expansion && !multi),
    })
}

/// An unquoted `*`, `?`, or `[` with a `]` after it.
fn has_glob(pieces: &[Piece]) -> bool {
    pieces.iter().enumerate().any(|(i, piece)| match piece {
        Piece::Char('*' | '?', false) => true,
        Piece::Char('[', false) => pieces[i + 1..]
            .iter()
            .any(|p| matches!(p, Piece::Char(']', false))),
        _ => false,
    })
}

/// An unquoted `{…}` holding an unquoted `,` or `..` at its own level.
fn has_brace(pieces: &[Piece]) -> bool {
    let mut opens: Vec<bool> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Char('{', false) => opens.push(false),
            Piece::Char(',', false) => {
                if let Some(found) = opens.last_mut() {
                    *found = true;
                }
            }
            Piece::Char('.', false)
                if matches!(pieces.get(i + 1), Some(Piece::Char('.', false))) =>
            {
                if let Some(found) = opens.last_mut() {
                    *found = true;
                }
            }
            Piece::Char('}', false) if opens.pop() == Some(true) => return true,
            _ => {}
        }
    }
    false
}
