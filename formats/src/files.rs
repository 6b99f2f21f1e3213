//! Where a data set's files are read from: this computer's disk, or files held in memory.
//!
//! A browser page has no disk: the visitor's chosen files arrive as bytes with their relative
//! paths (`pets/cat/1.jpg` for a chosen folder). [`MemoryFiles`] holds them as a tree with the
//! folders those paths imply, so the loaders walk the same layout rules, and say the same
//! sentences, whether the files lie on a disk or in a page:
//!
//! ```text
//! MemoryFiles { "pets/cat/1.jpg", "pets/cat/2.jpg", "pets/dog/1.png" }
//!   pets/            a folder (it has files under it)
//!   ├── cat/         a folder
//!   │   ├── 1.jpg    a file
//!   │   └── 2.jpg
//!   └── dog/
//!       └── 1.png
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Seek};
use std::path::{Component, Path, PathBuf};

/// A reader the decoders can both stream and seek.
pub trait ReadSeek: BufRead + Seek + Send {}
impl<T: BufRead + Seek + Send> ReadSeek for T {}

/// A tree of folders and files the loaders read; shared by the decoding threads.
pub trait FileTree: Sync {
    /// The names directly in `dir`, each with whether it is a folder, in no particular order.
    fn entries(&self, dir: &Path) -> io::Result<Vec<(OsString, bool)>>;
    /// True for a folder (following links on a disk).
    fn is_dir(&self, path: &Path) -> bool;
    /// True for a file (following links on a disk).
    fn is_file(&self, path: &Path) -> bool;
    /// The file at `path` to read, with its stored length, which bounds what its header may claim.
    fn open(&self, path: &Path) -> io::Result<(Box<dyn ReadSeek + '_>, u64)>;
}

/// This computer's file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl FileTree for Disk {
    fn entries(&self, dir: &Path) -> io::Result<Vec<(OsString, bool)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            out.push((entry.file_name(), entry.path().is_dir()));
        }
        Ok(out)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn open(&self, path: &Path) -> io::Result<(Box<dyn ReadSeek + '_>, u64)> {
        let file = File::open(path)?;
        let len_bytes = file.metadata()?.len();
        Ok((Box::new(BufReader::new(file)), len_bytes))
    }
}

/// Files held in memory under relative paths; folders are the paths' parents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryFiles {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

/// `path` as the tree keys it: its plain names only, so `./pets/cat/`, `/pets/cat` and
/// `pets/cat` are one folder; `None` for a path that climbs out (`..`).
fn key(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::ParentDir => return None,
        }
    }
    Some(out)
}

