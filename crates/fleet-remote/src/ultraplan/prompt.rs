//! What the remote planning session is told, on top of its usual system prompt, and how the
//! person's prompt and a teleported plan are worded.

/// Appended to the remote session's system prompt (`AgentSpec::append_system_prompt`).
pub const PLANNING_INSTRUCTIONS: &str = "\
# Ultraplan: you are planning remotely

The person asked for a plan and went back to work in their own terminal; they will read your \
plan when it is ready, then approve it, reject it with feedback, or take it home to run \
themselves. You run in plan mode, in a fresh checkout of their repository (uncommitted files \
included).

## While you explore
- Stay read-only: read, search and list files, run read-only commands. Change nothing until \
the plan is approved; plan mode refuses edits anyway.
- For a broad question, start several Explore subagents in parallel, all in one reply (several \
Agent calls in the same message), each with a distinct area or question, then combine what \
they report. For a narrow question, look yourself.
- Ground the plan in what you saw: name the files, functions and tests involved.

## Submitting the plan
- End your exploration by calling ExitPlanMode with the full plan in Markdown as `plan`: the \
goal in a sentence, the steps in order (each naming the files it touches and what changes), \
the tests that prove it works, and the risks or open questions.
- The plan is all the person reads: make it complete on its own, not a summary of a \
conversation.
- If the request is too unclear to plan, say what you need to know in plain text and end your \
turn; the person's reply comes back to you.

## After the answer
- Rejected with feedback: revise the plan to address the feedback, explore more if needed, and \
call ExitPlanMode again with the whole revised plan.
- Approved: carry the plan out step by step in this checkout, run the tests it names, and end \
with a short summary of what changed. Your changes come back to the person as a git branch.
";

/// The remote session's first message: the person's prompt, without the `/ultraplan`
/// command word when it was typed as one.
pub fn task_prompt(prompt: &str) -> String {
    let trimmed = prompt.trim();
    match trimmed.get(..10) {
        Some(head) if head.eq_ignore_ascii_case("/ultraplan") => {
            let rest = &trimmed[10..];
            if rest.starts_with(char::is_whitespace) && !rest.trim().is_empty() {
                rest.trim_start().to_string()
            } else {
                trimmed.to_string()
            }
        }
        _ => trimmed.to_string(),
    }
}

/// A short description for the task list and `fleet remote status`: the prompt's first line,
/// cut to 60 characters.
pub fn description(prompt: &str) -> String {
    let first = prompt.lines().map(str::trim).find(|l| !l.is_empty());
    let first = first.unwrap_or("plan");
    let mut text: String = first.chars().take(60).collect();
    if first.chars().count() > 60 {
        text.push('…');
    }
    format!("ultraplan: {text}")
}

/// The prompt of the local session that runs a teleported plan.
pub fn teleported_prompt(plan: &str) -> String {
    format!(
        "A remote planning session (Ultraplan) explored this repository and produced the plan \
         below, and the person chose to carry it out here. Implement it step by step, run the \
         tests it names, and end with a short summary of what changed.\n\n\
         <plan>\n{}\n</plan>",
        plan.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slash_command_word_is_dropped_and_nothing_else() {
        assert_eq!(
            task_prompt("/ultraplan  migrate the store"),
            "migrate the store"
        );
        assert_eq!(task_prompt("/ULTRAPLAN x"), "x");
        assert_eq!(task_prompt("ultraplan the move"), "ultraplan the move");
        assert_eq!(task_prompt("/ultraplan"), "/ultraplan");
        assert_eq!(task_prompt("/ultraplanning"), "/ultraplanning");
    }

    #[test]
    fn descriptions_are_one_short_line() {
        assert_eq!(description("\n  fix auth\nmore"), "ultraplan: fix auth");
        let long = "é".repeat(70);
        assert_eq!(
            description(&long),
            format!("ultraplan: {}…", "é".repeat(60))
        );
    }

    #[test]
    fn the_instructions_say_what_the_design_asks() {
        for needed in [
            "read-only",
            "Explore subagents in parallel",
            "ExitPlanMode",
            "Markdown",
            "Approved: carry the plan out",
        ] {
            assert!(PLANNING_INSTRUCTIONS.contains(needed), "missing {needed:?}");
        }
    }
}
