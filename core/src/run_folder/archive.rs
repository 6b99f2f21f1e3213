//! A run folder as one file: a tar archive to keep, send or carry to another machine (or out of a
//! browser page), and imported back into a runs folder there, where it lists, plots, compares,
//! resumes and exports as a run trained on that machine.
//!
//! ```text
//! 20261204-101500-mnist-mlp.tar
//!   20261204-101500-mnist-mlp/config.toml
//!   20261204-101500-mnist-mlp/metrics.csv
//!   20261204-101500-mnist-mlp/…                  every file of the folder, checkpoints included
//! ```
//!
//! Import trusts nothing in the archive: only plain files under one folder are taken (no links,
//! no `..`, no absolute paths), a cut or damaged archive is refused whole, and the folder is
//! written under a free name, so an import never replaces a run.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use flate2::read::GzDecoder;
use kiln_formats::files::{FileTree, MemoryFiles};

use super::{CONFIG_FILE, FolderError, METRICS_FILE, check_run_folder_in, folder_name_of};

/// The extension of a run folder archive, without the dot.
pub const ARCHIVE_EXTENSION: &str = "tar";

/// The most bytes an imported run may hold: far above a run of the reference workloads with its
/// checkpoints, far below what would exhaust a browser page's memory.
pub const MAX_ARCHIVE_BYTES: u64 = 4 << 30;

/// How deep [`pack`] walks below a run folder.
const MAX_DEPTH: usize = 8;

/// tar's block: headers and file data are padded to it; two zero blocks end an archive.
const BLOCK: u64 = 512;

/// Why an archive cannot be imported; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The bytes are not a tar archive (or a gzipped one).
    #[error(
        "it is not a run folder archive ({reason}); choose a .tar file that Kiln's Archive… wrote"
    )]
    NotAnArchive {
        /// What the tar reader said.
        reason: String,
    },
    /// The archive ends before its end marker: a cut download or copy.
    #[error("the archive is cut short (its end is missing); copy or download it again")]
    Truncated,
    /// An entry Kiln will not write: a link, a device, a path leaving the folder.
    #[error(
        "the archive holds {entry}, which {reason}; a run folder archive holds only the files of one folder"
    )]
    Refused {
        /// The entry's path as the archive names it.
        entry: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The files do not make a run.
    #[error("the archive holds no run: {reason}; choose an archive that Kiln's Archive… wrote")]
    NotARun {
        /// What is missing.
        reason: String,
    },
    /// The archive unpacks to more than [`MAX_ARCHIVE_BYTES`].
    #[error("the archive unpacks to more than {} GB, more than any run holds; it is not a run folder archive", MAX_ARCHIVE_BYTES >> 30)]
    TooLarge,
    /// The run folder could not be read or written.
    #[error(transparent)]
    Folder(#[from] FolderError),
}

/// A run folder read from an archive and checked: its folder's name and its files, by their
/// paths inside the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunArchive {
    /// The run folder's name, e.g. `20261204-101500-mnist-mlp`.
    pub name: String,
    /// Every file, by its path relative to the run folder, in archive order.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

/// Packs every file under the run folder `folder` of `tree` into a tar archive whose one folder
/// is `folder`'s name. Files are in name order with fixed modes and times, so one folder always
/// packs to the same bytes; a temporary file of an unfinished atomic write is left out.
pub fn pack(tree: &dyn FileTree, folder: &Path) -> Result<Vec<u8>, FolderError> {
    check_run_folder_in(tree, folder)?;
    let name = PathBuf::from(folder_name_of(folder));
    let mut builder = tar::Builder::new(Vec::new());
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        // Kiln's folders are two deep; a link back up (followed as a folder) must not loop.
        if relative.components().count() > MAX_DEPTH {
            continue;
        }
        let dir = folder.join(&relative);
        let mut entries = tree.entries(&dir).map_err(|source| FolderError::Io {
            action: "read",
            path: dir.clone(),
            source,
        })?;
        entries.sort();
        let mut folders = Vec::new();
        for (entry, is_dir) in entries {
            let path = relative.join(&entry);
            if is_dir {
                folders.push(path);
            } else if !entry.to_string_lossy().ends_with(".tmp")
                && ![super::LOCK_FILE, super::WRITER_FILE]
                    .iter()
                    .any(|own| entry.as_os_str() == *own)
            {
                append_file(&mut builder, tree, folder, &name, &path)?;
            }
        }
        // Each folder's files in name order, then its folders in name order, depth first.
        pending.extend(folders.into_iter().rev());
    }
    builder.into_inner().map_err(|source| FolderError::Io {
        action: "pack",
        path: folder.to_owned(),
        source,
    })
}

