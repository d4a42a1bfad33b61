//! Walking a tree-sitter-bash tree into a [`Line`]: which simple commands run, with which
//! words and redirections, and which command lines are nested in them.
//!
//! tree-sitter-bash is a highlighting grammar and reads a few things differently from bash;
//! where that could hide a word or a command, the line is marked unreadable rather than
//! guessed at. The known cases: words it splits that bash joins (`a\<newline>b`, `$"…"`),
//! words it joins that bash splits (`{ }`), arguments it files under a redirection
//! (`echo >f x`), a descriptor it takes for an argument (`cat 0< f`), and backquotes with
//! backslashes inside (which bash parses twice).

use super::model::{Line, SimpleCommand};
use super::redirect::extra_destinations;
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

impl<'s> Builder<'s> {
    pub(super) fn new(src: &'s str, source: &str, depth: usize) -> Self {
        Self {
            src,
            line: Line {
                source: source.to_string(),
                ..Line::default()
            },
            depth,
        }
    }

    pub(super) fn text(&self, node: Node<'_>) -> &'s str {
        text_of(node, self.src)
    }

    /// Marks the line unreadable; the first reason is kept.
    pub(super) fn problem(&mut self, why: String) {
        self.line.unreadable.get_or_insert(why);
    }

    /// Counts one level of nesting; false (and the line unreadable) past the limit.
    pub(super) fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.problem("it nests too deeply to check".into());
            return false;
        }
        true
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Walks the statements in `nodes` as a nested line (`$(…)`, `<(…)`).
    pub(super) fn nested(&mut self, node: Node<'_>) {
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

    pub(super) fn statement(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        self.statement_inner(node);
        self.leave();
    }

    pub(super) fn statement_inner(&mut self, node: Node<'_>) {
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

    pub(super) fn children(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            self.statement(child);
        }
    }

    /// What can still be found in a part the parser could not read: statements, and runs of
    /// words taken as a command, for deny rules (the line is unreadable anyway).
    pub(super) fn salvage(&mut self, node: Node<'_>) {
        if !self.enter() {
            return;
        }
        self.salvage_inner(node);
        self.leave();
    }

    pub(super) fn salvage_inner(&mut self, node: Node<'_>) {
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

    pub(super) fn salvaged_command(&mut self, nodes: Vec<Node<'_>>) {
        let words = nodes
            .into_iter()
            .map(|n| self.word(&[n], Ctx::Argument))
            .collect();
        self.line.commands.push(SimpleCommand::of_words(words));
    }

    pub(super) fn redirected(&mut self, node: Node<'_>) {
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

    pub(super) fn function(&mut self, node: Node<'_>) {
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

    pub(super) fn for_loop(&mut self, node: Node<'_>) {
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

    pub(super) fn c_for_loop(&mut self, node: Node<'_>) {
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

    pub(super) fn case(&mut self, node: Node<'_>) {
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

pub(super) fn first_token<'t>(node: Node<'t>) -> Option<&'static str> {
    let first = node.child(0)?;
    match first.kind() {
        "((" => Some("(("),
        "[[" => Some("[["),
        "[" => Some("["),
        "{" => Some("{"),
        _ => None,
    }
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
