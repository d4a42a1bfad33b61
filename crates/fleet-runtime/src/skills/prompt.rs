//! What the system prompt says about skills: the list the model chooses from, and the full
//! instructions of the skills an agent definition preloads.

use super::{Skill, SkillSet, SKILL_TOOL};
use crate::definitions::{AgentCatalog, LoadWarning};

/// A description longer than this is cut: the listing is there to choose by, not to read.
pub const MAX_DESCRIPTION_CHARS: usize = 250;
/// The whole listing stays under this many characters however many skills are installed;
/// skills past it are counted, and can still be loaded by name.
pub const MAX_LISTING_CHARS: usize = 8_000;

/// The system-prompt block listing every skill by name and description, or `None` when there
/// are no skills. Always the same bytes for the same skills, so the prompt cache holds.
pub fn listing(skills: &SkillSet) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut out = format!(
        "<skills>\nSkills are instructions (and often scripts) for particular tasks. When a task \
         matches a skill's description, call the {SKILL_TOOL} tool with its name before you \
         start, then follow what it returns.\n"
    );
    let mut left_out = 0;
    for skill in skills.skills() {
        let line = format!("- {}: {}\n", skill.name, cut(&skill.description));
        if left_out > 0 || out.len() + line.len() > MAX_LISTING_CHARS {
            left_out += 1;
        } else {
            out.push_str(&line);
        }
    }
    if left_out > 0 {
        out.push_str(&format!(
            "(… and {left_out} more skills not listed here for space)\n"
        ));
    }
    out.push_str("</skills>");
    Some(out)
}

/// The block an agent's prompt gets for the skills its definition names, in its order, and
/// the names that matched no skill.
pub fn preload<'a>(names: &'a [String], skills: &SkillSet) -> (Option<String>, Vec<&'a str>) {
    let mut parts = Vec::new();
    let mut unknown = Vec::new();
    for name in names {
        match skills.get(name) {
            Some(skill) => parts.push(render_preloaded(skill)),
            None => unknown.push(name.as_str()),
        }
    }
    let block = (!parts.is_empty()).then(|| {
        format!(
            "These skills are loaded for you; follow them when they apply.\n\n{}",
            parts.join("\n\n")
        )
    });
    (block, unknown)
}

fn render_preloaded(skill: &Skill) -> String {
    format!(
        "<skill name=\"{}\" folder=\"{}\">\n{}\n</skill>",
        skill.name,
        skill.dir.display(),
        skill.body
    )
}

/// A warning naming the agent file for every `skills` entry that matches no skill (the
/// agent still loads; the name is left out of its prompt).
pub fn unknown_skill_warnings(agents: &AgentCatalog, skills: &SkillSet) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    for def in agents.agents() {
        for name in def.skills.iter().filter(|n| skills.get(n).is_none()) {
            let known = if skills.is_empty() {
                "no skills are installed".to_string()
            } else {
                format!("the skills are {}", skills.names().join(", "))
            };
            warnings.push(LoadWarning {
                path: def.source.path().map(std::path::Path::to_path_buf),
                line: None,
                message: format!(
                    "agent {:?} preloads skill {name:?}, which does not exist ({known}); \
                     it is left out",
                    def.name
                ),
            });
        }
    }
    warnings
}

fn cut(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= MAX_DESCRIPTION_CHARS {
        return one_line;
    }
    let kept: String = one_line.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    format!("{kept}…")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::skills::SkillScope;
    use std::path::PathBuf;

    fn skill(name: &str, description: &str) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            allowed_tools: Vec::new(),
            model: None,
            body: format!("{name} body"),
            dir: PathBuf::from(format!("/skills/{name}")),
            scope: SkillScope::Project,
        }
    }

    #[test]
    fn the_listing_caps_descriptions_and_its_own_size() {
        let long = "word ".repeat(200);
        let many: Vec<Skill> = (0..200).map(|i| skill(&format!("s{i}"), &long)).collect();
        let text = listing(&SkillSet::from_skills(many)).unwrap();
        assert!(text.len() <= MAX_LISTING_CHARS + 200, "{}", text.len());
        assert!(text.contains("more skills not listed"));
        let first = text.lines().find(|l| l.starts_with("- s0:")).unwrap();
        assert!(
            first.chars().count() <= MAX_DESCRIPTION_CHARS + 6,
            "{first}"
        );
        assert!(listing(&SkillSet::default()).is_none());
    }

    #[test]
    fn preload_keeps_order_and_reports_unknown_names() {
        let set = SkillSet::from_skills([skill("a", "A"), skill("b", "B")]);
        let names = vec!["b".to_string(), "zzz".to_string(), "a".to_string()];
        let (block, unknown) = preload(&names, &set);
        let block = block.unwrap();
        assert!(block.find("b body").unwrap() < block.find("a body").unwrap());
        assert!(block.contains("folder=\"/skills/a\""));
        assert_eq!(unknown, ["zzz"]);
    }
}
