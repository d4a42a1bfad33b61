//! The Ultraplan lifecycle: every arrow of the design's state diagram, the phase mapping, and
//! moves the diagram does not have being refused with an error naming state and event.

use fleet_remote::ultraplan::state::{phase_of, End, Event, IllegalTransition, Phase, State};

fn plan() -> String {
    "# Plan\n1. do it".to_string()
}

fn step(from: State, event: Event) -> State {
    from.next(&event)
        .unwrap_or_else(|err| panic!("{} --{}--> refused: {err}", from.name(), event.name()))
}

#[test]
fn every_arrow_of_the_diagram() {
    let arrows: Vec<(State, Event, State)> = vec![
        (State::Idle, Event::Launch, State::Launching),
        (State::Launching, Event::Launched, State::Running),
        (
            State::Launching,
            Event::LaunchFailed("no broker".into()),
            State::Idle,
        ),
        (State::Running, Event::Phase(Phase::Running), State::Running),
        (
            State::Running,
            Event::Phase(Phase::NeedsInput),
            State::NeedsInput,
        ),
        (
            State::Running,
            Event::Phase(Phase::PlanReady),
            State::PlanReady,
        ),
        (
            State::NeedsInput,
            Event::Phase(Phase::Running),
            State::Running,
        ),
        (
            State::NeedsInput,
            Event::Phase(Phase::PlanReady),
            State::PlanReady,
        ),
        (State::PlanReady, Event::Approve, State::RemoteExec),
        (
            State::PlanReady,
            Event::Reject {
                feedback: "cover the CLI too".into(),
            },
            State::Running,
        ),
        (
            State::PlanReady,
            Event::Teleport { plan: plan() },
            State::PendingChoice { plan: plan() },
        ),
        (State::RemoteExec, Event::ExecFinished, State::Idle),
        (
            State::PendingChoice { plan: plan() },
            Event::RunLocally,
            State::Idle,
        ),
        (
            State::PendingChoice { plan: plan() },
            Event::ContinueRemote,
            State::Running,
        ),
        (State::Running, Event::Ended(End::Timeout), State::Idle),
        (
            State::Running,
            Event::Ended(End::Failed("gave up".into())),
            State::Idle,
        ),
        (State::Running, Event::Ended(End::Stopped), State::Idle),
        // A stop or a failure also ends a session that waits for input, for a decision, or
        // that executes.
        (State::NeedsInput, Event::Ended(End::Stopped), State::Idle),
        (State::PlanReady, Event::Ended(End::Timeout), State::Idle),
        (
            State::RemoteExec,
            Event::Ended(End::Failed("worker died".into())),
            State::Idle,
        ),
    ];
    for (from, event, want) in arrows {
        assert_eq!(
            step(from.clone(), event.clone()),
            want,
            "{} --{}-->",
            from.name(),
            event.name()
        );
    }
}

#[test]
fn a_whole_round_trip_with_a_rejection() {
    let mut state = State::Idle;
    for event in [
        Event::Launch,
        Event::Launched,
        Event::Phase(Phase::Running),
        Event::Phase(Phase::NeedsInput),
        Event::Phase(Phase::Running),
        Event::Phase(Phase::PlanReady),
        Event::Reject {
            feedback: "split step 2".into(),
        },
        Event::Phase(Phase::PlanReady),
        Event::Approve,
        Event::ExecFinished,
    ] {
        state = step(state, event);
    }
    assert_eq!(state, State::Idle);
}

#[test]
fn moves_the_diagram_does_not_have_are_refused_naming_both() {
    let refused: Vec<(State, Event)> = vec![
        (State::Idle, Event::Approve),
        (State::Idle, Event::Phase(Phase::Running)),
        (State::Idle, Event::Ended(End::Stopped)),
        (State::Launching, Event::Phase(Phase::PlanReady)),
        (State::Launching, Event::Launch),
        (State::Running, Event::Approve),
        (State::Running, Event::Launch),
        (State::NeedsInput, Event::Teleport { plan: plan() }),
        (State::PlanReady, Event::Phase(Phase::NeedsInput)),
        (
            State::PlanReady,
            Event::Reject {
                feedback: "  ".into(),
            },
        ),
        (State::RemoteExec, Event::Approve),
        (State::RemoteExec, Event::Phase(Phase::PlanReady)),
        (State::PendingChoice { plan: plan() }, Event::Approve),
        (
            State::PendingChoice { plan: plan() },
            Event::Ended(End::Timeout),
        ),
    ];
    for (from, event) in refused {
        let err: IllegalTransition = from.next(&event).expect_err(&format!(
            "{} --{}--> must be refused",
            from.name(),
            event.name()
        ));
        let text = err.to_string();
        assert!(
            text.contains(from.name()) && text.contains(event.name()),
            "{text}"
        );
    }
    let err = State::Running
        .next(&Event::Approve)
        .expect_err("no plan to approve");
    assert_eq!(
        err.to_string(),
        "ultraplan: cannot take approve in state RUNNING"
    );
}

#[test]
fn the_phase_mapping() {
    // (plan pending, remote idle, new events) -> phase
    let table = [
        ((true, false, false), Phase::PlanReady),
        ((true, true, false), Phase::PlanReady),
        ((true, true, true), Phase::PlanReady),
        ((false, true, false), Phase::NeedsInput),
        ((false, true, true), Phase::Running),
        ((false, false, false), Phase::Running),
        ((false, false, true), Phase::Running),
    ];
    for ((plan, idle, new), want) in table {
        assert_eq!(phase_of(plan, idle, new), want, "{plan} {idle} {new}");
    }
    assert_eq!(Phase::NeedsInput.to_string(), "needs_input");
    assert_eq!(Phase::PlanReady.as_str(), "plan_ready");
    assert_eq!(Phase::Running.as_str(), "running");
}
