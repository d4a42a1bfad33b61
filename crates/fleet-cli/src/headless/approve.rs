//! Asking the person at the terminal before a call that needs approval. Used only when both
//! stdin and stderr are terminals and stdin carries no input of its own, so scripts, pipes and
//! CI never wait for an answer that cannot come.

use super::approve_diff;
use crate::visible::{has_hidden_controls, visible_line};
use fleet_runtime::approval::{ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::Access;
use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};
use unicode_width::UnicodeWidthChar;

#[derive(Debug, Default)]
pub struct TerminalApprover {
    /// Rules the person allowed for the rest of the session ("always").
    always: Mutex<HashSet<String>>,
    /// One question at a time, even when read-only calls run together.
    turn: tokio::sync::Mutex<()>,
    /// Whether a proposed change's diff is coloured (`NO_COLOR` unset).
    colour: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Yes,
    Always,
    No,
}

impl TerminalApprover {
    /// An approver when a person is there to answer: stdin and stderr are terminals and
    /// stdin is not needed for the prompt.
    pub fn if_attended(stdin_in_use: bool) -> Option<Arc<Self>> {
        let attended =
            !stdin_in_use && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        attended.then(|| {
            Arc::new(Self {
                colour: approve_diff::colour_allowed(),
                ..Self::default()
            })
        })
    }

    fn allowed_always(&self, rule: &str) -> bool {
        self.always.lock().is_ok_and(|set| set.contains(rule))
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        // One exact rule per part of the call; none when no rule can cover it exactly.
        let rules = request.decision.suggested_rules();
        let question = question(&request, terminal_width(), self.colour);
        Box::pin(async move { self.answer(rules, question).await.into() })
    }
}

impl TerminalApprover {
    /// Yes or no from the person (or from an "always" they gave before).
    async fn answer(&self, rules: Vec<String>, question: String) -> bool {
        let _turn = self.turn.lock().await;
        if !rules.is_empty() && rules.iter().all(|rule| self.allowed_always(rule)) {
            return true;
        }
        // Rules quote the command: shown, never obeyed by the terminal.
        let shown_rules: Vec<String> = rules.iter().map(|r| visible_line(r).into_owned()).collect();
        let answer = tokio::task::spawn_blocking(move || {
            let stdin = std::io::stdin();
            ask(
                &mut stdin.lock(),
                &mut std::io::stderr(),
                &question,
                &shown_rules,
            )
        })
        .await;
        match answer {
            Ok(Ok(Answer::Yes)) => true,
            Ok(Ok(Answer::Always)) => {
                if let Ok(mut set) = self.always.lock() {
                    set.extend(rules);
                }
                true
            }
            _ => false,
        }
    }
}

/// The question, whole: "? Bash wants to run:" and the command below it, every line behind a
/// gutter and wrapped to the terminal, control characters made visible. Nothing is cut, so no
/// tail of a long command runs unseen, and nothing in it can move the cursor, clear the line
/// or start a line that looks like fleet's own. A Write or Edit shows its path and then the
/// diff it would make ([`approve_diff`]), with what it adds up to in the first line.
fn question(request: &ApprovalRequest<'_>, width: usize, colour: bool) -> String {
    let who = match request.agent_id {
        "main" => String::new(),
        other => format!(" (agent {})", visible_line(other)),
    };
    let (what, body) = match &request.decision.access {
        Access::Command(command) => ("run", command.clone()),
        Access::Write(path) => ("write", path.display().to_string()),
        Access::Read(path) => ("read", path.display().to_string()),
        Access::Other => ("run with", request.input.to_string()),
    };
    let summary = request
        .change
        .map(|change| format!(" ({})", change.summary()))
        .unwrap_or_default();
    let mut out = format!(
        "? {}{who} wants to {what}{summary}:\n",
        visible_line(request.tool)
    );
    out.push_str(&block(&body, width));
    if let Some(change) = request.change {
        out.push_str(&approve_diff::rows(change, width, colour));
    }
    if has_hidden_controls(&body) || body.contains('\t') {
        out.push_str(
            "  ! it holds control characters, shown as \\e, \\r, \\t, \\xNN or \\u{…}: what \
             runs is not what plain text would show\n",
        );
    }
    out
}

/// What every shown line of the command starts with, so none can pass for fleet's own.
pub(crate) const GUTTER: &str = "  │ ";

