//! What the main agent's context holds, in the shape of the SDK's `get_context_usage` answer
//! (TypeScript `SDKControlGetContextUsageResponse`): rows by category, totals against the
//! model's window, a 10×10 grid of squares, and the last reply's usage.
//!
//! The total is the API's own figure where there is one (the last reply's usage, plus an
//! estimate of what was added since); the rows are estimates (a quarter of the JSON bytes,
//! as [`crate::compact`] estimates), with the messages row taking whatever the real total
//! leaves after the system prompt and tools.

use fleet_protocol::Usage;
use serde::Serialize;

/// The figures the agent gathers after each reply, turned into a [`ContextUsage`].
#[derive(Debug, Clone, Default)]
pub struct ContextFigures {
    pub model: String,
    /// The model's window.
    pub context_window: u64,
    /// Where automatic compaction starts.
    pub compact_threshold: u64,
    pub auto_compact: bool,
    pub system_prompt: u64,
    /// Built-in tools' definitions.
    pub tools: u64,
    /// MCP tools' definitions, one by one.
    pub mcp_tools: Vec<McpToolUsage>,
    /// The conversation, estimated.
    pub messages: u64,
    /// The size of the next request: the API's figure plus estimates when a reply gave one,
    /// else all estimated.
    pub total: u64,
    pub breakdown: MessageBreakdown,
    /// The last reply's usage, when there was one.
    pub api_usage: Option<ApiUsage>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub categories: Vec<ContextCategory>,
    pub total_tokens: u64,
    pub max_tokens: u64,
    pub raw_max_tokens: u64,
    pub percentage: u64,
    pub grid_rows: Vec<Vec<GridSquare>>,
    pub model: String,
    /// Instruction files are part of fleet's system prompt, so they are counted in its row.
    pub memory_files: Vec<serde_json::Value>,
    pub mcp_tools: Vec<McpToolUsage>,
    pub agents: Vec<serde_json::Value>,
    pub auto_compact_threshold: u64,
    pub is_auto_compact_enabled: bool,
    pub message_breakdown: MessageBreakdown,
    pub api_usage: Option<ApiUsage>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCategory {
    /// `system_prompt`, `system_tools`, `mcp_tools`, `messages`, `autocompact_buffer`,
    /// `free_space`.
    pub id: &'static str,
    pub name: &'static str,
    pub tokens: u64,
    pub color: &'static str,
    /// `used`, `buffer` or `free`.
    pub kind: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GridSquare {
    pub color: &'static str,
    pub is_filled: bool,
    pub category_name: &'static str,
    pub tokens: u64,
    pub percentage: u64,
    pub square_fullness: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolUsage {
    pub name: String,
    pub server_name: String,
    pub tokens: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageBreakdown {
    pub tool_call_tokens: u64,
    pub tool_result_tokens: u64,
    pub attachment_tokens: u64,
    pub assistant_message_tokens: u64,
    pub user_message_tokens: u64,
    pub redirected_context_tokens: u64,
    pub unattributed_tokens: u64,
    pub tool_calls_by_type: Vec<ToolUsageByType>,
    pub attachments_by_type: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUsageByType {
    pub name: String,
    pub call_tokens: u64,
    pub result_tokens: u64,
}

/// The last reply's usage, as the API reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl From<&Usage> for ApiUsage {
    fn from(usage: &Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation(),
            cache_read_input_tokens: usage.cache_read(),
        }
    }
}

/// Squares in the grid: ten rows of ten, one percent of the window each.
const GRID_SIDE: usize = 10;

impl ContextUsage {
    pub fn from_figures(figures: ContextFigures) -> Self {
        let max = figures.context_window.max(1);
        let mcp: u64 = figures.mcp_tools.iter().map(|t| t.tokens).sum();
        let frame = figures.system_prompt + figures.tools + mcp;
        let total = figures.total.max(frame);
        // With a real total, the conversation is what it leaves after the frame.
        let messages = if figures.api_usage.is_some() {
            total - frame
        } else {
            figures.messages
        };
        let total = total.max(frame + messages);
        let buffer = if figures.auto_compact {
            max.saturating_sub(figures.compact_threshold)
        } else {
            0
        };
        let free = max.saturating_sub(total).saturating_sub(buffer);
        let mut categories = vec![
            row(
                "system_prompt",
                "System prompt",
                figures.system_prompt,
                "promptBorder",
                "used",
            ),
            row(
                "system_tools",
                "System tools",
                figures.tools,
                "inactive",
                "used",
            ),
        ];
        if mcp > 0 {
            categories.push(row(
                "mcp_tools",
                "MCP tools",
                mcp,
                "cyan_FOR_SUBAGENTS_ONLY",
                "used",
            ));
        }
        categories.push(row(
            "messages",
            "Messages",
            messages,
            "purple_FOR_SUBAGENTS_ONLY",
            "used",
        ));
        if buffer > 0 {
            categories.push(row(
                "autocompact_buffer",
                "Autocompact buffer",
                buffer,
                "inactive",
                "buffer",
            ));
        }
        categories.push(row(
            "free_space",
            "Free space",
            free,
            "promptBorder",
            "free",
        ));
        Self {
            grid_rows: grid(&categories, max),
            categories,
            total_tokens: total,
            max_tokens: max,
            raw_max_tokens: max,
            percentage: percent(total, max),
            model: figures.model,
            memory_files: Vec::new(),
            mcp_tools: figures.mcp_tools,
            agents: Vec::new(),
            auto_compact_threshold: figures.compact_threshold,
            is_auto_compact_enabled: figures.auto_compact,
            message_breakdown: figures.breakdown,
            api_usage: figures.api_usage,
        }
    }
}

fn row(
    id: &'static str,
    name: &'static str,
    tokens: u64,
    color: &'static str,
    kind: &'static str,
) -> ContextCategory {
    ContextCategory {
        id,
        name,
        tokens,
        color,
        kind,
    }
}

fn percent(part: u64, whole: u64) -> u64 {
    (part.saturating_mul(100) / whole.max(1)).min(100)
}

/// The window as squares, each category taking its share (at least one square when it holds
/// anything), free space the rest.
fn grid(categories: &[ContextCategory], max: u64) -> Vec<Vec<GridSquare>> {
    let squares = GRID_SIDE * GRID_SIDE;
    let mut cells: Vec<GridSquare> = Vec::with_capacity(squares);
    let (free, taken): (Vec<_>, Vec<_>) = categories.iter().partition(|c| c.kind == "free");
    for category in taken.iter().filter(|c| c.tokens > 0) {
        let share = usize::try_from(percent(category.tokens, max)).unwrap_or(squares);
        for _ in 0..share.max(1) {
            if cells.len() < squares {
                cells.push(square(category, max));
            }
        }
    }
    if let Some(free) = free.first() {
        while cells.len() < squares {
            cells.push(square(free, max));
        }
    }
    cells
        .chunks(GRID_SIDE)
        .map(<[GridSquare]>::to_vec)
        .collect()
}

fn square(category: &ContextCategory, max: u64) -> GridSquare {
    GridSquare {
        color: category.color,
        is_filled: true,
        category_name: category.name,
        tokens: category.tokens,
        percentage: percent(category.tokens, max),
        square_fullness: 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> ContextFigures {
        ContextFigures {
            model: "claude-sonnet-4-5".into(),
            context_window: 200_000,
            compact_threshold: 180_000,
            auto_compact: true,
            system_prompt: 3_000,
            tools: 7_000,
            messages: 500,
            total: 10_500,
            ..ContextFigures::default()
        }
    }

    #[test]
    fn the_rows_add_up_to_the_window() {
        let usage = ContextUsage::from_figures(figures());
        let sum: u64 = usage.categories.iter().map(|c| c.tokens).sum();
        assert_eq!(sum, usage.max_tokens);
        assert_eq!(usage.total_tokens, 10_500);
        assert_eq!(usage.percentage, 5);
        assert_eq!(usage.grid_rows.len(), 10);
        assert!(usage.grid_rows.iter().all(|row| row.len() == 10));
    }

    #[test]
    fn a_real_total_sets_the_messages_row() {
        let mut figures = figures();
        figures.total = 12_000;
        figures.api_usage = Some(ApiUsage {
            input_tokens: 11_000,
            output_tokens: 1_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        });
        let usage = ContextUsage::from_figures(figures);
        let messages = usage.categories.iter().find(|c| c.id == "messages");
        assert_eq!(messages.map(|c| c.tokens), Some(2_000));
    }

    #[test]
    fn it_serialises_with_the_sdk_field_names() {
        let value = serde_json::to_value(ContextUsage::from_figures(figures())).expect("json");
        for key in [
            "categories",
            "totalTokens",
            "maxTokens",
            "rawMaxTokens",
            "percentage",
            "gridRows",
            "model",
            "mcpTools",
            "isAutoCompactEnabled",
            "apiUsage",
        ] {
            assert!(value.get(key).is_some(), "{key} missing in {value}");
        }
        assert_eq!(value["categories"][0]["id"], "system_prompt");
        assert!(value["apiUsage"].is_null());
    }
}
