//! PLACEHOLDER (skeleton): `/cost`.
use crate::theme::Theme;
use crate::transcript::AgentSummary;
use fleet_protocol::TreeReport;
use ratatui::text::Line;

pub fn lines(
    agents: &[AgentSummary],
    tree: Option<&TreeReport>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let _ = (agents, theme);
    vec![Line::from(format!(
        "total {:?}",
        tree.map(|t| t.total_cost_usd)
    ))]
}
