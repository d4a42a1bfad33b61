//! What one word expands to: quote removal, `$'…'` decoding and escapes for the parts that are
//! known; expansions, globs, brace expansion and `~` for the parts that are not. Also the
//! side effects of reading a word: the command lines nested in it and the arithmetic it
//! evaluates.

use super::model::{Unknown, Word};
use super::parse::{is_word_kind, Builder};
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
enum Piece {
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
    pub fn word(&mut self, nodes: &[Node<'_>], ctx: Ctx) -> Word {
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

    fn pieces(&mut self, node: Node<'_>, quoted: bool, out: &mut Vec<Piece>) {
        if !self.enter() {
            return;
        }
        self.pieces_inner(node, quoted, out);
        self.leave();
    }

    fn pieces_inner(&mut self, node: Node<'_>, quoted: bool, out: &mut Vec<Piece>) {
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
                out.extend(decode_ansi_c(inner).chars().map(|c| Piece::Char(c, true)));
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
    fn bare(&mut self, text: &str, out: &mut Vec<Piece>) {
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
    fn double_quoted(&mut self, node: Node<'_>, out: &mut Vec<Piece>) {
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

    /// Walks a part of the tree that is not a word the line runs with (a pattern, an
    /// expression, an expansion's operand) for what reading it does: nested command lines,
    /// arithmetic, assignments, parser trouble.
    pub fn scan(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        if node.is_missing() || node.is_error() {
            let text = self.text(node);
            self.problem(format!("a syntax error near `{text}`"));
        }
        match node.kind() {
            "command_substitution" | "process_substitution" => self.substitution(node),
            "arithmetic_expansion" => self.arithmetic_expansion(node),
            "subscript" => self.subscript(node),
            "expansion" => self.expansion(node),
            "word" | "regex" | "extglob_pattern" | "string_content" | "heredoc_content" => {
                let text = self.text(node);
                self.hidden_substitution(text);
            }
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    self.scan(child);
                }
            }
        }
        self.leave();
    }

    /// `$(…)`, backquotes, `<(…)`, `>(…)`: a nested command line.
    fn substitution(&mut self, node: Node<'_>) {
        let text = self.text(node);
        if text.starts_with('`') && text.contains('\\') {
            self.problem(format!(
                "backquotes with a backslash inside (`{text}`) are read twice by bash; write \
                 $(…) instead"
            ));
        }
        self.nested(node);
    }

    /// `${…}`: indirection, transformations and substring offsets evaluate text as
    /// arithmetic or as code; `=` and `:=` assign.
    fn expansion(&mut self, node: Node<'_>) {
        let text = self.text(node).to_string();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut name = String::new();
        let mut offset = false;
        for (i, child) in children.iter().enumerate() {
            let kind = child.kind();
            if !child.is_named() {
                match kind {
                    "!" if i == 1 && !is_name_list(&text) => {
                        self.line.arithmetic.push(text.clone())
                    }
                    "@" => self.line.arithmetic.push(text.clone()),
                    ":" => offset = true,
                    "=" | ":=" => self.line.sets.push(name.clone()),
                    _ => {}
                }
                continue;
            }
            match kind {
                "variable_name" | "special_variable_name" if name.is_empty() => {
                    name = self.text(*child).to_string();
                }
                "subscript" => {
                    if name.is_empty() {
                        name = self.text(*child).to_string();
                    }
                    self.subscript(*child);
                }
                "number" if offset && child.named_child_count() == 0 => {}
                _ if offset => {
                    self.line.arithmetic.push(text.clone());
                    self.scan(*child);
                }
                _ if is_word_kind(kind) => {
                    let mut ignored = Vec::new();
                    self.pieces(*child, true, &mut ignored);
                }
                _ => self.scan(*child),
            }
        }
    }

    /// `a[index]`: the index of an indexed array is arithmetic.
    fn subscript(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            if node.field_name_for_child(i as u32) == Some("index") {
                let index = self.text(child);
                if !matches!(index, "@" | "*") && !literal_arithmetic(index) {
                    let whole = self.text(node).to_string();
                    self.line.arithmetic.push(whole);
                }
                self.scan(child);
            }
        }
    }

    /// `$((…))` and `$[…]`.
    fn arithmetic_expansion(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let inner = text
            .strip_prefix("$((")
            .and_then(|t| t.strip_suffix("))"))
            .or_else(|| text.strip_prefix("$[").and_then(|t| t.strip_suffix(']')))
            .unwrap_or(text)
            .to_string();
        self.arithmetic(node, &inner);
    }

    /// Records `expression` when it is not literal, and walks `node` for substitutions.
    pub fn arithmetic(&mut self, node: Node<'_>, expression: &str) {
        if !literal_arithmetic(expression) {
            self.line.arithmetic.push(expression.trim().to_string());
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() != "do_group" {
                self.scan(child);
            }
        }
    }

    /// A here-document body: literal when the delimiter is quoted, else expanded like a
    /// double-quoted string.
    pub fn heredoc_body(&mut self, node: Node<'_>, quoted: bool) {
        if quoted {
            return;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        if children.is_empty() {
            let text = self.text(node);
            self.hidden_substitution(text);
        }
        for child in children {
            self.scan(child);
        }
    }

    /// Text the parser left as plain that still holds a substitution bash would run.
    fn hidden_substitution(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '`' => {
                    self.problem(format!("the parser did not see the backquotes in `{text}`"));
                    return;
                }
                '$' if matches!(chars.peek(), Some('(' | '[' | '{')) => {
                    self.problem(format!("the parser did not see the expansion in `{text}`"));
                    return;
                }
                _ => {}
            }
        }
    }
}

fn unknown(quoted: bool) -> Piece {
    Piece::Expansion {
        quoted,
        multi: false,
        safe_start: false,
    }
}

/// A character after `$` that makes it an expansion.
fn starts_expansion(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | '{' | '(' | '[' | '`' | '@' | '*' | '#' | '?' | '-' | '$' | '!'
        )
}

