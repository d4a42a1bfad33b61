//! One session, for every front end. `fleet -p`, the terminal UI, the Agent SDK control server,
//! `fleet mcp serve`, pane teammates and remote workers all start their session here, so a
//! setting, a trust decision or a new service is wired once and behaves the same in each.