/// `text` as gutter lines of at most `width` columns in all: one per line of the text, long
/// lines wrapped, tabs and control characters shown as escapes.
fn block(text: &str, width: usize) -> String {
    let room = width.saturating_sub(GUTTER.chars().count()).max(20);
    let mut out = String::new();
    for line in text.trim_end_matches('\n').split('\n') {
        let shown = visible_line(line);
        let mut row = String::new();
        let mut used = 0;
        for c in shown.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > room {
                out.push_str(GUTTER);
                out.push_str(&row);
                out.push('\n');
                row.clear();
                used = 0;
            }
            row.push(c);
            used += w;
        }
        out.push_str(GUTTER);
        out.push_str(&row);
        out.push('\n');
    }
    out
}

/// Columns of the terminal on stderr, where the question is asked; 80 when unknown.
fn terminal_width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|&cols| cols >= 20)
        .unwrap_or(80)
}

/// Asks until the answer is understood; end of input is a no. "Always" is offered only when
/// `rules` can cover the call exactly.
fn ask(
    input: &mut impl BufRead,
    output: &mut impl Write,
    question: &str,
    rules: &[String],
) -> std::io::Result<Answer> {
    let always = rules
        .iter()
        .map(|rule| format!("`{rule}`"))
        .collect::<Vec<_>>()
        .join(", ");
    loop {
        if rules.is_empty() {
            write!(output, "\n{question}  allow once? [y]es, [N]o: ")?;
        } else {
            write!(
                output,
                "\n{question}  allow? [y]es, [a]lways for {always} this session, [N]o: "
            )?;
        }
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(Answer::No);
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(Answer::Yes),
            "a" | "always" if !rules.is_empty() => return Ok(Answer::Always),
            "" | "n" | "no" => return Ok(Answer::No),
            _ if rules.is_empty() => writeln!(output, "  please answer y or n")?,
            _ => writeln!(output, "  please answer y, a or n")?,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn answer(typed: &str) -> (Answer, String) {
        let mut out = Vec::new();
        let got = ask(
            &mut typed.as_bytes(),
            &mut out,
            "? Bash wants to run:\n  │ ls\n",
            &["Bash(ls)".to_string()],
        )
        .unwrap();
        (got, String::from_utf8(out).unwrap())
    }

    #[test]
    fn answers_are_read_and_unclear_ones_asked_again() {
        assert_eq!(answer("y\n").0, Answer::Yes);
        assert_eq!(answer("Always\n").0, Answer::Always);
        assert_eq!(answer("\n").0, Answer::No, "enter means no");
        assert_eq!(answer("").0, Answer::No, "end of input means no");
        let (got, shown) = answer("maybe\nyes\n");
        assert_eq!(got, Answer::Yes);
        assert_eq!(shown.matches("allow?").count(), 2);
        assert!(shown.contains("please answer"));
        assert!(shown.contains("Bash wants to run:\n  │ ls\n") && shown.contains("`Bash(ls)`"));
    }

    #[test]
    fn always_is_not_offered_when_no_rule_covers_the_call() {
        let mut out = Vec::new();
        let got = ask(
            &mut "a\ny\n".as_bytes(),
            &mut out,
            "? Bash wants to run:\n  │ ls $x\n",
            &[],
        )
        .unwrap();
        assert_eq!(got, Answer::Yes, "`a` is not an answer here");
        let shown = String::from_utf8(out).unwrap();
        assert!(!shown.contains("[a]lways"), "{shown}");
        assert!(shown.contains("please answer"), "{shown}");
    }

    #[test]
    fn long_commands_wrap_whole_behind_the_gutter() {
        let command = format!("echo {}END\nsecond", "x".repeat(300));
        let shown = block(&command, 80);
        let rows: Vec<&str> = shown.lines().collect();
        assert!(rows.iter().all(|r| r.starts_with(GUTTER)), "{shown}");
        assert!(rows.iter().all(|r| r.chars().count() <= 80), "{shown}");
        let joined: String = rows.iter().map(|r| &r[GUTTER.len()..]).collect();
        assert_eq!(joined, command.replace('\n', ""));
        assert_eq!(rows.last(), Some(&"  │ second"));
    }

    #[test]
    fn control_characters_cannot_rewrite_the_line() {
        let shown = block("ls #\u{1b}[2K\u{1b}[G? Bash wants to run 'ls -la'\r\tx", 80);
        assert_eq!(
            shown,
            "  │ ls #\\e[2K\\e[G? Bash wants to run 'ls -la'\\r\\tx\n"
        );
    }
}
