//! `fleet dev bench tui`: the terminal UI's figures (see `fleet_tui::bench`) — keystroke to
//! frame while subagents stream, paging a long session, and memory over many frames.

use anyhow::bail;
use fleet_tui::bench::{BenchConfig, BenchReport, Percentiles};

#[derive(Debug, clap::Args)]
pub struct TuiArgs {
    /// Subagents streaming while keys are pressed.
    #[arg(long, default_value_t = 20)]
    subagents: usize,
    /// Keys pressed (each one drawn).
    #[arg(long, default_value_t = 2000)]
    keys: usize,
    /// Lines of the long session that is paged through.
    #[arg(long, default_value_t = 20_000)]
    lines: usize,
    /// Screen size, columns×rows.
    #[arg(long, default_value_t = 120)]
    width: u16,
    #[arg(long, default_value_t = 40)]
    height: u16,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn tui(args: TuiArgs) -> anyhow::Result<()> {
    if args.width < 10 || args.height < 5 {
        bail!("the screen must be at least 10×5");
    }
    let report = fleet_tui::bench::run(BenchConfig {
        width: args.width,
        height: args.height,
        subagents: args.subagents,
        keys: args.keys.max(1),
        lines: args.lines,
    });
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print(&args, &report);
    }
    Ok(())
}

fn ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

fn spread(p: &Percentiles) -> String {
    format!(
        "p50 {} · p99 {} · max {}",
        ms(p.p50_us),
        ms(p.p99_us),
        ms(p.max_us)
    )
}

fn print(args: &TuiArgs, r: &BenchReport) {
    println!(
        "screen {}×{}; {} subagents streaming, {} keys",
        args.width, args.height, args.subagents, args.keys
    );
    println!(
        "keystroke → frame:      {} ({} agent events applied)",
        spread(&r.keystroke_while_streaming),
        r.events_applied
    );
    println!(
        "{}-line session: first frame {}; PageUp → frame: {}",
        args.lines,
        ms(r.long_session_first_frame_us),
        spread(&r.page_scroll)
    );
    println!(
        "RSS after loading it {} KB; after {} more frames {} KB (growth {} KB)",
        r.rss_after_load_kb,
        r.frames_for_growth,
        r.rss_after_frames_kb,
        r.rss_after_frames_kb.saturating_sub(r.rss_after_load_kb)
    );
}
