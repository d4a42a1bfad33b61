//! Asking the person at the terminal before a call that needs approval. Used only when both
//! stdin and stderr are terminals and stdin carries no input of its own, so scripts, pipes and
//! CI never wait for an answer that cannot come.

use fleet_runtime::approval::{ApprovalFuture, ApprovalRequest, Approver};
use fleet_tools::Access;
use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
pub struct TerminalApprover {
    /// Rules the person allowed for the rest of the session ("always").
    always: Mutex<HashSet<String>>,
    /// One question at a time, even when read-only calls run together.
    turn: tokio::sync::Mutex<()>,
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
        attended.then(|| Arc::new(Self::default()))
    }

    fn allowed_always(&self, rule: &str) -> bool {
        self.always.lock().is_ok_and(|set| set.contains(rule))
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        // One exact rule per part of the call; none when no rule can cover it exactly.
        let rules = request.decision.suggested_rules();
        let question = question(&request);
        Box::pin(async move {
            let _turn = self.turn.lock().await;
            if !rules.is_empty() && rules.iter().all(|rule| self.allowed_always(rule)) {
                return true;
            }
            let shown_rules = rules.clone();
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
        })
    }
}

/// "Bash wants to run `cargo test`", in one line.
fn question(request: &ApprovalRequest<'_>) -> String {
    let who = match request.agent_id {
        "main" => String::new(),
        other => format!(" (agent {other})"),
    };
    let what = match &request.decision.access {
        Access::Command(command) => format!("run `{}`", one_line(command)),
        Access::Write(path) => format!("write {}", path.display()),
        Access::Read(path) => format!("read {}", path.display()),
        Access::Other => format!("run with {}", one_line(&request.input.to_string())),
    };
    format!("{}{who} wants to {what}", request.tool)
}

fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
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
            write!(output, "\n? {question}\n  allow once? [y]es, [N]o: ")?;
        } else {
            write!(
                output,
                "\n? {question}\n  allow? [y]es, [a]lways for {always} this session, [N]o: "
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
            "Bash wants to run `ls`",
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
        assert!(shown.contains("Bash wants to run `ls`") && shown.contains("`Bash(ls)`"));
    }

    #[test]
    fn always_is_not_offered_when_no_rule_covers_the_call() {
        let mut out = Vec::new();
        let got = ask(
            &mut "a\ny\n".as_bytes(),
            &mut out,
            "Bash wants to run `ls $x`",
            &[],
        )
        .unwrap();
        assert_eq!(got, Answer::Yes, "`a` is not an answer here");
        let shown = String::from_utf8(out).unwrap();
        assert!(!shown.contains("[a]lways"), "{shown}");
        assert!(shown.contains("please answer"), "{shown}");
    }

    #[test]
    fn long_commands_are_shown_on_one_short_line() {
        let shown = one_line(&format!("echo {}\nsecond", "x".repeat(300)));
        assert!(!shown.contains('\n'));
        assert!(shown.chars().count() <= 161);
        assert!(shown.ends_with('…'));
    }
}