/// Adds `folder/relative` to the archive as `name/relative`.
fn append_file(
    builder: &mut tar::Builder<Vec<u8>>,
    tree: &dyn FileTree,
    folder: &Path,
    name: &Path,
    relative: &Path,
) -> Result<(), FolderError> {
    let path = folder.join(relative);
    let bytes = super::reader::read_bytes(tree, &path).map_err(super::io_err("read", &path))?;
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    builder
        .append_data(&mut header, name.join(relative), bytes.as_slice())
        .map_err(|source| FolderError::Io {
            action: "pack",
            path,
            source,
        })
}

/// Reads and checks an archive (plain or gzipped tar) of one run folder; nothing is written.
pub fn read_archive(bytes: &[u8]) -> Result<RunArchive, ArchiveError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut unpacked = Vec::new();
        GzDecoder::new(bytes)
            .take(MAX_ARCHIVE_BYTES + 1)
            .read_to_end(&mut unpacked)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => ArchiveError::Truncated,
                _ => ArchiveError::NotAnArchive {
                    reason: format!("its gzip stream is damaged: {e}"),
                },
            })?;
        if unpacked.len() as u64 > MAX_ARCHIVE_BYTES {
            return Err(ArchiveError::TooLarge);
        }
        return read_tar(&unpacked);
    }
    read_tar(bytes)
}

