//! The side effects of reading a part of the tree: command lines nested in it, arithmetic it
//! evaluates, variables it assigns, and text where the parser missed a substitution.

use super::parse::{is_word_kind, Builder};
use tree_sitter::Node;

impl Builder<'_> {
    /// Walks a part of the tree that is not a word the line runs with (a pattern, an
    /// expression, an expansion's operand) for what reading it does: nested command lines,
    /// arithmetic, assignments, parser trouble.
    pub(super) fn scan(&mut self, node: Node<'_>) {
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
    pub(super) fn substitution(&mut self, node: Node<'_>) {
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
    pub(super) fn expansion(&mut self, node: Node<'_>) {
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
    pub(super) fn subscript(&mut self, node: Node<'_>) {
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
    pub(super) fn arithmetic_expansion(&mut self, node: Node<'_>) {
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
    pub(super) fn arithmetic(&mut self, node: Node<'_>, expression: &str) {
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
    pub(super) fn heredoc_body(&mut self, node: Node<'_>, quoted: bool) {
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
    pub(super) fn hidden_substitution(&mut self, text: &str) {
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
