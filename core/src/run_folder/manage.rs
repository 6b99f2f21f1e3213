//! Managing run folders: the runs list, renaming and deleting, each refusing anything that is
//! not a run folder.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use kiln_formats::files::{Disk, FileTree, MemoryFiles};

use super::{
    CONFIG_FILE, FolderError, check_run_folder, check_run_folder_in, folder_name_of, io_err,
    is_run_folder_in,
};
use crate::atomic_file::write_atomically;
use crate::config::ExperimentDraft;

/// Longest run name [`rename_run`] accepts; folder names stay readable in a file manager.
pub const MAX_NAME_CHARS: usize = 64;

/// Run folders under `runs_dir` (direct children holding config.toml or metrics.csv), newest
/// first. A missing runs_dir is an empty list, not an error.
pub fn list_runs(runs_dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    list_runs_in(&Disk, runs_dir)
}

/// [`list_runs`] of a runs folder in `tree`: the disk, or a page's runs in memory.
pub fn list_runs_in(tree: &dyn FileTree, runs_dir: &Path) -> Result<Vec<PathBuf>, FolderError> {
    let entries = match tree.entries(runs_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("list", runs_dir)(e)),
    };
    let mut runs: Vec<PathBuf> = entries
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(name, _)| runs_dir.join(name))
        .filter(|path| is_run_folder_in(tree, path))
        .collect();
    // Folder names start with a UTC timestamp, so name order is age order.
    runs.sort_by(|a, b| b.file_name().cmp(&a.file_name()));
    Ok(runs)
}

/// The `YYYYMMDD-HHMMSS` prefix [`super::RunFolder`] gives every folder, if this one has it.
pub(super) fn timestamp_prefix(folder_name: &str) -> Option<&str> {
    let prefix = folder_name.get(..15)?;
    let bytes = prefix.as_bytes();
    let shape_ok = bytes.iter().enumerate().all(|(i, b)| {
        if i == 8 {
            *b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    let rest_ok = matches!(folder_name.as_bytes().get(15), None | Some(b'-'));
    (shape_ok && rest_ok).then_some(prefix)
}

/// Checks a new run name; a subset of what [`ExperimentDraft::validate`] allows, so a renamed
/// run's config.toml still validates and reruns.
pub fn check_run_name(name: &str) -> Result<(), FolderError> {
    let bad = |reason: &str| FolderError::BadName {
        name: name.to_owned(),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(bad("give the run a name"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(bad(&format!(
            "a run name may have at most {MAX_NAME_CHARS} characters"
        )));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(bad(
            "use only letters, digits, '-', '_' and '.' (it becomes part of a folder name)",
        ));
    }
    if name.ends_with('.') {
        // Windows drops a trailing dot from folder names, so the folder would not match.
        return Err(bad("a run name may not end with '.'"));
    }
    Ok(())
}

/// Renames the run: the folder becomes `<timestamp part of old name>-<new_name>` in the same
/// parent (just `<new_name>` if the old name has no timestamp) and config.toml's `name` is
/// rewritten atomically. Refuses if the target exists. Returns the new path.
///
/// A run still being trained is not renamed: its writer holds the old path ([`refuse_held`]).
pub fn rename_run(folder: &Path, new_name: &str) -> Result<PathBuf, FolderError> {
    refuse_held(folder)?;
    let Renaming {
        target,
        config_path,
        old_config,
        new_config,
    } = plan_rename(&Disk, folder, new_name)?;
    if target != folder && fs::symlink_metadata(&target).is_ok() {
        return Err(FolderError::Exists { path: target });
    }

    if let Some(text) = &new_config {
        write_atomically(&config_path, text.as_bytes()).map_err(io_err("write", &config_path))?;
    }
    if target != folder
        && let Err(e) = fs::rename(folder, &target)
    {
        if let Some(text) = &old_config {
            // Put the old name back so folder and config still agree; the rename error is
            // the one to report.
            let _ = write_atomically(&config_path, text.as_bytes());
        }
        return Err(io_err("rename", folder)(e));
    }
    Ok(target)
}

/// [`rename_run`] for a run held in memory, as a browser page keeps its runs.
pub fn rename_run_in(
    files: &mut MemoryFiles,
    folder: &Path,
    new_name: &str,
) -> Result<PathBuf, FolderError> {
    let Renaming {
        target,
        config_path,
        new_config,
        ..
    } = plan_rename(files, folder, new_name)?;
    if target != folder {
        files
            .rename(folder, &target)
            .map_err(io_err("rename", folder))?;
    }
    if let Some(text) = new_config {
        let moved = target.join(config_path.strip_prefix(folder).unwrap_or(&config_path));
        files
            .insert(&moved, text.into_bytes())
            .map_err(io_err("write", &moved))?;
    }
    Ok(target)
}

/// What renaming a run changes, worked out before anything does.
struct Renaming {
    /// The folder's new path.
    target: PathBuf,
    /// Its config.toml (at the old path).
    config_path: PathBuf,
    /// The config's text as it was, where the folder has one.
    old_config: Option<String>,
    /// The config's text with the new name.
    new_config: Option<String>,
}

/// Checks `new_name` and the run in `tree`, and works out [`Renaming`]: the folder becomes
/// `<timestamp part of old name>-<new_name>` in the same parent (just `<new_name>` if the old
/// name has no timestamp), and config.toml's `name` becomes `new_name`.
fn plan_rename(
    tree: &dyn FileTree,
    folder: &Path,
    new_name: &str,
) -> Result<Renaming, FolderError> {
    check_run_name(new_name)?;
    check_run_folder_in(tree, folder)?;
    let old_name = folder_name_of(folder);
    let new_folder_name = match timestamp_prefix(&old_name) {
        Some(ts) => format!("{ts}-{new_name}"),
        None => new_name.to_owned(),
    };
    let target = folder.with_file_name(&new_folder_name);
    let config_path = folder.join(CONFIG_FILE);
    let old_config = match super::read_bytes(tree, &config_path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("read", &config_path)(e)),
    };
    let new_config = match &old_config {
        Some(text) => {
            // Read as a run's config, so a folder from before validation splits keeps reading
            // as validated on test once its config is written back.
            let mut draft =
                ExperimentDraft::from_run_config(text, &config_path.display().to_string())
                    .map_err(|e| FolderError::Config {
                        path: config_path.clone(),
                        message: e.to_string(),
                    })?;
            draft.name = new_name.to_owned();
            Some(draft.to_toml())
        }
        None => None,
    };
    if target != folder && (tree.is_dir(&target) || tree.is_file(&target)) {
        return Err(FolderError::Exists { path: target });
    }
    Ok(Renaming {
        target,
        config_path,
        old_config,
        new_config,
    })
}

/// Deletes the run folder, refusing anything that is not a run folder (no config.toml and no
/// metrics.csv) so a wrong path can never wipe unrelated files.
pub fn delete_run(folder: &Path) -> Result<(), FolderError> {
    check_run_folder(folder)?;
    refuse_held(folder)?;
    fs::remove_dir_all(folder).map_err(io_err("delete", folder))
}

/// Refuses a folder that a process is writing now (training or resuming it, this process
/// included): renamed or deleted under it, its writer would write into a folder that is gone.
fn refuse_held(folder: &Path) -> Result<(), FolderError> {
    match super::held_by(folder) {
        Some(holder) => Err(FolderError::Locked {
            path: folder.to_owned(),
            holder,
        }),
        None => Ok(()),
    }
}
