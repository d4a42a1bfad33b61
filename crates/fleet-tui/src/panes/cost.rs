//! `/cost`: what each agent of the session used and cost, and the total. A cost that is not
//! known yet (an agent still running, a model without prices) is shown as "—", never as
//! $0, which would read as "free"; so are the tokens and cost of an agent whose server
//! reported no usage, and a last line says that is why.

use super::text::{cut, dollars, pad, width};
use crate::theme::{Role, Theme};
use crate::transcript::AgentSummary;
use fleet_protocol::TreeReport;
use ratatui::text::{Line, Span};

const UNKNOWN: &str = "—";
const NOT_REPORTED: &str = "— usage not reported by the model server";
/// The agent column never grows past this.
const AGENT_CELLS: usize = 34;
/// Below this many columns the table becomes one block per agent.
const TABLE_WIDTH: u16 = 60;

/// One row of figures.
struct Row {
    agent: String,
    /// Shown as "(running)" after the name, which is cut first to make room.
    running: bool,
    turns: String,
    input: String,
    output: String,
    cost: String,
    /// No reply of this agent reported usage.
    unreported: bool,
}

/// The table for a wide view (the transcript wraps it on a narrow one); see
/// [`lines_for_width`] for a form that reads well at any width.
pub fn lines(
    agents: &[AgentSummary],
    tree: Option<&TreeReport>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    lines_for_width(agents, tree, u16::MAX, theme)
}

/// Like [`lines`], stacked (a name row, then its figures) when `width` is too narrow for
/// the table.
pub fn lines_for_width(
    agents: &[AgentSummary],
    tree: Option<&TreeReport>,
    width_cells: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut rows = rows(agents, tree);
    let unreported = rows.iter().any(|r| r.unreported);
    rows.push(total(agents, tree));
    let room = if width_cells < TABLE_WIDTH {
        usize::from(width_cells)
    } else {
        AGENT_CELLS + RUNNING.len()
    };
    for row in &mut rows {
        row.agent = labelled(&row.agent, row.running, room);
    }
    let mut out = vec![Line::from(Span::styled(
        "Cost by agent",
        theme.style(Role::Heading),
    ))];
    if width_cells < TABLE_WIDTH {
        let last = rows.len() - 1;
        let w = usize::from(width_cells);
        for (i, row) in rows.into_iter().enumerate() {
            let role = if i == last { Role::Heading } else { Role::Text };
            let turns = if row.turns == "1" { "turn" } else { "turns" };
            out.push(Line::from(Span::styled(
                cut(&row.agent, w),
                theme.style(role),
            )));
            for figures in [
                format!("  {} · {} {turns}", row.cost, row.turns),
                format!("  {} in · {} out", row.input, row.output),
            ] {
                out.push(Line::from(Span::styled(
                    cut(&figures, w),
                    theme.style(Role::Dim),
                )));
            }
        }
        if unreported {
            out.push(Line::from(Span::styled(
                cut(NOT_REPORTED, w),
                theme.style(Role::Dim),
            )));
        }
        return out;
    }
    let agent_w = rows
        .iter()
        .map(|r| width(&r.agent))
        .max()
        .unwrap_or(0)
        .max(5);
    let num = |s: &str, w: usize| format!("{}{s}", pad("", w.saturating_sub(width(s))));
    let widths = [6, 10, 10, 10];
    let render = |row: &Row| -> String {
        format!(
            "  {} {} {} {} {}",
            pad(&row.agent, agent_w),
            num(&row.turns, widths[0]),
            num(&row.input, widths[1]),
            num(&row.output, widths[2]),
            num(&row.cost, widths[3]),
        )
    };
    let header = Row {
        agent: "Agent".into(),
        running: false,
        turns: "Turns".into(),
        input: "Input".into(),
        output: "Output".into(),
        cost: "Cost".into(),
        unreported: false,
    };
    out.push(Line::from(Span::styled(
        render(&header),
        theme.style(Role::Dim),
    )));
    let last = rows.len() - 1;
    for (i, row) in rows.iter().enumerate() {
        let role = if i == last { Role::Heading } else { Role::Text };
        out.push(Line::from(Span::styled(render(row), theme.style(role))));
    }
    if unreported {
        out.push(Line::from(Span::styled(
            format!("  {NOT_REPORTED}"),
            theme.style(Role::Dim),
        )));
    }
    out
}

