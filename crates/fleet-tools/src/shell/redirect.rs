//! Redirections: `>`, `>>`, `<`, `&>`, `>&`, here-documents and here-strings, and where a
//! here-document ends.

use super::model::{Redirect, RedirectOp, Word};
use super::parse::Builder;
use super::word::Ctx;
use tree_sitter::Node;

impl Builder<'_> {
    /// The redirections a redirect node stands for (a here-document node may hold more).
    pub(super) fn redirect(&mut self, node: Node<'_>) -> Vec<Redirect> {
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
    pub(super) fn heredoc_end(&mut self, start: &str, body: &str, strip_tabs: bool) {
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

pub(super) fn is_redirect_kind(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

/// A file redirect with more than one destination (`> f x`).
pub(super) fn extra_destinations(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let count = node
        .children(&mut cursor)
        .enumerate()
        .filter(|(i, _)| node.field_name_for_child(*i as u32) == Some("destination"))
        .count();
    count > 1
}
