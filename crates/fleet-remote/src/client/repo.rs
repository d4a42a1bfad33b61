//! The repository going out (a snapshot bundle, stored once per snapshot commit) and a job's
//! branch coming back.

use super::retry::retrying;
use super::Remote;
use crate::error::RemoteError;
use crate::job::RepoRef;
use crate::names;
use std::path::Path;

impl Remote {
    /// Bundles the repository at `cwd` (HEAD plus a snapshot commit of uncommitted and
    /// untracked files) and stores it once per snapshot commit; `None` outside a repository.
    pub async fn snapshot_repo(&self, cwd: &Path) -> Result<Option<RepoRef>, RemoteError> {
        let scratch = tempfile::tempdir().map_err(|source| RemoteError::Io {
            what: "a scratch folder for the repository bundle".into(),
            source,
        })?;
        let Some(snapshot) = crate::bundle::snapshot(cwd, scratch.path()).await? else {
            return Ok(None);
        };
        let object = names::repo_object(&snapshot.snapshot);
        let bundles = &self.broker.bundles;
        // The same commit is the same bundle: a second job from an unchanged checkout
        // uploads nothing.
        if bundles.info(&object).await.is_err() {
            retrying(names::BUNDLES_BUCKET, || async {
                let mut file = tokio::fs::File::open(&snapshot.bundle)
                    .await
                    .map_err(|e| e.to_string())?;
                bundles
                    .put(object.as_str(), &mut file)
                    .await
                    .map_err(|e| e.to_string())
            })
            .await?;
        }
        Ok(Some(RepoRef {
            object,
            head: snapshot.head,
            snapshot: snapshot.snapshot,
            branch: snapshot.branch,
            subdir: snapshot.subdir,
        }))
    }

    /// Fetches the task's result branch into `repo` as `fleet/remote-<id8>`; `None` when the
    /// job changed nothing.
    pub async fn fetch_branch(
        &self,
        task_id: &str,
        repo: &Path,
    ) -> Result<Option<String>, RemoteError> {
        let record = self
            .record(task_id)
            .await?
            .ok_or_else(|| RemoteError::UnknownTask(task_id.to_string()))?;
        let Some(branch) = record.branch else {
            return Ok(None);
        };
        // The record is the worker's word: only the branch and object this task's id names
        // are taken, so a record naming `main` (or another task's bundle) cannot move the
        // caller's own branches.
        let expected = names::result_branch(task_id);
        if branch.branch != expected || branch.object != names::result_object(task_id) {
            return Err(RemoteError::State {
                task: task_id.to_string(),
                reason: format!(
                    "its record names the branch {:?} in {:?}; a remote task's branch is {expected:?}: not fetched",
                    branch.branch, branch.object
                ),
            });
        }
        let scratch = tempfile::tempdir().map_err(|source| RemoteError::Io {
            what: "a scratch folder for the result bundle".into(),
            source,
        })?;
        let file = scratch.path().join("result.bundle");
        if let Err(err) = self.broker.bundles.info(branch.object.as_str()).await {
            return Err(RemoteError::State {
                task: task_id.to_string(),
                reason: format!(
                    "its result bundle {} is not in the object store ({err})",
                    branch.object
                ),
            });
        }
        retrying(names::BUNDLES_BUCKET, || async {
            let mut object = self
                .broker
                .bundles
                .get(branch.object.as_str())
                .await
                .map_err(|e| e.to_string())?;
            let mut out = tokio::fs::File::create(&file)
                .await
                .map_err(|e| e.to_string())?;
            tokio::io::copy(&mut object, &mut out)
                .await
                .map_err(|e| e.to_string())
        })
        .await?;
        crate::bundle::fetch_into(repo, &file, &branch.branch).await?;
        Ok(Some(branch.branch))
    }
}
