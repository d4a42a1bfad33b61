//! One attempt's `fleet` process, driven: its stdout lines go out as events and into the
//! [`Driver`], the caller's controls go into the driver, and the driver's steps are carried out
//! (answers on stdin, record updates, kills) until the job ends or the worker shuts down.

use super::child;
use super::control::Controls;
use super::driver::{Driver, Ending, StdinLine, Step};
use super::publish::{put_record, Events};
use crate::broker::Broker;
use crate::event::WorkerEvent;
use crate::job::Job;
use crate::record::{TaskRecord, TaskState};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How many of the process's last stderr lines a failure quotes.
const STDERR_TAIL: usize = 12;
/// How long a process that was told the session is over gets to exit by itself.
const EXIT_GRACE: Duration = Duration::from_secs(30);
/// How often the events count is written to the record while events flow.
const COUNT_EVERY: Duration = Duration::from_secs(1);

/// What the attempt needs around the process.
pub struct Parts<'a> {
    pub broker: &'a Broker,
    pub job: &'a Job,
    pub record: &'a mut TaskRecord,
    pub events: &'a mut Events,
    pub controls: &'a mut Controls,
    pub shutdown: &'a CancellationToken,
    /// The worker's maximum permission mode (an approved plan never runs wider).
    pub max_mode: fleet_tools::permissions::PermissionMode,
}

/// How the attempt went.
pub enum Outcome {
    Ended {
        ending: Ending,
        driver: Driver,
    },
    /// The worker is shutting down: the process was killed, the job goes back to the queue.
    GivenBack,
}

/// Drives `process` until the job ends.
pub async fn drive(mut process: Child, parts: Parts<'_>) -> Outcome {
    let Parts {
        broker,
        job,
        record,
        events,
        controls,
        shutdown,
        max_mode,
    } = parts;
    let mut stdin = process.stdin.take();
    let Some(stdout) = process.stdout.take() else {
        child::kill_tree(&mut process).await;
        return Outcome::Ended {
            ending: failed("the agent's process had no stdout"),
            driver: Driver::new(job.kind),
        };
    };
    let (tail, mut tail_reader) = keep_stderr_tail(&mut process);
    let mut lines = BufReader::new(stdout).lines();
    for line in Driver::opening(&job.prompt) {
        write(&mut stdin, &line).await;
    }
    let mut driver = Driver::new(job.kind).with_max_mode(max_mode);
    let mut ending: Option<Ending> = None;
    // Once the job has ended: when the process must be gone, the rest of its output read.
    let mut deadline: Option<Instant> = None;
    let mut tick = tokio::time::interval(COUNT_EVERY);
    let mut counted = 0;
    loop {
        let until_deadline = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let steps = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(text)) => {
                    let parsed: Option<Value> = serde_json::from_str(&text).ok();
                    // While the broker is away the queue fills and this waits: the process's
                    // next lines stay in its pipe, and its writes block, until there is room.
                    tokio::select! {
                        () = events.line(text) => {}
                        () = shutdown.cancelled() => {
                            child::kill_tree(&mut process).await;
                            return Outcome::GivenBack;
                        }
                    }
                    parsed.map(|v| driver.on_line(&v)).unwrap_or_default()
                }
                // End of output: the process is done (or dying).
                _ => {
                    let status = process.wait().await;
                    if ending.is_some() {
                        break;
                    }
                    let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                    // Its last stderr lines may still be on their way.
                    if let Some(reader) = tail_reader.take() {
                        let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
                    }
                    let tail = tail.lock().map(|t| t.iter().cloned().collect::<Vec<_>>());
                    driver.on_exit(&status, &tail.unwrap_or_default())
                }
            },
            control = controls.rx.recv(), if ending.is_none() => match control {
                Some(control) => driver.on_control(control),
                None => Vec::new(),
            },
            _ = tick.tick() => {
                let stored = events.stored();
                if stored != counted {
                    counted = stored;
                    record.events = stored;
                    record.updated_ms = crate::now_ms();
                    put_record(broker, record, shutdown).await;
                }
                Vec::new()
            }
            () = until_deadline => {
                child::kill_tree(&mut process).await;
                break;
            }
            () = shutdown.cancelled() => {
                child::kill_tree(&mut process).await;
                return Outcome::GivenBack;
            }
        };
        for step in steps {
            match step {
                Step::Write(line) => write(&mut stdin, &line).await,
                Step::State(state) => set_state(broker, record, events, state, shutdown).await,
                Step::PlanReady(plan) => {
                    record.plan = Some(plan.clone());
                    set_state(broker, record, events, TaskState::PlanReady, shutdown).await;
                    events.own(WorkerEvent::PlanReady { plan }).await;
                }
                Step::CloseStdin => {
                    stdin = None;
                    deadline.get_or_insert(Instant::now() + EXIT_GRACE);
                }
                Step::Kill => {
                    stdin = None;
                    child::kill_tree(&mut process).await;
                    // Whatever it wrote before dying is still read, briefly.
                    deadline = Some(Instant::now() + Duration::from_secs(2));
                }
                Step::End(end) => {
                    ending.get_or_insert(end);
                    deadline.get_or_insert(Instant::now() + EXIT_GRACE);
                }
            }
        }
        if ending.is_some() && deadline.is_none() {
            break;
        }
    }
    let ending = ending.unwrap_or_else(|| failed("the agent's process ended without a result"));
    Outcome::Ended { ending, driver }
}

fn failed(reason: &str) -> Ending {
    Ending {
        state: TaskState::Failed,
        result: Some(reason.to_string()),
        branch: false,
    }
}

async fn set_state(
    broker: &Broker,
    record: &mut TaskRecord,
    events: &mut Events,
    state: TaskState,
    stop: &CancellationToken,
) {
    record.state = state;
    record.events = events.stored();
    record.updated_ms = crate::now_ms();
    put_record(broker, record, stop).await;
}

/// One line on the process's stdin; a process that has gone is noticed at its stdout's end.
async fn write(stdin: &mut Option<ChildStdin>, line: &StdinLine) {
    let Some(pipe) = stdin.as_mut() else { return };
    let text = format!("{}\n", line.to_json());
    if pipe.write_all(text.as_bytes()).await.is_err() || pipe.flush().await.is_err() {
        *stdin = None;
    }
}

/// Reads the process's stderr in the background, keeping its last lines for a failure.
type Tail = Arc<Mutex<VecDeque<String>>>;

fn keep_stderr_tail(process: &mut Child) -> (Tail, Option<tokio::task::JoinHandle<()>>) {
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let mut reader = None;
    if let Some(stderr) = process.stderr.take() {
        let keep = tail.clone();
        reader = Some(tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut tail) = keep.lock() {
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }
        }));
    }
    (tail, reader)
}