const RUNNING: &str = " (running)";

/// The agent's name in `room` cells, "(running)" kept whole after it.
fn labelled(name: &str, running: bool, room: usize) -> String {
    if running {
        format!("{}{RUNNING}", cut(name, room.saturating_sub(RUNNING.len())))
    } else {
        cut(name, room)
    }
}

use crate::figures::group_thousands as grouped;

fn known_cost(agent: &AgentSummary, tree: Option<&TreeReport>) -> Option<f64> {
    agent.cost_usd.or_else(|| {
        tree?
            .agents
            .iter()
            .find(|a| a.agent_id == agent.agent_id)
            .and_then(|a| a.cost_usd)
    })
}

fn name(agent: &AgentSummary) -> String {
    let name = if agent.tool_use_id.is_none() {
        "main".to_string()
    } else if agent.description.is_empty() {
        agent.subagent_type.clone()
    } else {
        format!("{}: {}", agent.subagent_type, agent.description)
    };
    cut(&name, AGENT_CELLS)
}

/// The agents' rows; from the tree report alone when the transcript knows no agents.
fn rows(agents: &[AgentSummary], tree: Option<&TreeReport>) -> Vec<Row> {
    if agents.is_empty() {
        return tree
            .map(|t| {
                t.agents
                    .iter()
                    .map(|a| {
                        let known = a.usage.is_reported();
                        Row {
                            agent: cut(&a.agent_type, AGENT_CELLS),
                            running: a.status == "running",
                            turns: a.num_turns.to_string(),
                            input: figure(known, a.usage.total_input()),
                            output: figure(known, a.usage.output_tokens),
                            cost: a.cost_usd.map_or(UNKNOWN.to_string(), dollars),
                            unreported: !known,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
    }
    agents
        .iter()
        .map(|a| Row {
            agent: name(a),
            running: !a.done && a.tool_use_id.is_some(),
            turns: a.turns.to_string(),
            input: figure(!a.usage_unreported, a.input_tokens),
            output: figure(!a.usage_unreported, a.output_tokens),
            cost: known_cost(a, tree).map_or(UNKNOWN.to_string(), dollars),
            unreported: a.usage_unreported,
        })
        .collect()
}

/// The total: the tree's when there is one; else the known costs summed, marked `+` when
/// some are missing, "—" when none is known.
fn total(agents: &[AgentSummary], tree: Option<&TreeReport>) -> Row {
    let (turns, input, output) = if agents.is_empty() {
        tree.map(|t| {
            t.agents.iter().fold((0u64, 0u64, 0u64), |acc, a| {
                (
                    acc.0 + u64::from(a.num_turns),
                    acc.1 + a.usage.total_input(),
                    acc.2 + a.usage.output_tokens,
                )
            })
        })
        .unwrap_or_default()
    } else {
        agents.iter().fold((0, 0, 0), |acc, a| {
            (
                acc.0 + u64::from(a.turns),
                acc.1 + a.input_tokens,
                acc.2 + a.output_tokens,
            )
        })
    };
    let costs: Vec<Option<f64>> = agents.iter().map(|a| known_cost(a, tree)).collect();
    let known: f64 = costs.iter().flatten().sum();
    let cost = match tree {
        Some(t) => t.reported_cost_usd().map_or(UNKNOWN.to_string(), dollars),
        None if costs.is_empty() || costs.iter().all(Option::is_none) => UNKNOWN.to_string(),
        None if costs.iter().any(Option::is_none) => format!("{}+", dollars(known)),
        None => dollars(known),
    };
    Row {
        agent: "Total".into(),
        running: false,
        turns: turns.to_string(),
        input: grouped(input),
        output: grouped(output),
        cost,
        unreported: false,
    }
}

/// A token count, or "—" when the server reported none.
fn figure(known: bool, n: u64) -> String {
    if known {
        grouped(n)
    } else {
        UNKNOWN.to_string()
    }
}
