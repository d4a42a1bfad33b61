//! The Grep tool (stub, to be written).

use crate::{Access, ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Input {
    pub path: String,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct GrepTool;

impl TypedTool for GrepTool {
    type Input = Input;
    const NAME: &'static str = "Grep";
    const READ_ONLY: bool = true;

    fn description(&self) -> String {
        "Grep (not yet written)".into()
    }

    fn access(&self, _input: &Input, _ctx: &ToolContext) -> Access {
        Access::Other
    }

    async fn run(&self, _input: Input, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::failed("not yet written"))
    }
}
