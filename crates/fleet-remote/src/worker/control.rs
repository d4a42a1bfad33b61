//! A job's controls: the task's `fleet.control.<task>` subject read from the start of the
//! `FLEET_CONTROL` stream by an ordered consumer, so a stop sent while the job was still
//! queued (or while the worker was cut off from the broker) is seen all the same. Each must be
//! signed for this task by a key the worker trusts (see [`crate::signing`]).

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::names;
use crate::record::Control;
use crate::signing::{open_control, TrustedKeys};
use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The controls of one task as they arrive; reading stops when this is dropped.
pub struct Controls {
    pub rx: mpsc::UnboundedReceiver<Control>,
    task: JoinHandle<()>,
    broker: Broker,
    consumer: String,
}

impl Drop for Controls {
    fn drop(&mut self) {
        self.task.abort();
        self.broker
            .forget_consumer(names::CONTROL_STREAM, std::mem::take(&mut self.consumer));
    }
}

/// Starts reading the task's controls. Only a control signed for this task by a key in
/// `trusted` is passed on; any other is logged and ignored.
pub async fn subscribe(
    broker: &Broker,
    task_id: &str,
    trusted: TrustedKeys,
    worker: String,
) -> Result<Controls, RemoteError> {
    let subject = names::control_subject(task_id);
    let stream = broker
        .js
        .get_stream(names::CONTROL_STREAM)
        .await
        .map_err(|e| RemoteError::broker(names::CONTROL_STREAM, e))?;
    let name = crate::broker::consumer_name("control");
    let consumer = stream
        .create_consumer(OrderedConfig {
            name: Some(name.clone()),
            filter_subject: subject.clone(),
            deliver_policy: DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(|e| RemoteError::broker(&subject, e))?;
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| RemoteError::broker(&subject, e))?;
    let (tx, rx) = mpsc::unbounded_channel();
    let task_id = task_id.to_string();
    let task = tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            let message = match message {
                Ok(message) => message,
                // The ordered consumer recreates itself after a broker restart.
                Err(err) => {
                    tracing::debug!("reading {subject}: {err}");
                    continue;
                }
            };
            match open_control(&task_id, &message.payload, &trusted) {
                Ok(control) => {
                    if tx.send(control).is_err() {
                        return;
                    }
                }
                Err(reason) => {
                    eprintln!("fleet worker {worker}: {task_id}: ignored a control: {reason}")
                }
            }
        }
    });
    Ok(Controls {
        rx,
        task,
        broker: broker.clone(),
        consumer: name,
    })
}
