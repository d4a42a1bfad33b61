//! The words of a compaction: what the model is asked to write, and how its summary is put in
//! front of the conversation that goes on.

/// Opens every compaction request; the fake model server's scenarios (and anyone reading a
/// request log) recognise the summary request by it.
pub const COMPACT_REQUEST_MARKER: &str = "CONTEXT CHECKPOINT";

/// Opens the message that replaces the compacted part of the conversation.
pub const SUMMARY_PREFIX: &str = "This session continues from an earlier conversation that was \
compacted to fit the context window. What happened before is summarised below; the turns after \
this message are the most recent ones, kept as they were.";

/// The request for a summary, added after the conversation it summarises. `focus` is what
/// the user asked the summary to keep in view (`/compact <focus>`, or a PreCompact hook's
/// instructions).
pub fn compaction_request(focus: Option<&str>) -> String {
    let mut text = format!(
        "{COMPACT_REQUEST_MARKER}: the conversation above is about to be replaced by a summary \
that you write now, because it no longer fits in your context window. After this, you will \
see only your summary and the last few turns, and you will carry on the work from there, so \
the summary must hold everything you need to continue without asking again.

Do not call any tools. Reply with the summary only, in plain text under these headings:

1. Request: what the user asked for, in their words where the wording matters, including \
every later change of mind or added requirement.
2. Decisions: what was decided and why, approaches tried and rejected, constraints the user \
or the code imposed.
3. Files and code: each file read, created or changed, with what it holds or what changed \
in it, and the exact snippets (signatures, config lines, error messages) that later work \
depends on.
4. Errors and fixes: problems met and how they were solved, or that they are still open.
5. In progress: what was being done when this checkpoint came, precisely enough to pick it \
up mid-step.
6. Next steps: what remains, in order, tied to the request. Leave out anything the user did \
not ask for."
    );
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        text.push_str("\n\nThe user asks the summary to pay particular attention to: ");
        text.push_str(focus);
    }
    text
}

/// The first message of the compacted conversation.
pub fn summary_message(summary: &str) -> String {
    format!(
        "{SUMMARY_PREFIX}\n\n<summary>\n{}\n</summary>",
        summary.trim()
    )
}

/// What the summary request says in place of turns it had to leave out to fit.
pub fn omitted_note(messages: usize) -> String {
    format!(
        "[The first {messages} messages of this conversation are left out here: they no longer \
fit in the context window.]"
    )
}

/// `/compact` or `/compact <focus>` as a prompt: the focus (possibly empty) when the prompt is
/// the command.
pub fn manual_command(prompt: &str) -> Option<&str> {
    let rest = prompt.trim().strip_prefix("/compact")?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        Some(rest.trim())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_takes_an_optional_focus_and_nothing_else_matches() {
        assert_eq!(manual_command("/compact"), Some(""));
        assert_eq!(
            manual_command("  /compact keep the API notes "),
            Some("keep the API notes")
        );
        assert_eq!(manual_command("/compaction"), None);
        assert_eq!(manual_command("please /compact"), None);
    }

    #[test]
    fn the_request_names_every_section_and_the_focus() {
        let text = compaction_request(Some("the migration"));
        for heading in [
            "Request:",
            "Decisions:",
            "Files and code:",
            "In progress:",
            "Next steps:",
        ] {
            assert!(text.contains(heading), "{heading}");
        }
        assert!(text.ends_with("the migration"));
        assert!(!compaction_request(None).contains("particular attention"));
    }
}
