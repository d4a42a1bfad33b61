//! A job's controls: the task's `fleet.control.<task>` subject read from the start of the
//! `FLEET_CONTROL` stream by an ordered consumer, so a stop sent while the job was still
//! queued (or while the worker was cut off from the broker) is seen all the same.

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::names;
use crate::record::Control;
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

/// Starts reading the task's controls.
pub async fn subscribe(broker: &Broker, task_id: &str) -> Result<Controls, RemoteError> {
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
            match serde_json::from_slice::<Control>(&message.payload) {
                Ok(control) => {
                    if tx.send(control).is_err() {
                        return;
                    }
                }
                Err(err) => tracing::warn!("a control on {subject} is not valid: {err}"),
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
