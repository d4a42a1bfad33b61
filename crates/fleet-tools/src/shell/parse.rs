//! Walking a tree-sitter-bash tree into a [`Line`]: which simple commands run, with which
//! words and redirections, and which command lines are nested in them.
//!
//! tree-sitter-bash is a highlighting grammar and reads a few things differently from bash;
//! where that could hide a word or a command, the line is marked unreadable rather than
//! guessed at. The known cases: words it splits that bash joins (`a\<newline>b`, `$"…"`),
//! words it joins that bash splits (`{ }`), arguments it files under a redirection
//! (`echo >f x`), a descriptor it takes for an argument (`cat 0< f`), and backquotes with
//! backslashes inside (which bash parses twice).

use super::model::{Assignment, Line, Redirect, RedirectOp, SimpleCommand, Word};
use super::word::Ctx;
use std::cell::RefCell;
use tree_sitter::{Node, Parser};

/// How deep the walk may go before the line is refused as unreadable (it recurses once per
/// level of nesting; real command lines stay far below this).
const MAX_DEPTH: usize = 200;

thread_local! {
    /// One parser per thread: creating one costs more than parsing a typical line.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `text` as `bash -c` would read it.
pub(super) fn parse(text: &str) -> Line {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(text, None)
    });
    let mut builder = Builder::new(text, text, 0);
    match tree {
        None => builder.problem("the shell parser could not read it".into()),
        Some(tree) => {
            let root = tree.root_node();
            if root.has_error() {
                builder.problem(syntax_error(root, text));
            }
            builder.statement(root);
        }
    }
    builder.line
}

/// Where the first syntax error is, for the message.
fn syntax_error(root: Node<'_>, src: &str) -> String {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let near: String = text_of(node, src).chars().take(40).collect();
            return if node.is_missing() {
                format!("a syntax error: `{}` is missing", node.kind())
            } else {
                format!("a syntax error near `{}`", near.trim())
            };
        }
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "a syntax error".into()
}

pub(super) fn text_of<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Builds one [`Line`]; nested lines get builders of their own.
pub(super) struct Builder<'s> {
    pub src: &'s str,
    pub line: Line,
    depth: usize,
}

/// One piece of a simple command, in source order.
enum Item<'t> {
    Word(Vec<Node<'t>>),
    Redirect(Redirect, usize),
}

impl<'s> Builder<'s> {
    pub fn new(src: &'s str, source: &str, depth: usize) -> Self {
        Self {
            src,
            line: Line {
                source: source.to_string(),
                ..Line::default()
            },
            depth,
        }
    }