/// [`read_archive`] of the tar stream itself.
fn read_tar(bytes: &[u8]) -> Result<RunArchive, ArchiveError> {
    if bytes.is_empty() {
        return Err(ArchiveError::NotAnArchive {
            reason: "the file is empty".to_owned(),
        });
    }
    let not_tar = |e: io::Error| ArchiveError::NotAnArchive {
        reason: e.to_string(),
    };
    let mut archive = tar::Archive::new(bytes);
    let mut name: Option<String> = None;
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut total = 0u64;
    // Where the last entry's data ends: the end marker must follow it.
    let mut data_end = 0u64;
    for entry in archive.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        let shown = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let refused = |reason| ArchiveError::Refused {
            entry: shown.clone(),
            reason,
        };
        let size = entry.size();
        data_end = entry.raw_file_position() + size.div_ceil(BLOCK) * BLOCK;
        let kind = entry.header().entry_type();
        let is_file = kind.is_file() || kind == tar::EntryType::Continuous;
        // GNU tar stores a file met twice (Kiln's checkpoints share files) as a hard link to
        // the first: its bytes are those of that earlier entry of the archive.
        let linked = match kind.is_hard_link() {
            true => Some(
                entry
                    .link_name()
                    .map_err(not_tar)?
                    .ok_or_else(|| refused("is a link to nothing"))?
                    .into_owned(),
            ),
            false => None,
        };
        if !is_file && !kind.is_dir() && linked.is_none() {
            return Err(refused("is a link or a device, not a file"));
        }
        let path = entry.path().map_err(not_tar)?.into_owned();
        let (top, inside) = split_top(&path).ok_or_else(|| refused("leaves the run's folder"))?;
        match &name {
            Some(first) if *first != top => {
                return Err(refused("is in a second folder beside the run's"));
            }
            Some(_) => {}
            None => name = Some(top),
        }
        if kind.is_dir() {
            continue;
        }
        if inside.as_os_str().is_empty() {
            return Err(refused("is a file beside the run's folder, not in it"));
        }
        let data = match linked {
            Some(target) => {
                let target = split_top(&target)
                    .filter(|(top, _)| name.as_ref() == Some(top))
                    .and_then(|(_, inside)| files.iter().find(|(path, _)| *path == inside))
                    .ok_or_else(|| refused("is a link to a file that is not earlier in it"))?;
                target.1.clone()
            }
            None => {
                if total + size > MAX_ARCHIVE_BYTES {
                    return Err(ArchiveError::TooLarge);
                }
                let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
                entry.read_to_end(&mut data).map_err(not_tar)?;
                if data.len() as u64 != size {
                    return Err(ArchiveError::Truncated);
                }
                data
            }
        };
        total += data.len() as u64;
        if total > MAX_ARCHIVE_BYTES {
            return Err(ArchiveError::TooLarge);
        }
        files.push((inside, data));
    }
    // tar ends with two zero blocks; an archive that stops before them was cut, perhaps
    // between two files, which the entries alone would not show.
    let end = usize::try_from(data_end + 2 * BLOCK).unwrap_or(usize::MAX);
    let marker = bytes.get(usize::try_from(data_end).unwrap_or(usize::MAX)..end);
    if !marker.is_some_and(|m| m.iter().all(|&b| b == 0)) {
        return Err(ArchiveError::Truncated);
    }
    let Some(name) = name else {
        return Err(ArchiveError::NotARun {
            reason: "it is empty".to_owned(),
        });
    };
    let has = |file: &str| files.iter().any(|(path, _)| path == Path::new(file));
    if !has(CONFIG_FILE) && !has(METRICS_FILE) {
        return Err(ArchiveError::NotARun {
            reason: format!("{name} has neither {CONFIG_FILE} nor {METRICS_FILE}"),
        });
    }
    Ok(RunArchive { name, files })
}

/// The folder an entry's path starts with and the rest of it; `None` for a path that is absolute
/// or climbs out with `..`. A leading `./` (as `tar -cf a.tar ./run` writes) is dropped.
fn split_top(path: &Path) -> Option<(String, PathBuf)> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let mut parts = parts.into_iter();
    let top = parts.next()?;
    // Names a Windows folder cannot hold would fail there half-way through the writing.
    if top
        .chars()
        .any(|c| c.is_control() || "<>:\"|?*\\".contains(c))
    {
        return None;
    }
    Some((top, parts.collect()))
}

/// Writes `archive` as a new folder under `runs_dir` (created if missing), named as the archive
/// names it or with `-2`, `-3`… when that is taken, and hands back its path. A failed write
/// removes what it wrote.
#[cfg(not(target_arch = "wasm32"))]
pub fn import(archive: &RunArchive, runs_dir: &Path) -> Result<PathBuf, FolderError> {
    let folder = super::writer::create_unique_dir(runs_dir, &archive.name)?;
    let written = archive.files.iter().try_for_each(|(relative, bytes)| {
        let path = folder.join(relative);
        let parent = path.parent().unwrap_or(&folder);
        std::fs::create_dir_all(parent)
            .and_then(|()| std::fs::write(&path, bytes))
            .map_err(super::io_err("write", &path))
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&folder);
        return Err(e);
    }
    Ok(folder)
}

/// [`import`] into files held in memory, as a browser page keeps its runs: the same free name
/// rule, nothing on a disk.
pub fn import_in_memory(
    archive: &RunArchive,
    files: &mut MemoryFiles,
    runs_dir: &Path,
) -> Result<PathBuf, FolderError> {
    let folder = super::writer::free_folder_in(files, runs_dir, &archive.name);
    for (relative, bytes) in &archive.files {
        let path = folder.join(relative);
        files
            .insert(&path, bytes.clone())
            .map_err(super::io_err("write", &path))?;
    }
    Ok(folder)
}
