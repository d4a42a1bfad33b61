//! A job's folder: a fresh checkout of the caller's repository state (downloaded from the
//! object store), the folder inside it where the agent starts, and the changes going back as
//! a result branch.

use crate::broker::Broker;
use crate::job::Job;
use crate::names;
use crate::record::ResultBranch;
use std::path::{Path, PathBuf};

/// Where the agent starts: the caller's folder inside the checkout (`RepoRef::subdir`), which
/// comes off the bus and so may only name folders below the checkout.
pub fn start_folder(job: &Job, work: &Path) -> Result<PathBuf, String> {
    let subdir = job.repo.as_ref().map_or("", |r| r.subdir.as_str());
    if subdir.is_empty() {
        return Ok(work.to_path_buf());
    }
    let rel = Path::new(subdir);
    if !rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return Err(format!(
            "the job's folder {subdir:?} is not a plain path inside the repository"
        ));
    }
    let start = work.join(rel);
    // A folder with nothing tracked in it is not in the checkout: it is made empty.
    std::fs::create_dir_all(&start)
        .map_err(|e| format!("cannot make the folder {}: {e}", start.display()))?;
    Ok(start)
}

/// A fresh checkout of the job's repository state in `work` (an empty folder without one).
pub async fn checkout(
    broker: &Broker,
    job: &Job,
    folder: &Path,
    work: &Path,
) -> Result<(), String> {
    let Some(repo) = &job.repo else {
        return std::fs::create_dir(work)
            .map_err(|e| format!("cannot make the folder {}: {e}", work.display()));
    };
    let bundle = folder.join("repo.bundle");
    let mut object = broker.bundles.get(&repo.object).await.map_err(|err| {
        format!(
            "the repository bundle {} is not in the object store (bucket {}): {err}; \
             the caller's snapshot was never uploaded or has expired",
            repo.object,
            names::BUNDLES_BUCKET
        )
    })?;
    let mut file = tokio::fs::File::create(&bundle)
        .await
        .map_err(|e| format!("cannot write {}: {e}", bundle.display()))?;
    tokio::io::copy(&mut object, &mut file)
        .await
        .map_err(|e| format!("downloading the repository bundle {}: {e}", repo.object))?;
    drop(file);
    crate::bundle::checkout(&bundle, &repo.snapshot, work)
        .await
        .map_err(|e| format!("checking out {}: {e}", repo.snapshot))
}

/// Bundles what the job changed and uploads it; `None` when it changed nothing.
pub async fn result_branch(
    broker: &Broker,
    task_id: &str,
    base: &str,
    work: &Path,
    folder: &Path,
) -> Result<Option<ResultBranch>, String> {
    let branch = names::result_branch(task_id);
    let out = folder.join("result.bundle");
    let Some(commit) = crate::bundle::result_bundle(work, base, &branch, &out)
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let object = names::result_object(task_id);
    let mut file = tokio::fs::File::open(&out)
        .await
        .map_err(|e| format!("reading {}: {e}", out.display()))?;
    broker
        .bundles
        .put(object.as_str(), &mut file)
        .await
        .map_err(|e| format!("uploading {object}: {e}"))?;
    Ok(Some(ResultBranch {
        object,
        branch,
        commit,
        base: base.to_string(),
    }))
}
