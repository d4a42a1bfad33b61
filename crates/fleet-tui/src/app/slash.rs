//! Slash commands: the built-in ones act here or become a command for the driver; a custom
//! command's file becomes the prompt.

use super::state::{App, Overlay};
use crate::input::commands::{self, CommandSource};
use crate::panes::{agent_form::AgentForm, cost, help};
use crate::port::{NoticeLevel, RuleEdit, UiCommand};
use fleet_protocol::PermissionMode;

impl App {
    pub(super) fn slash(&mut self, name: &str, args: &str) {
        let arg = (!args.is_empty()).then(|| args.to_string());
        match name {
            "help" | "?" => {
                let lines = help::lines(&self.commands, &self.theme);
                self.transcript.push_lines(lines);
            }
            "clear" | "reset" | "new" => self.send(UiCommand::Clear),
            "compact" => self.send(UiCommand::Compact(arg)),
            "resume" => self.send(UiCommand::Resume(arg)),
            "model" => self.send(UiCommand::SetModel(arg)),
            "agents" if args == "new" || args == "create" => {
                self.overlay = Some(Overlay::AgentForm(AgentForm::new()));
            }
            "agents" => self.send(UiCommand::ListAgents),
            "tasks" | "bashes" => self.open_tasks(),
            "permissions" | "allowed-tools" => self.permissions(args),
            "cost" | "usage" => {
                let agents = self.transcript.agents();
                let lines = cost::lines(&agents, self.tree.as_ref(), &self.theme);
                self.transcript.push_lines(lines);
            }
            "mcp" => self.send(UiCommand::McpStatus),
            "exit" | "quit" => self.quit(),
            // The driver launches a remote planning session for it (see `fleet ultraplan`).
            "ultraplan" if !args.trim().is_empty() => self.submit(format!("/ultraplan {args}")),
            "ultraplan" => self.usage_error("/ultraplan <what to plan>"),
            _ => self.custom_command(name, args),
        }
    }

    /// `/permissions` lists; `/permissions allow|deny|ask <rule>` adds; `/permissions remove
    /// <kind> <rule>` removes; `/permissions mode <mode>` switches the mode.
    fn permissions(&mut self, args: &str) {
        let mut words = args.splitn(2, char::is_whitespace);
        let first = words.next().unwrap_or_default();
        let rest = words.next().unwrap_or_default().trim();
        match first {
            "" | "list" => self.send(UiCommand::EditRule(None)),
            "mode" if !rest.is_empty() => self.set_mode(rest),
            "allow" | "deny" | "ask" if !rest.is_empty() => {
                self.send(UiCommand::EditRule(Some(RuleEdit {
                    kind: first.to_string(),
                    rule: rest.to_string(),
                    remove: false,
                })))
            }
            "remove" => {
                let (kind, rule) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if matches!(kind, "allow" | "deny" | "ask") && !rule.trim().is_empty() {
                    self.send(UiCommand::EditRule(Some(RuleEdit {
                        kind: kind.to_string(),
                        rule: rule.trim().to_string(),
                        remove: true,
                    })));
                } else {
                    self.usage_error("/permissions remove allow|deny|ask <rule>");
                }
            }
            _ => self.usage_error(
                "/permissions [allow|deny|ask <rule> | remove <kind> <rule> | mode <mode>]",
            ),
        }
    }

    /// `/permissions mode <mode>`: a name that is no mode is refused here, naming the valid
    /// ones, rather than sent to the driver as text.
    fn set_mode(&mut self, name: &str) {
        match name.parse::<PermissionMode>() {
            Ok(mode) => self.send(UiCommand::SetPermissionMode(mode)),
            Err(err) => self.transcript.push_notice(NoticeLevel::Error, &err),
        }
    }

    fn custom_command(&mut self, name: &str, args: &str) {
        let found = self.custom.iter().find(|c| c.name == name).cloned();
        let Some(command) = found else {
            self.transcript.push_notice(
                NoticeLevel::Error,
                &format!("Unknown command /{name} — /help lists the commands"),
            );
            return;
        };
        let CommandSource::Custom(path) = &command.source else {
            return;
        };
        match commands::expand(path, args) {
            Ok(prompt) if !prompt.trim().is_empty() => self.submit(prompt),
            Ok(_) => self.transcript.push_notice(
                NoticeLevel::Error,
                &format!("/{name}: {} is empty", path.display()),
            ),
            Err(err) => self
                .transcript
                .push_notice(NoticeLevel::Error, &format!("/{name}: {err}")),
        }
    }

    fn usage_error(&mut self, usage: &str) {
        self.transcript
            .push_notice(NoticeLevel::Warning, &format!("Usage: {usage}"));
    }
}
