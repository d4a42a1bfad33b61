//! A job's folder: a fresh checkout of the caller's repository state (downloaded from the
//! object store), the folder inside it where the agent starts, and the changes going back as
//! a result branch.

use crate::broker::Broker;
use crate::error::RemoteError;
use crate::job::Job;
use crate::names;
use crate::record::ResultBranch;
use async_nats::jetstream::object_store::{GetError, PutError};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a job's folder could not be made, or its changes not sent back. The job then ends as
/// failed with this text.
#[derive(Debug, Error)]
pub enum CheckoutError {
    /// `RepoRef::subdir` comes off the bus: it may only name a folder below the checkout.
    #[error("the job's folder {subdir:?} is not a plain path inside the repository")]
    NotInside { subdir: String },
    #[error("cannot make the folder {}: {source}", path.display())]
    MakeFolder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the repository bundle {object} is not in the object store (bucket {bucket}): {source}; \
         the caller's snapshot was never uploaded or has expired",
        bucket = names::BUNDLES_BUCKET
    )]
    NoBundle {
        object: String,
        #[source]
        source: GetError,
    },
    #[error("cannot write {}: {source}", path.display())]
    WriteBundle {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("downloading the repository bundle {object}: {source}")]
    Download {
        object: String,
        #[source]
        source: std::io::Error,
    },
    #[error("checking out {commit}: {source}")]
    Checkout {
        commit: String,
        #[source]
        source: RemoteError,
    },
    /// Bundling the job's changes failed.
    #[error(transparent)]
    Bundle(RemoteError),
    #[error("reading {}: {source}", path.display())]
    ReadBundle {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("uploading {object}: {source}")]
    Upload {
        object: String,
        #[source]
        source: PutError,
    },
}

/// Where the agent starts: the caller's folder inside the checkout (`RepoRef::subdir`), which
/// comes off the bus and so may only name folders below the checkout.
pub fn start_folder(job: &Job, work: &Path) -> Result<PathBuf, CheckoutError> {
    let subdir = job.repo.as_ref().map_or("", |r| r.subdir.as_str());
    if subdir.is_empty() {
        return Ok(work.to_path_buf());
    }
    let rel = Path::new(subdir);
    if !rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return Err(CheckoutError::NotInside {
            subdir: subdir.to_string(),
        });
    }
    let start = work.join(rel);
    // A folder with nothing tracked in it is not in the checkout: it is made empty.
    match std::fs::create_dir_all(&start) {
        Ok(()) => Ok(start),
        Err(source) => Err(CheckoutError::MakeFolder {
            path: start,
            source,
        }),
    }
}

/// A fresh checkout of the job's repository state in `work` (an empty folder without one).
pub async fn checkout(
    broker: &Broker,
    job: &Job,
    folder: &Path,
    work: &Path,
) -> Result<(), CheckoutError> {
    let Some(repo) = &job.repo else {
        return std::fs::create_dir(work).map_err(|source| CheckoutError::MakeFolder {
            path: work.to_path_buf(),
            source,
        });
    };
    let bundle = folder.join("repo.bundle");
    let mut object =
        broker
            .bundles
            .get(&repo.object)
            .await
            .map_err(|source| CheckoutError::NoBundle {
                object: repo.object.clone(),
                source,
            })?;
    let mut file = match tokio::fs::File::create(&bundle).await {
        Ok(file) => file,
        Err(source) => {
            return Err(CheckoutError::WriteBundle {
                path: bundle,
                source,
            })
        }
    };
    tokio::io::copy(&mut object, &mut file)
        .await
        .map_err(|source| CheckoutError::Download {
            object: repo.object.clone(),
            source,
        })?;
    drop(file);
    crate::bundle::checkout(&bundle, &repo.snapshot, work)
        .await
        .map_err(|source| CheckoutError::Checkout {
            commit: repo.snapshot.clone(),
            source,
        })
}

/// Bundles what the job changed and uploads it; `None` when it changed nothing.
pub async fn result_branch(
    broker: &Broker,
    task_id: &str,
    base: &str,
    work: &Path,
    folder: &Path,
) -> Result<Option<ResultBranch>, CheckoutError> {
    let branch = names::result_branch(task_id);
    let out = folder.join("result.bundle");
    let Some(commit) = crate::bundle::result_bundle(work, base, &branch, &out)
        .await
        .map_err(CheckoutError::Bundle)?
    else {
        return Ok(None);
    };
    let object = names::result_object(task_id);
    let mut file = match tokio::fs::File::open(&out).await {
        Ok(file) => file,
        Err(source) => return Err(CheckoutError::ReadBundle { path: out, source }),
    };
    if let Err(source) = broker.bundles.put(object.as_str(), &mut file).await {
        return Err(CheckoutError::Upload { object, source });
    }
    Ok(Some(ResultBranch {
        object,
        branch,
        commit,
        base: base.to_string(),
    }))
}
