//! Agent files (`.claude/agents/*.md`: loose YAML frontmatter and a prompt) and the
//! `--agents` JSON, as a repository or a flag hands them to fleet. Checks: no panic, and a
//! definition that loads has the name and prompt the parser promises.
#![no_main]

use fleet_runtime::definitions::{parse_agent_file, parse_command_line_agents, AgentSource};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/.claude/agents/fuzz.md");
    if let Ok((def, _warnings)) = parse_agent_file(text, path, AgentSource::Project(path.into())) {
        assert!(!def.name.is_empty(), "a loaded agent has a name");
        assert!(!def.prompt.is_empty(), "a loaded agent has a prompt");
    }
    let _ = parse_command_line_agents(text);
});
