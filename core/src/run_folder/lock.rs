//! One writer per folder: a process that writes a run folder (training it, resuming it) holds
//! an advisory lock on the folder's `.kiln-lock` for as long as it writes. A second writer is
//! refused with a sentence naming the first. The operating system drops the lock when its
//! process ends however it ends, so a `kill -9` or a crash never leaves a folder locked.
//!
//! The lock is the standard library's file lock (`flock` on Unix, `LockFileEx` on Windows).
//! Windows keeps other processes from reading a locked file, so who holds the lock is written
//! beside it, in `.kiln-writer`, once the lock is held.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{FolderError, io_err, timestamp};

/// The file whose lock is the folder's.
pub const LOCK_FILE: &str = ".kiln-lock";
/// Who holds the lock, for the sentence that refuses a second writer.
pub const WRITER_FILE: &str = ".kiln-writer";

/// The hold of one process on a folder: writing there is this process's alone until it is
/// dropped (or the process ends).
#[derive(Debug)]
pub struct FolderLock {
    folder: PathBuf,
    /// Open for as long as the lock is held: closing it releases the lock.
    _file: File,
}

impl FolderLock {
    /// Takes `folder` for this process, or says which process writes it now. Never waits: a
    /// folder in use is refused at once.
    pub fn acquire(folder: &Path) -> Result<Self, FolderError> {
        let path = folder.join(LOCK_FILE);
        // Never truncated on open: the file is empty, what it says is in WRITER_FILE.
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(FolderError::Locked {
                    path: folder.to_owned(),
                    holder: holder(folder),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io_err("lock", &path)(e)),
        }
        let writer = folder.join(WRITER_FILE);
        // What it says is a courtesy to the refused: failing to write it does not stop the run.
        let _ = File::create(&writer).and_then(|mut f| f.write_all(this_process().as_bytes()));
        Ok(Self {
            folder: folder.to_owned(),
            _file: file,
        })
    }

    /// The folder held.
    pub fn folder(&self) -> &Path {
        &self.folder
    }
}

/// Whether some process holds `folder` now, and if so who: for actions that must not touch a
/// folder being written (delete, rename). `None` also where the folder has never been locked.
pub fn held_by(folder: &Path) -> Option<String> {
    let file = OpenOptions::new()
        .write(true)
        .open(folder.join(LOCK_FILE))
        .ok()?;
    match file.try_lock() {
        Err(TryLockError::WouldBlock) => Some(holder(folder)),
        // Locked by nobody (the lock is dropped with `file`), or a file system without locks.
        _ => None,
    }
}

/// "process 4242 (kiln train), since 20261206-201305", read from the folder.
fn holder(folder: &Path) -> String {
    std::fs::read_to_string(folder.join(WRITER_FILE))
        .ok()
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "another process".to_owned())
}

/// This process as [`holder`] names it: its id, its program and subcommand, when it took hold.
fn this_process() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .as_deref()
        .map(Path::new)
        .and_then(Path::file_stem)
        .map_or_else(|| "kiln".to_owned(), |s| s.to_string_lossy().into_owned());
    let command = match args.next().filter(|a| !a.starts_with('-')) {
        Some(sub) => format!("{program} {sub}"),
        None => program,
    };
    format!(
        "process {} ({command}), since {} UTC",
        std::process::id(),
        timestamp(web_time::SystemTime::now())
    )
}