impl MemoryFiles {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts `bytes` at `path` (a browser's `webkitRelativePath`, or a bare file name), replacing
    /// a file there; a path that climbs out with `..` or names no file is refused.
    pub fn insert(&mut self, path: impl AsRef<Path>, bytes: Vec<u8>) -> io::Result<()> {
        let path = path.as_ref();
        match key(path) {
            Some(key) if key.file_name().is_some() && !self.is_dir(&key) => {
                self.files.insert(key, bytes);
                Ok(())
            }
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} cannot be a file of the tree", path.display()),
            )),
        }
    }

    /// Adds `bytes` at the end of the file at `path`, creating it if missing: how a run's rows
    /// reach a page's memory one by one.
    pub fn append(&mut self, path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
        let path = path.as_ref();
        match key(path).and_then(|key| self.files.get_mut(&key)) {
            Some(file) => {
                file.extend_from_slice(bytes);
                Ok(())
            }
            None => self.insert(path, bytes.to_vec()),
        }
    }

    /// Drops every file under `dir` (or `dir` itself when it is a file): a folder chosen again
    /// replaces what was chosen before.
    pub fn remove(&mut self, dir: &Path) {
        if let Some(dir) = key(dir) {
            self.files.retain(|path, _| !path.starts_with(&dir));
        }
    }

    /// Moves every file under the folder `from` to the same place under `to`, as a disk's
    /// folder rename would; refused when `from` is no folder or `to` already holds something.
    pub fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let refused = |reason: String| io::Error::new(io::ErrorKind::InvalidInput, reason);
        let (Some(from), Some(to)) = (key(from), key(to)) else {
            return Err(refused(
                "a folder of the tree cannot climb out with `..`".into(),
            ));
        };
        if !self.is_dir(&from) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no folder is called {}", from.display()),
            ));
        }
        if self.is_dir(&to) || self.is_file(&to) || to.starts_with(&from) {
            return Err(refused(format!("{} is already taken", to.display())));
        }
        let moved: Vec<PathBuf> = self.under(&from).map(|(path, _)| path.clone()).collect();
        for path in moved {
            if let (Some(bytes), Ok(rest)) = (self.files.remove(&path), path.strip_prefix(&from)) {
                self.files.insert(to.join(rest), bytes);
            }
        }
        Ok(())
    }

    /// Moves every file of `other` in, dropping first whatever lay under its top folders, so
    /// a folder chosen again replaces what was chosen before.
    pub fn replace_with(&mut self, other: MemoryFiles) {
        let tops: std::collections::BTreeSet<PathBuf> = other
            .files
            .keys()
            .filter_map(|path| path.components().next())
            .map(|top| PathBuf::from(top.as_os_str()))
            .collect();
        self.files
            .retain(|path, _| !tops.iter().any(|top| path.starts_with(top)));
        self.files.extend(other.files);
    }

    /// How many files the tree holds.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when the tree holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Bytes held, over every file.
    pub fn total_bytes(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }

    /// The files under `dir` (at any depth) with their paths, in path order.
    fn under<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = (&'a PathBuf, &'a Vec<u8>)> {
        // Paths order by component, so everything under `dir` follows it without a gap.
        self.files
            .range(dir.to_path_buf()..)
            .take_while(move |(path, _)| path.starts_with(dir))
    }
}

impl FileTree for MemoryFiles {
    fn entries(&self, dir: &Path) -> io::Result<Vec<(OsString, bool)>> {
        let not_found = || {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no chosen folder is called {}", dir.display()),
            )
        };
        let dir = key(dir).ok_or_else(not_found)?;
        if !dir.as_os_str().is_empty() && !self.is_dir(&dir) {
            return Err(not_found());
        }
        let mut out: Vec<(OsString, bool)> = Vec::new();
        for (path, _) in self.under(&dir) {
            let Ok(rest) = path.strip_prefix(&dir) else {
                continue;
            };
            let mut parts = rest.components();
            let Some(first) = parts.next() else {
                continue;
            };
            let entry = (first.as_os_str().to_owned(), parts.next().is_some());
            if out.last() != Some(&entry) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    fn is_dir(&self, path: &Path) -> bool {
        key(path).is_some_and(|dir| self.under(&dir).any(|(file, _)| *file != dir))
    }

    fn is_file(&self, path: &Path) -> bool {
        key(path).is_some_and(|file| self.files.contains_key(&file))
    }

    fn open(&self, path: &Path) -> io::Result<(Box<dyn ReadSeek + '_>, u64)> {
        let bytes = key(path)
            .and_then(|file| self.files.get(&file))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no chosen file is called {}", path.display()),
                )
            })?;
        Ok((Box::new(Cursor::new(bytes.as_slice())), bytes.len() as u64))
    }
}