    pub fn text(&self, node: Node<'_>) -> &'s str {
        text_of(node, self.src)
    }

    /// Marks the line unreadable; the first reason is kept.
    pub fn problem(&mut self, why: String) {
        self.line.unreadable.get_or_insert(why);
    }

    /// Counts one level of nesting; false (and the line unreadable) past the limit.
    pub fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.problem("it nests too deeply to check".into());
            return false;
        }
        true
    }

    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Walks the statements in `nodes` as a nested line (`$(…)`, `<(…)`).
    pub fn nested(&mut self, node: Node<'_>) {
        let source = self.text(node).to_string();
        let mut child = Builder::new(self.src, &source, self.depth);
        let mut cursor = node.walk();
        let parts: Vec<(Option<&str>, Node<'_>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, part)| (node.field_name_for_child(i as u32), part))
            .filter(|(_, part)| part.is_named())
            .collect();
        for (field, part) in parts {
            match field {
                Some("redirect") => {
                    // `$(<file)` reads the file.
                    let redirects = child.redirect(part);
                    child.line.commands.push(SimpleCommand {
                        source: child.text(part).to_string(),
                        redirects,
                        ..SimpleCommand::default()
                    });
                }
                _ => child.statement(part),
            }
        }
        if let Some(why) = child.line.unreadable.clone() {
            self.problem(why);
        }
        self.line.nested.push(child.line);
    }

    pub fn statement(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        self.statement_inner(node);
        self.leave();
    }

    fn statement_inner(&mut self, node: Node<'_>) {
        if node.is_missing() {
            self.problem(format!("a syntax error: `{}` is missing", node.kind()));
            return;
        }
        match node.kind() {
            "program" | "list" | "pipeline" | "subshell" | "do_group" | "else_clause"
            | "elif_clause" | "if_statement" | "while_statement" | "negated_command" => {
                self.children(node);
            }
            "compound_statement" => {
                if first_token(node) == Some("((") {
                    self.arithmetic_command(node);
                } else {
                    self.children(node);
                }
            }
            "redirected_statement" => self.redirected(node),
            "command" => self.command(node, &[]),
            "declaration_command" | "unset_command" => self.declaration(node, &[]),
            "test_command" => self.test(node, &[]),
            "variable_assignment" | "variable_assignments" => self.assignments_only(node, &[]),
            "function_definition" => self.function(node),
            "for_statement" => self.for_loop(node),
            "c_style_for_statement" => self.c_for_loop(node),
            "case_statement" => self.case(node),
            "comment" => {}
            "ERROR" => {
                self.problem(syntax_error(node, self.src));
                self.salvage(node);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                // A redirection with no command (`> f` alone still creates f).
                let redirects = self.redirect(node);
                self.line.commands.push(SimpleCommand {
                    source: self.text(node).to_string(),
                    redirects,
                    ..SimpleCommand::default()
                });
            }
            _ if !node.is_named() => {}
            other => self.problem(format!(
                "the parser found `{other}` (`{}`), which this check does not know",
                self.text(node)
            )),
        }
    }

    fn children(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            self.statement(child);
        }
    }

    /// What can still be found in a part the parser could not read: statements, and runs of
    /// words taken as a command, for deny rules (the line is unreadable anyway).
    fn salvage(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        self.salvage_inner(node);
        self.leave();
    }

    fn salvage_inner(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut words = Vec::new();
        for child in children {
            if is_word_kind(child.kind()) {
                words.push(child);
                continue;
            }
            if !words.is_empty() {
                self.salvaged_command(std::mem::take(&mut words));
            }
            if child.is_named() && child.kind() != "ERROR" {
                self.statement(child);
            } else if child.kind() == "ERROR" {
                self.salvage(child);
            }
        }
        if !words.is_empty() {
            self.salvaged_command(words);
        }
    }

    fn salvaged_command(&mut self, nodes: Vec<Node<'_>>) {
        let words = nodes
            .into_iter()
            .map(|n| self.word(&[n], Ctx::Argument))
            .collect();
        self.line.commands.push(SimpleCommand::of_words(words));
    }

    fn redirected(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let mut body = None;
        let mut redirects = Vec::new();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("body") => body = Some(child),
                _ if child.is_named() => redirects.push(child),
                _ => {}
            }
        }
        match body.map(|b| (b, b.kind())) {
            Some((b, "command")) => self.command(b, &redirects),
            Some((b, "declaration_command" | "unset_command")) => self.declaration(b, &redirects),
            Some((b, "test_command")) => self.test(b, &redirects),
            Some((b, "variable_assignment" | "variable_assignments")) => {
                self.assignments_only(b, &redirects);
            }
            Some((b, _)) => {
                self.statement(b);
                for redirect in redirects {
                    if extra_destinations(redirect) {
                        self.problem(format!(
                            "`{}` has words after a redirection of a compound command",
                            self.text(redirect)
                        ));
                    }
                    let found = self.redirect(redirect);
                    self.line.redirects.extend(found);
                }
            }
            None => {
                let mut command = SimpleCommand {
                    source: self.text(node).to_string(),
                    ..SimpleCommand::default()
                };
                for redirect in redirects {
                    command.redirects.extend(self.redirect(redirect));
                }
                self.line.commands.push(command);
            }
        }
    }

    /// A simple command; `extra` are redirections written after it (the parser files them
    /// outside the command node).
    fn command(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
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
    fn simple(
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

    /// The redirections a redirect node stands for (a here-document node may hold more).
    pub fn redirect(&mut self, node: Node<'_>) -> Vec<Redirect> {
        let mut cursor = node.walk();
        let children: Vec<(Option<&str>, Node<'_>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, child)| (node.field_name_for_child(i as u32), child))
            .collect();
        let mut out = Vec::new();
        match node.kind() {
            "file_redirect" => {
                let mut fd = None;
                let mut op = None;
                let mut target = None;
                for (field, child) in children {
                    match (field, child.kind()) {
                        (Some("descriptor"), _) => fd = self.text(child).parse::<u32>().ok(),
                        (Some("destination"), _) if target.is_none() => {
                            target = Some(self.word(&[child], Ctx::Argument));
                        }
                        (Some("destination"), _) => {}
                        (_, "ERROR") => self.problem(format!(
                            "`{}` is a redirection this check cannot read",
                            self.text(node)
                        )),
                        (_, kind) if !child.is_named() => op = redirect_op(kind),
                        _ => {}
                    }
                }
                match op {
                    Some(RedirectOp::Close) => out.push(Redirect {
                        fd,
                        op: RedirectOp::Close,
                        target: Word::Known("-".into()),
                    }),
                    Some(op) => out.push(Redirect {
                        fd,
                        op,
                        target: target.unwrap_or_else(|| Word::anything(self.text(node))),
                    }),
                    None => self.problem(format!(
                        "`{}` is a redirection this check cannot read",
                        self.text(node)
                    )),
                }
            }
            "heredoc_redirect" => {
                let mut start = String::new();
                let mut strip_tabs = false;
                let mut ended = false;
                for (field, child) in &children {
                    match (field, child.kind()) {
                        (_, "<<-") => strip_tabs = true,
                        (_, "heredoc_start") => start = self.text(*child).to_string(),
                        (_, "heredoc_body") => {
                            let quoted = start.contains(['\'', '"', '\\']);
                            self.heredoc_body(*child, quoted);
                            let body = self.text(*child);
                            self.heredoc_end(&start, body, strip_tabs);
                        }
                        (_, "heredoc_end") => {
                            ended = true;
                            let delimiter = delimiter(&start);
                            if self.text(*child) != delimiter {
                                self.problem(format!(
                                    "the here-document `{start}` does not end where bash ends it"
                                ));
                            }
                        }
                        (Some("redirect"), _) => {
                            let more = self.redirect(*child);
                            out.extend(more);
                        }
                        (Some("descriptor"), _) => {}
                        _ => {}
                    }
                }
                if !ended {
                    self.problem(format!("the here-document `{start}` is never closed"));
                }
                out.insert(
                    0,
                    Redirect {
                        fd: None,
                        op: RedirectOp::HereDoc,
                        target: Word::Known(start),
                    },
                );
            }
            "herestring_redirect" => {
                let target = children
                    .iter()
                    .filter(|(_, child)| child.is_named())
                    .map(|(_, child)| *child)
                    .collect::<Vec<_>>();
                let target = if target.is_empty() {
                    Word::anything(self.text(node))
                } else {
                    self.word(&target, Ctx::Argument)
                };
                out.push(Redirect {
                    fd: None,
                    op: RedirectOp::HereString,
                    target,
                });
            }
            other => self.problem(format!("the parser found a `{other}` redirection")),
        }
        out
    }

    /// A here-document body must not hold its own delimiter line: bash would end the
    /// document there and run what follows as commands, which the parser took for text.
    fn heredoc_end(&mut self, start: &str, body: &str, strip_tabs: bool) {
        let delimiter = delimiter(start);
        let early = body.lines().any(|line| {
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            line == delimiter
        });
        if early {
            self.problem(format!(
                "the here-document `{start}` ends earlier for bash than for the parser"
            ));
        }
    }

    /// `declare`, `local`, `export`, `readonly`, `typeset`, `unset`: their assignments are
    /// arguments, as the builtin receives them.
    fn declaration(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
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
    fn test(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
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

    fn test_leaves<'t>(&mut self, node: Node<'t>, out: &mut Vec<Node<'t>>) {
        if !self.enter() {
            return;
        }
        self.test_leaves_inner(node, out);
        self.leave();
    }

    fn test_leaves_inner<'t>(&mut self, node: Node<'t>, out: &mut Vec<Node<'t>>) {
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
    fn arithmetic_command(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let inner = text
            .strip_prefix("((")
            .and_then(|t| t.strip_suffix("))"))
            .unwrap_or(text)
            .to_string();
        self.arithmetic(node, &inner);
        let expression = if super::word::literal_arithmetic(&inner) {
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

    fn assignments_only(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let nodes: Vec<Node<'_>> = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).collect()
        };
        let assignments = nodes.into_iter().map(|a| self.assignment(a)).collect();
        self.simple(node, assignments, extra.to_vec(), None);
    }

    pub fn assignment(&mut self, node: Node<'_>) -> Assignment {
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

    fn function(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("name") => {
                    let name = self.text(child).to_string();
                    self.line.functions.push(name);
                }
                Some("body") => self.statement(child),
                Some("redirect") => {
                    let found = self.redirect(child);
                    self.line.redirects.extend(found);
                }
                _ => {}
            }
        }
    }

    fn for_loop(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("variable") => {
                    let name = self.text(child).to_string();
                    self.line.sets.push(name);
                }
                Some("value") => {
                    self.word(&[child], Ctx::Argument);
                }
                Some("body") => self.statement(child),
                _ if child.is_named() && child.kind() != "comment" => self.statement(child),
                _ => {}
            }
        }
    }

    fn c_for_loop(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let header = text
            .find("((")
            .and_then(|open| {
                text[open..]
                    .find("))")
                    .map(|close| &text[open + 2..open + close])
            })
            .unwrap_or(text)
            .to_string();
        self.arithmetic(node, &header);
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("body") => self.statement(child),
                Some(_) => self.scan(child),
                None => {}
            }
        }
    }

    fn case(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (Some("value"), _) => self.scan(child),
                (_, "case_item") => {
                    let mut inner = child.walk();
                    for (j, part) in child.children(&mut inner).enumerate() {
                        match child.field_name_for_child(j as u32) {
                            Some("value") => self.scan(part),
                            _ if part.is_named() => self.statement(part),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn first_token<'t>(node: Node<'t>) -> Option<&'static str> {
    let first = node.child(0)?;
    match first.kind() {
        "((" => Some("(("),
        "[[" => Some("[["),
        "[" => Some("["),
        "{" => Some("{"),
        _ => None,
    }
}

/// The line that ends a here-document: its start word with quotes and backslashes removed.
fn delimiter(start: &str) -> String {
    let mut out = String::new();
    let mut chars = start.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {}
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

fn redirect_op(token: &str) -> Option<RedirectOp> {
    Some(match token {
        "<" => RedirectOp::Read,
        ">" => RedirectOp::Write,
        ">>" => RedirectOp::Append,
        ">|" => RedirectOp::Clobber,
        "&>" => RedirectOp::WriteBoth,
        "&>>" => RedirectOp::AppendBoth,
        "<>" => RedirectOp::ReadWrite,
        ">&" => RedirectOp::DupOut,
        "<&" => RedirectOp::DupIn,
        ">&-" | "<&-" => RedirectOp::Close,
        _ => return None,
    })
}

fn is_redirect_kind(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

/// A file redirect with more than one destination (`> f x`).
fn extra_destinations(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let count = node
        .children(&mut cursor)
        .enumerate()
        .filter(|(i, _)| node.field_name_for_child(*i as u32) == Some("destination"))
        .count();
    count > 1
}

/// Node kinds that stand for one shell word.
pub(super) fn is_word_kind(kind: &str) -> bool {
    matches!(
        kind,
        "word"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "translated_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression"
            | "number"
            | "command_name"
            | "extglob_pattern"
            | "regex"
            | "variable_name"
            | "test_operator"
            | "special_variable_name"
    )
}
