//! One `SKILL.md`: its frontmatter (`name`, `description`, `allowed-tools`, `model`) and body.
//!
//! The frontmatter is read by the same forgiving reader as agent files, so a skill written
//! for Claude Code (often not strict YAML) loads unchanged. Fields fleet does not use
//! (`argument-hint`, `license`, …) are ignored without a word: skills carry many of them.

use super::{Skill, SkillScope};
use crate::definitions::{read_fields, scalar_text, split, tool_tokens, LoadWarning};
use std::path::Path;

/// Reads `dir/SKILL.md`. `folder_name` is the name used when the frontmatter has none.
/// `Err` is a warning naming the file (and line) saying why the skill is skipped; `Ok` may
/// carry warnings about fields that were ignored.
pub(crate) fn parse_skill(
    text: &str,
    file: &Path,
    dir: &Path,
    scope: SkillScope,
) -> Result<(Skill, Vec<LoadWarning>), LoadWarning> {
    let warn = |line: Option<usize>, message: String| LoadWarning {
        path: Some(file.to_path_buf()),
        line,
        message,
    };
    let parts = split(text).map_err(|err| {
        warn(
            err.line,
            "a SKILL.md starts with a `---` line, then `name:` and `description:`, then `---`, \
             then the instructions; skill skipped"
                .into(),
        )
    })?;
    let mut name = None;
    let mut description = None;
    let mut allowed_tools = Vec::new();
    let mut model = None;
    let mut warnings = Vec::new();
    for field in read_fields(&parts.lines) {
        let value = scalar_text(&field.value).map(|t| t.trim().to_string());
        match field.key.as_str() {
            "name" => name = value.filter(|v| !v.is_empty()),
            "description" => description = value.filter(|v| !v.is_empty()),
            "model" => model = value.filter(|v| !v.is_empty() && v != "inherit"),
            "allowed-tools" | "allowed_tools" | "allowedTools" => match tool_tokens(&field.value) {
                Some(tools) => allowed_tools = tools,
                None => warnings.push(warn(
                    field.line,
                    "allowed-tools must be a list of tool names; ignored".into(),
                )),
            },
            _ => {}
        }
    }
    let folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.unwrap_or(folder_name);
    if !valid_name(&name) {
        return Err(warn(
            Some(parts.opening_line),
            format!(
                "skill name {name:?} must be letters, digits, `-`, `_`, `.` or `:`; skill skipped"
            ),
        ));
    }
    let Some(description) = description else {
        return Err(warn(
            Some(parts.opening_line),
            "no `description:`; the model picks skills by their description, so write one \
             saying when to use it; skill skipped"
                .into(),
        ));
    };
    if parts.body.is_empty() {
        return Err(warn(
            Some(parts.closing_line),
            "the skill has no instructions below its frontmatter; skill skipped".into(),
        ));
    }
    Ok((
        Skill {
            name,
            description,
            allowed_tools,
            model,
            body: parts.body,
            dir: dir.to_path_buf(),
            scope,
        },
        warnings,
    ))
}

/// Names the model can type back exactly: no spaces, quotes or slashes.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(Skill, Vec<LoadWarning>), LoadWarning> {
        parse_skill(
            text,
            Path::new("/s/pdf/SKILL.md"),
            Path::new("/s/pdf"),
            SkillScope::Project,
        )
    }

    #[test]
    fn reads_fields_and_body() {
        let (skill, warnings) = parse(
            "---\nname: pdf-tools\ndescription: Use for PDFs: fill forms\nallowed-tools: Read, \
             Bash(python3 *)\nmodel: haiku\nlicense: MIT\n---\n\n# PDF\nRun scripts/fill.py\n",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(skill.name, "pdf-tools");
        assert_eq!(skill.description, "Use for PDFs: fill forms");
        assert_eq!(skill.allowed_tools, ["Read", "Bash(python3 *)"]);
        assert_eq!(skill.model.as_deref(), Some("haiku"));
        assert_eq!(skill.body, "# PDF\nRun scripts/fill.py");
    }

    #[test]
    fn the_folder_names_a_skill_without_a_name() {
        let (skill, _) = parse("---\ndescription: d\n---\nbody").unwrap();
        assert_eq!(skill.name, "pdf");
    }

    #[test]
    fn problems_name_the_file_and_say_why() {
        let missing = parse("---\nname: x\n---\nbody").unwrap_err();
        assert_eq!(missing.path.as_deref(), Some(Path::new("/s/pdf/SKILL.md")));
        assert!(missing.message.contains("description"), "{missing}");
        let no_front = parse("# just text").unwrap_err();
        assert!(no_front.message.contains("---"), "{no_front}");
        let empty = parse("---\ndescription: d\n---\n").unwrap_err();
        assert_eq!(empty.line, Some(3));
        let bad_name = parse("---\nname: a b\ndescription: d\n---\nx").unwrap_err();
        assert!(bad_name.message.contains("\"a b\""), "{bad_name}");
    }
}