#[cfg(test)]
/// The folder `root` of the disk copied into memory under its own name, as a browser hands
/// over a chosen folder (`webkitRelativePath` starts with the folder's name).
pub(crate) fn memory_copy(root: &Path) -> MemoryFiles {
    let mut tree = MemoryFiles::new();
    let parent = root.parent().unwrap();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(parent).unwrap();
                tree.insert(relative, std::fs::read(&path).unwrap())
                    .unwrap();
            }
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pets() -> MemoryFiles {
        let mut tree = MemoryFiles::new();
        for path in [
            "pets/cat/1.jpg",
            "pets/cat/2.jpg",
            "pets/dog/a/1.png",
            "notes.txt",
        ] {
            tree.insert(path, path.as_bytes().to_vec()).unwrap();
        }
        tree
    }

    #[test]
    fn memory_folders_are_the_parents_of_their_files() {
        let tree = pets();
        let mut entries = tree.entries(Path::new("pets")).unwrap();
        entries.sort();
        assert_eq!(
            entries,
            vec![("cat".into(), true), ("dog".into(), true)],
            "a folder lists each child once"
        );
        let mut top = tree.entries(Path::new("")).unwrap();
        top.sort();
        assert_eq!(
            top,
            vec![("notes.txt".into(), false), ("pets".into(), true)]
        );
        assert!(tree.is_dir(Path::new("/pets/dog/")) && tree.is_dir(Path::new("./pets")));
        assert!(!tree.is_dir(Path::new("pets/cat/1.jpg")) && !tree.is_dir(Path::new("pet")));
        assert!(tree.is_file(Path::new("pets/cat/1.jpg")) && !tree.is_file(Path::new("pets")));
        assert_eq!(
            tree.entries(Path::new("pets/cow")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn memory_files_read_back_with_their_length() {
        let tree = pets();
        let (mut reader, len_bytes) = tree.open(Path::new("pets/dog/a/1.png")).unwrap();
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!((text.as_str(), len_bytes), ("pets/dog/a/1.png", 16));
        assert!(tree.open(Path::new("pets/dog")).is_err());
    }

    #[test]
    fn a_memory_folder_renamed_moves_all_its_files_and_nothing_else() {
        let mut tree = pets();
        tree.insert("pets/catalog.txt", vec![7]).unwrap();
        tree.rename(Path::new("pets/cat"), Path::new("pets/kitten"))
            .unwrap();
        assert!(!tree.is_dir(Path::new("pets/cat")));
        let mut text = String::new();
        let (mut reader, _) = tree.open(Path::new("pets/kitten/2.jpg")).unwrap();
        reader.read_to_string(&mut text).unwrap();
        drop(reader);
        assert_eq!(text, "pets/cat/2.jpg", "the bytes moved with the file");
        assert!(
            tree.is_file(Path::new("pets/catalog.txt")),
            "a sibling stays"
        );
        assert_eq!(tree.len(), 5);
        for taken in ["pets/dog", "notes.txt", "pets/kitten/inner"] {
            let refused = tree.rename(Path::new("pets/kitten"), Path::new(taken));
            assert!(refused.is_err(), "{taken}");
        }
        assert_eq!(
            tree.rename(Path::new("pets/cow"), Path::new("pets/ox"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(tree.len(), 5);
    }

    #[test]
    fn memory_paths_cannot_climb_out_or_shadow_a_folder() {
        let mut tree = pets();
        assert!(tree.insert("../etc/passwd", vec![1]).is_err());
        assert!(
            tree.insert("pets/cat", vec![1]).is_err(),
            "a file where a folder is"
        );
        assert!(tree.insert("/", vec![1]).is_err());
        assert_eq!(tree.len(), 4);
    }

    #[test]
    fn choosing_a_folder_again_replaces_it() {
        let mut tree = pets();
        let mut again = MemoryFiles::new();
        again.insert("pets/cow/1.jpg", vec![7]).unwrap();
        tree.replace_with(again);
        assert_eq!(tree.len(), 2);
        assert!(!tree.is_dir(Path::new("pets/cat")) && tree.is_dir(Path::new("pets/cow")));
        tree.remove(Path::new("pets"));
        assert!(!tree.is_dir(Path::new("pets")));
        assert_eq!(tree.total_bytes(), "notes.txt".len());
    }

    #[test]
    fn appending_grows_a_file_or_starts_one_and_refuses_what_insert_refuses() {
        let mut tree = MemoryFiles::new();
        tree.append("runs/a/metrics.csv", b"epoch\n").unwrap();
        tree.append("runs/a/metrics.csv", b"1\n").unwrap();
        {
            let (mut reader, len_bytes) = tree.open(Path::new("runs/a/metrics.csv")).unwrap();
            let mut text = String::new();
            reader.read_to_string(&mut text).unwrap();
            assert_eq!((text.as_str(), len_bytes), ("epoch\n1\n", 8));
        }
        assert!(
            tree.append("runs/a", b"x").is_err(),
            "a file where a folder is"
        );
        assert!(tree.append("../x", b"x").is_err());
    }
}
