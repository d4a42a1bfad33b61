//! `--json-schema`: the main agent gets the StructuredOutput tool and is told to answer
//! through it (see `fleet_runtime::structured`).

use crate::error::{Result, SessionError};
use fleet_runtime::structured::{StructuredOutput, SYSTEM_NOTE};
use fleet_runtime::AgentConfig;

/// Equips the main agent for structured output when a schema is given. A schema that is not
/// JSON, or not one fleet can apply, is an error naming the flag.
pub(super) fn equip(schema: Option<&str>, config: &mut AgentConfig) -> Result<()> {
    let Some(text) = schema else {
        return Ok(());
    };
    let schema: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| SessionError::step("--json-schema: the schema is not valid JSON", e))?;
    let structured = StructuredOutput::new(schema).map_err(|err| {
        SessionError::invalid(format!("--json-schema: the schema cannot be used at {err}"))
    })?;
    config.tools.pool.insert(structured.tool());
    config.context.system.push(SYSTEM_NOTE.to_string());
    config.stop.structured = Some(structured);
    Ok(())
}
