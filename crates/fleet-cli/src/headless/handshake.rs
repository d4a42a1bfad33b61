//! The Agent SDKs' `initialize`: sent first, answered once the session is built. What it adds
//! (agents, hooks, a system prompt, a settings layer) is part of the session being built, so
//! it is read before the build and answered after it.

use super::{flags, setup};
use crate::args::PrintArgs;
use crate::control::{self, init::InitRequest, reader::First};
use crate::model_choice::{choose, Choice};
use crate::settings::{self, Settings};
use anyhow::bail;
use std::path::Path;

/// The `initialize` request waiting for its answer: its id and what it asked.
pub(super) type Pending = (String, InitRequest);

/// Waits for the host's first line; when it is `initialize`, applies it to `args` (and to
/// `settings` and `choice` when it sends a settings layer, which counts as `--settings`). A
/// request fleet cannot act on is answered with the error and ends the run.
pub(super) async fn read(
    channel: &mut control::Channel,
    args: &mut PrintArgs,
    cwd: &Path,
    settings: &mut Settings,
    choice: &mut Choice,
) -> anyhow::Result<Option<Pending>> {
    let First::Initialize { id, request: body } = channel.first().await else {
        return Ok(None);
    };
    let read = InitRequest::read(&body, args)
        .map_err(|e| e.to_string())
        .and_then(|request| {
            if request.settings {
                let reread = flags::settings_flags(args)
                    .and_then(|flags| settings::load_with(cwd, &flags))
                    .and_then(|loaded| {
                        let picked = choose(args.provider, args.model.clone(), &loaded)?;
                        Ok((loaded, picked))
                    });
                let (loaded, picked) =
                    reread.map_err(|e| format!("initialize: {}", crate::render(&e)))?;
                *settings = loaded;
                *choice = picked;
            }
            Ok(request)
        });
    match read {
        Ok(request) => Ok(Some((id, request))),
        Err(err) => {
            channel.link.respond(&id, Err(err.clone()));
            bail!("{err}");
        }
    }
}

/// Answers `initialize` with what the built session offers; says on stderr what it asked for
/// that fleet did not act on.
pub(super) fn answer(channel: &control::Channel, pending: &Pending, built: &setup::Built) {
    let (id, request) = pending;
    if !request.ignored.is_empty() {
        eprintln!(
            "fleet: initialize: not acted on: {}",
            request.ignored.join(", ")
        );
    }
    let answer = control::init::response(
        built.spawner.agents(),
        &built.skills,
        &fleet_model::Catalog::from_env(),
        built.agent.config().tools.permissions.mode(),
        request,
    );
    channel.link.respond(id, Ok(answer));
}
