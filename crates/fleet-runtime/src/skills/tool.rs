//! The `Skill` tool: the model names a skill and gets its instructions back, with the folder
//! its scripts and files are in. The input is Claude Code's (`skill`, optional `args`).

use super::SkillSet;
use fleet_tools::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// The tool's name, as Claude Code spells it.
pub const SKILL_TOOL: &str = "Skill";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name, as listed in the system prompt (e.g. "pdf").
    pub skill: String,
    /// Optional arguments for the skill; they replace `$ARGUMENTS` in its instructions.
    #[serde(default)]
    pub args: Option<String>,
}

/// Loads skills by name. Read-only: it reads files fleet already found at startup and changes
/// nothing, so it never needs permission.
#[derive(Debug, Clone)]
pub struct SkillTool {
    skills: Arc<SkillSet>,
}

impl SkillTool {
    pub fn new(skills: Arc<SkillSet>) -> Self {
        Self { skills }
    }
}

impl TypedTool for SkillTool {
    type Input = SkillInput;
    const NAME: &'static str = SKILL_TOOL;
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Loads a skill: instructions, and often scripts, for a particular kind of task. The \
         skills and what each is for are listed in the system prompt. When a task matches a \
         skill, call this first with the skill's name (and any arguments), then follow the \
         instructions it returns; files the instructions mention are in the skill's folder, \
         which the result names."
            .into()
    }

    fn access(&self, _input: &SkillInput, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, input: SkillInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.skills.get(&input.skill) else {
            let known = if self.skills.is_empty() {
                "no skills are installed".to_string()
            } else {
                format!("the skills are: {}", self.skills.names().join(", "))
            };
            return Err(ToolError::bad_value(
                "skill",
                format!("No skill named {:?}; {known}.", input.skill),
            ));
        };
        let args = input.args.as_deref().map(str::trim).unwrap_or_default();
        let mut body = skill.body.clone();
        if body.contains("$ARGUMENTS") {
            body = body.replace("$ARGUMENTS", args);
        } else if !args.is_empty() {
            body.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        let mut text = format!(
            "Skill {:?} loaded. Its folder is {}: paths in these instructions are relative to \
             it (read its files with Read, run its scripts with Bash).\n",
            skill.name,
            skill.dir.display()
        );
        let granted = match self.skills.grants(skill) {
            Ok(granted) => granted,
            Err(why) => {
                text.push_str(&format!(
                    "The skill lists these tools: {}; they were not granted, because {why}. \
                     Calls to them go through the usual permission check.\n",
                    skill.allowed_tools.join(", ")
                ));
                Vec::new()
            }
        };
        if !granted.is_empty() {
            text.push_str(&format!(
                "For the rest of this run these run without asking (a deny rule still \
                 refuses them): {}.\n",
                granted.join(", ")
            ));
        }
        if let Some(model) = &skill.model {
            text.push_str(&format!(
                "The skill runs on model {model}: the next requests of this run use it.\n"
            ));
        }
        text.push_str(&format!(
            "\n<skill name=\"{}\">\n{body}\n</skill>",
            skill.name
        ));
        // `granted_tools` and `model` are what the agent loop applies once the call is
        // answered (see `active.rs`); only this tool writes them.
        Ok(ToolOutput::text(text).with_structured(json!({
            "skill": skill.name,
            "folder": skill.dir.display().to_string(),
            "allowed_tools": skill.allowed_tools,
            "granted_tools": granted,
            "model": skill.model,
            "scope": skill.scope.label(),
        })))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::skills::{Skill, SkillScope};
    use fleet_tools::{Tool, Workspace};
    use std::path::PathBuf;

    fn tool() -> SkillTool {
        SkillTool::new(Arc::new(SkillSet::from_skills([Skill {
            name: "greet".into(),
            description: "d".into(),
            allowed_tools: vec!["Bash(python3 *)".into()],
            model: None,
            body: "Say hello to $ARGUMENTS using hello.py".into(),
            dir: PathBuf::from("/skills/greet"),
            scope: SkillScope::User,
        }])))
    }

    fn ctx() -> ToolContext {
        ToolContext::new(PathBuf::from("/"), Arc::new(Workspace::new("/")))
    }

    #[tokio::test]
    async fn returns_the_body_with_its_folder_and_arguments() {
        let out = Tool::call(&tool(), json!({"skill": "greet", "args": "Ada"}), &ctx())
            .await
            .unwrap();
        assert!(out.content.contains("Say hello to Ada using hello.py"));
        assert!(out.content.contains("Its folder is /skills/greet"));
        assert!(out.content.contains("Bash(python3 *)"));
        // A user skill's tools are granted.
        let granted = &out.structured.as_ref().unwrap()["granted_tools"];
        assert_eq!(granted, &json!(["Bash(python3 *)"]));
    }

    #[tokio::test]
    async fn an_unknown_skill_is_an_error_naming_the_known_ones() {
        let err = Tool::call(&tool(), json!({"skill": "nope"}), &ctx())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("greet"), "{err}");
    }
}
