//! Simple commands: words, assignments and redirections in source order, including the
//! builtins the parser gives nodes of their own (`declare`, `unset`, `[[ ]]`, `(( ))`).

use super::model::{Assignment, Redirect, SimpleCommand, Word};
use super::parse::{first_token, is_word_kind, Builder};
use super::redirect::is_redirect_kind;
use super::word::Ctx;
use tree_sitter::Node;

/// One piece of a simple command, in source order.
enum Item<'t> {
    Word(Vec<Node<'t>>),
    Redirect(Redirect, usize),
}

impl Builder<'_> {
    /// A simple command; `extra` are redirections written after it (the parser files them
    /// outside the command node).
    pub(super) fn command(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let mut cursor = node.walk();
        let mut assignments = Vec::new();
        let mut pieces: Vec<Node<'_>> = Vec::new();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (_, "variable_assignment") => assignments.push(child),
                (Some("name" | "argument"), _) => pieces.push(child),
                (Some("redirect"), _) => pieces.push(child),
                (_, "comment") => {}
                (_, kind) if !child.is_named() && kind != "$" => {}
                _ => pieces.push(child),
            }
        }
        pieces.extend_from_slice(extra);
        let assignments = assignments
            .into_iter()
            .map(|a| self.assignment(a))
            .collect();
        self.simple(node, assignments, pieces, None);
    }

    /// Builds a simple command from its word and redirection nodes, in source order.
    pub(super) fn simple(
        &mut self,
        node: Node<'_>,
        assignments: Vec<Assignment>,
        mut pieces: Vec<Node<'_>>,
        around: Option<(&str, &str)>,
    ) {
        pieces.sort_by_key(Node::start_byte);
        let mut items: Vec<(usize, usize, Item<'_>)> = Vec::new();
        let mut later = Vec::new();
        for piece in pieces {
            if is_redirect_kind(piece.kind()) {
                self.redirect_items(piece, &mut items, &mut later);
            } else {
                items.push((
                    piece.start_byte(),
                    piece.end_byte(),
                    Item::Word(vec![piece]),
                ));
            }
        }
        items.sort_by_key(|(start, _, _)| *start);
        let items = self.join_items(items);
        let mut command = SimpleCommand {
            source: self.text(node).to_string(),
            assignments,
            ..SimpleCommand::default()
        };
        if let Some((open, _)) = around {
            command.words.push(Word::Known(open.to_string()));
        }
        let mut end = node.end_byte();
        for (_, item_end, item) in items {
            end = end.max(item_end);
            match item {
                Item::Word(nodes) => {
                    let word = self.word(&nodes, Ctx::Argument);
                    command.words.push(word);
                }
                Item::Redirect(redirect, _) => command.redirects.push(redirect),
            }
        }
        if let Some((_, close)) = around.filter(|(_, close)| !close.is_empty()) {
            command.words.push(Word::Known(close.to_string()));
        }
        if end > node.end_byte() {
            command.source = self
                .src
                .get(node.start_byte()..end)
                .unwrap_or_default()
                .to_string();
        }
        self.line.commands.push(command);
        for statement in later {
            self.statement(statement);
        }
    }

    /// A redirection and what the parser put inside it that belongs to the command: words
    /// after the target (`>f x` passes `x`), more redirections and arguments of a
    /// here-document, and the commands following one (`cat <<EOF | grep x`).
    fn redirect_items<'t>(
        &mut self,
        node: Node<'t>,
        items: &mut Vec<(usize, usize, Item<'t>)>,
        later: &mut Vec<Node<'t>>,
    ) {
        let mut cursor = node.walk();
        let mut destinations = 0;
        for (i, child) in node.children(&mut cursor).enumerate() {
            let field = node.field_name_for_child(i as u32);
            match (node.kind(), field, child.kind()) {
                ("file_redirect", Some("destination"), _) => {
                    destinations += 1;
                    if destinations > 1 {
                        items.push((
                            child.start_byte(),
                            child.end_byte(),
                            Item::Word(vec![child]),
                        ));
                    }
                }
                ("heredoc_redirect", Some("argument"), _) => {
                    items.push((
                        child.start_byte(),
                        child.end_byte(),
                        Item::Word(vec![child]),
                    ));
                }
                ("heredoc_redirect", Some("redirect"), _) => {
                    self.redirect_items(child, items, later);
                }
                ("heredoc_redirect", _, kind)
                    if child.is_named()
                        && !matches!(kind, "heredoc_start" | "heredoc_body" | "heredoc_end") =>
                {
                    later.push(child);
                }
                _ => {}
            }
        }
        for redirect in self.redirect(node) {
            items.push((
                node.start_byte(),
                node.end_byte(),
                Item::Redirect(redirect, 0),
            ));
        }
    }

    /// Merges words the parser split but bash reads as one (nothing, or only
    /// backslash-newlines, between them), and gives a redirection the descriptor number the
    /// parser took for a word (`cat 0< f`).
    fn join_items<'t>(
        &mut self,
        items: Vec<(usize, usize, Item<'t>)>,
    ) -> Vec<(usize, usize, Item<'t>)> {
        let mut out: Vec<(usize, usize, Item<'t>)> = Vec::new();
        for (start, end, item) in items {
            let touching = out.last().is_some_and(|(_, prev_end, _)| {
                self.src
                    .get(*prev_end..start)
                    .is_some_and(|gap| gap.replace("\\\n", "").is_empty())
            });
            match (out.last_mut(), item) {
                (Some((_, prev_end, Item::Word(nodes))), Item::Word(more)) if touching => {
                    nodes.extend(more);
                    *prev_end = end;
                }
                (Some((_, _, Item::Word(nodes))), Item::Redirect(mut redirect, n))
                    if touching && redirect.fd.is_none() && nodes.len() == 1 =>
                {
                    let digits = self.text(nodes[0]);
                    if let Ok(fd) = digits.parse::<u32>() {
                        redirect.fd = Some(fd);
                        out.pop();
                    }
                    out.push((start, end, Item::Redirect(redirect, n)));
                }
                (_, item) => out.push((start, end, item)),
            }
        }
        out
    }

    /// `declare`, `local`, `export`, `readonly`, `typeset`, `unset`: their assignments are
    /// arguments, as the builtin receives them.
    pub(super) fn declaration(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let mut cursor = node.walk();
        let mut keyword = None;
        let mut pieces = Vec::new();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                if keyword.is_none() {
                    keyword = Some(self.text(child).to_string());
                }
            } else if child.kind() != "comment" {
                pieces.push(child);
            }
        }
        pieces.extend_from_slice(extra);
        let keyword = keyword.unwrap_or_default();
        self.simple(node, Vec::new(), pieces, Some((&keyword, "")));
    }

    /// `[[ … ]]` and `[ … ]` as commands named `[[` and `[`, with the operators and operands
    /// as words.
    pub(super) fn test(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let (open, close) = match first_token(node) {
            Some("[[") => ("[[", "]]"),
            Some("[") => ("[", "]"),
            Some("((") => ("((", "))"),
            _ => {
                self.problem(format!(
                    "`{}` is a test this check cannot read",
                    self.text(node)
                ));
                return;
            }
        };
        let mut leaves = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() && matches!(self.text(child), "[[" | "]]" | "[" | "]") {
                continue;
            }
            self.test_leaves(child, &mut leaves);
        }
        leaves.extend_from_slice(extra);
        self.simple(node, Vec::new(), leaves, Some((open, close)));
    }

    pub(super) fn test_leaves<'t>(&mut self, node: Node<'t>, out: &mut Vec<Node<'t>>) {
        if !self.enter() {
            return;
        }
        self.test_leaves_inner(node, out);
        self.leave();
    }

    pub(super) fn test_leaves_inner<'t>(&mut self, node: Node<'t>, out: &mut Vec<Node<'t>>) {
        if is_word_kind(node.kind()) || !node.is_named() || node.kind() == "test_operator" {
            out.push(node);
            return;
        }
        match node.kind() {
            "binary_expression"
            | "unary_expression"
            | "parenthesized_expression"
            | "postfix_expression"
            | "ternary_expression" => {
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    self.test_leaves(child, out);
                }
            }
            other => self.problem(format!("the parser found `{other}` in a test")),
        }
    }

    /// `(( expr ))`: a command named `((` whose one word is the expression.
    pub(super) fn arithmetic_command(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let inner = text
            .strip_prefix("((")
            .and_then(|t| t.strip_suffix("))"))
            .unwrap_or(text)
            .to_string();
        self.arithmetic(node, &inner);
        let expression = if super::scan::literal_arithmetic(&inner) {
            Word::Known(inner.trim().to_string())
        } else {
            Word::anything(inner.trim())
        };
        self.line.commands.push(SimpleCommand {
            source: text.to_string(),
            words: vec![
                Word::Known("((".into()),
                expression,
                Word::Known("))".into()),
            ],
            ..SimpleCommand::default()
        });
    }

    pub(super) fn assignments_only(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let nodes: Vec<Node<'_>> = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).collect()
        };
        let assignments = nodes.into_iter().map(|a| self.assignment(a)).collect();
        self.simple(node, assignments, extra.to_vec(), None);
    }

    pub(super) fn assignment(&mut self, node: Node<'_>) -> Assignment {
        let mut name = String::new();
        let mut append = false;
        let mut value = None;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (Some("name"), kind) => {
                    name = self.text(child).to_string();
                    if kind == "subscript" {
                        self.scan(child);
                    }
                }
                (Some("value"), _) => value = Some(self.word(&[child], Ctx::Assignment)),
                (_, "+=") => append = true,
                _ => {}
            }
        }
        Assignment {
            name,
            value: value.unwrap_or_else(|| Word::Known(String::new())),
            append,
        }
    }
}
