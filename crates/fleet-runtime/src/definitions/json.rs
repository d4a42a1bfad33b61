//! `--agents '<json>'`: definitions given on the command line. (Stub.)

use super::parse::ParseError;
use super::AgentDefinition;

pub fn parse_command_line_agents(_json: &str) -> Result<Vec<AgentDefinition>, ParseError> {
    Ok(Vec::new())
}
