//! Which provider and model a command talks to: the session library's choice (see
//! `fleet_session::model`), and the `--provider` flag's parser.

pub use fleet_session::model::{asked_output_limit, choose, learn_server_limits};
pub use fleet_session::Choice;

pub fn parse_provider(s: &str) -> Result<fleet_model::Provider, String> {
    s.parse()
        .map_err(|e: fleet_model::ModelError| e.to_string())
}