/// `${!name[@]}`, `${!name[*]}`, `${!prefix*}`, `${!prefix@}`: lists of names or keys, which
/// evaluate nothing.
fn is_name_list(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("${!").and_then(|t| t.strip_suffix('}')) else {
        return false;
    };
    let name = inner
        .strip_suffix("[@]")
        .or_else(|| inner.strip_suffix("[*]"))
        .or_else(|| inner.strip_suffix('@'))
        .or_else(|| inner.strip_suffix('*'));
    name.is_some_and(|name| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether an arithmetic expression holds only literal numbers and operators: no variable
/// (whose value bash would evaluate in turn), no expansion, no subscript.
pub(super) fn literal_arithmetic(expression: &str) -> bool {
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '0'..='9' => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || matches!(n, '#' | '@' | '_'))
                {
                    chars.next();
                }
            }
            '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '~' | '^' | '&' | '|' | '?'
            | ':' | ',' | '(' | ')' => {}
            _ => return false,
        }
    }
    true
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

/// The value of the text between `$'` and `'`. A NUL ends the string, as in bash.
pub(super) fn decode_ansi_c(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        let decoded = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            '0'..='7' => {
                let (value, used) = number(&chars[i - 1..], 8, 3);
                i += used - 1;
                char::from_u32(value)
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, used) = number(&chars[i..], 16, max);
                if used == 0 {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                i += used;
                char::from_u32(value)
            }
            'c' => {
                let Some(&control) = chars.get(i) else {
                    out.push_str("\\c");
                    break;
                };
                i += 1;
                char::from_u32(u32::from(control) & 0x1f)
            }
            other => {
                out.push('\\');
                Some(other)
            }
        };
        match decoded {
            Some('\0') => break,
            Some(c) => out.push(c),
            None => out.push('\u{fffd}'),
        }
    }
    out
}

/// Reads up to `max` digits in `radix`; returns the value and how many were read.
fn number(chars: &[char], radix: u32, max: usize) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for c in chars.iter().take(max) {
        match c.to_digit(radix) {
            Some(d) => {
                value = value.saturating_mul(radix).saturating_add(d);
                used += 1;
            }
            None => break,
        }
    }
    (value, used)
}
