//! Downloading the public data sets (and torchvision's pretrained weights, for
//! [`crate::weights`]), verified against published SHA-256 digests.
//!
//! Everything is written into a scratch folder inside the data root (so the final rename stays
//! on one file system) and moved into place only after every file of the set has arrived and
//! matched its digest. Any failure — network, checksum, cancel, a full disk — removes the
//! scratch folder, so a data set folder never holds a half-written file.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use flate2::bufread::MultiGzDecoder;
use sha2::{Digest, Sha256};

use super::DataError;
use super::cifar::{CIFAR10_FILES, CIFAR10_META_FILE};

/// A data set Kiln knows how to download.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteDataset {
    /// MNIST handwritten digits.
    Mnist,
    /// Fashion-MNIST clothing images.
    FashionMnist,
    /// CIFAR-10 (binary version).
    Cifar10,
}

impl RemoteDataset {
    /// Every downloadable data set.
    pub const ALL: [RemoteDataset; 3] = [Self::Mnist, Self::FashionMnist, Self::Cifar10];

    /// Name of the folder the set lives in under a data root.
    pub fn dir_name(self) -> &'static str {
        match self {
            Self::Mnist => "mnist",
            Self::FashionMnist => "fashion-mnist",
            Self::Cifar10 => "cifar-10-batches-bin",
        }
    }

    /// Name shown to people, e.g. "Fashion-MNIST".
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Mnist => "MNIST",
            Self::FashionMnist => "Fashion-MNIST",
            Self::Cifar10 => "CIFAR-10",
        }
    }

    /// Its folder under the data root, and its name in messages.
    pub(crate) fn destination(self) -> Destination<'static> {
        Destination {
            dir_name: self.dir_name(),
            display_name: self.display_name(),
        }
    }

    /// Name on the command line (`kiln data fetch <name>`), as [`FromStr`] parses it.
    pub fn cli_name(self) -> &'static str {
        match self {
            Self::Mnist => "mnist",
            Self::FashionMnist => "fashion-mnist",
            Self::Cifar10 => "cifar10",
        }
    }
}

impl FromStr for RemoteDataset {
    type Err = DataError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "mnist" => Ok(Self::Mnist),
            "fashion-mnist" | "fashion_mnist" | "fashionmnist" => Ok(Self::FashionMnist),
            "cifar10" | "cifar-10" | "cifar_10" => Ok(Self::Cifar10),
            other => Err(DataError::BadSpec(format!(
                "`{other}` cannot be downloaded; expected mnist, fashion-mnist or cifar10"
            ))),
        }
    }
}

impl fmt::Display for RemoteDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cli_name())
    }
}

/// How far one file's download has come; `bytes_*` count bytes received from the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchProgress {
    /// Name of the file being downloaded.
    pub file: String,
    /// Bytes received so far.
    pub bytes_done: u64,
    /// Size announced by the server, when it announced one.
    pub bytes_total: Option<u64>,
}

/// What a downloaded file is and where its verified content goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Payload<'a> {
    /// A gzip file whose *decompressed* content has the digest; stored decompressed as
    /// `saved_as` so loading needs no decompression.
    Gzip { saved_as: &'a str },
    /// A file kept exactly as it arrives, under its own name.
    AsIs,
    /// A tar.gz archive whose own bytes have the digest; `required` and `optional` members are
    /// extracted by file name (any folder inside the archive is ignored).
    TarGz {
        required: &'a [&'a str],
        optional: &'a [&'a str],
    },
}

/// One file on a server and the digest it must have.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RemoteFile<'a> {
    /// File name on the server, appended to each base URL.
    pub(crate) name: &'a str,
    /// The SHA-256 in hex, or its leading digits where that is all the publisher gives (torch
    /// hub names each weights file by the first 8 digits of its SHA-256 and checks those).
    pub(crate) sha256_hex: &'a str,
    /// What the file is and how it is kept.
    pub(crate) payload: Payload<'a>,
}

/// Where a set of files comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Manifest<'a> {
    /// Mirrors, tried in order for each file.
    pub(crate) base_urls: &'a [&'a str],
    /// The files, all of which must arrive.
    pub(crate) files: &'a [RemoteFile<'a>],
}

/// The folder a download fills, under the data root, and what messages call it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Destination<'a> {
    /// Folder name under the data root.
    pub(crate) dir_name: &'a str,
    /// The thing being downloaded, as a sentence names it.
    pub(crate) display_name: &'a str,
}

// Digests of the decompressed IDX files, as listed in the project's SHA256SUMS.decompressed
// (the content the canonical mirrors serve; checked against the gzip files there).
const MNIST_FILES: [RemoteFile<'static>; 4] = [
    RemoteFile {
        name: "train-images-idx3-ubyte.gz",
        sha256_hex: "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
        payload: Payload::Gzip {
            saved_as: "train-images-idx3-ubyte",
        },
    },
    RemoteFile {
        name: "train-labels-idx1-ubyte.gz",
        sha256_hex: "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
        payload: Payload::Gzip {
            saved_as: "train-labels-idx1-ubyte",
        },
    },
    RemoteFile {
        name: "t10k-images-idx3-ubyte.gz",
        sha256_hex: "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
        payload: Payload::Gzip {
            saved_as: "t10k-images-idx3-ubyte",
        },
    },
    RemoteFile {
        name: "t10k-labels-idx1-ubyte.gz",
        sha256_hex: "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
        payload: Payload::Gzip {
            saved_as: "t10k-labels-idx1-ubyte",
        },
    },
];

const FASHION_MNIST_FILES: [RemoteFile<'static>; 4] = [
    RemoteFile {
        name: "train-images-idx3-ubyte.gz",
        sha256_hex: "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
        payload: Payload::Gzip {
            saved_as: "train-images-idx3-ubyte",
        },
    },
    RemoteFile {
        name: "train-labels-idx1-ubyte.gz",
        sha256_hex: "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
        payload: Payload::Gzip {
            saved_as: "train-labels-idx1-ubyte",
        },
    },
    RemoteFile {
        name: "t10k-images-idx3-ubyte.gz",
        sha256_hex: "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
        payload: Payload::Gzip {
            saved_as: "t10k-images-idx3-ubyte",
        },
    },
    RemoteFile {
        name: "t10k-labels-idx1-ubyte.gz",
        sha256_hex: "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
        payload: Payload::Gzip {
            saved_as: "t10k-labels-idx1-ubyte",
        },
    },
];

// Digest of the archive itself (170 052 171 bytes) from TensorFlow Datasets,
// tensorflow_datasets/url_checksums/cifar10.txt; the archive is verified before extraction.
const CIFAR10_ARCHIVE: [RemoteFile<'static>; 1] = [RemoteFile {
    name: "cifar-10-binary.tar.gz",
    sha256_hex: "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
    payload: Payload::TarGz {
        required: &CIFAR10_FILES,
        optional: &[CIFAR10_META_FILE],
    },
}];

fn manifest(which: RemoteDataset) -> Manifest<'static> {
    match which {
        RemoteDataset::Mnist => Manifest {
            base_urls: &[
                "https://storage.googleapis.com/cvdf-datasets/mnist/",
                "https://ossci-datasets.s3.amazonaws.com/mnist/",
            ],
            files: &MNIST_FILES,
        },
        RemoteDataset::FashionMnist => Manifest {
            base_urls: &["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"],
            files: &FASHION_MNIST_FILES,
        },
        RemoteDataset::Cifar10 => Manifest {
            base_urls: &["https://www.cs.toronto.edu/~kriz/"],
            files: &CIFAR10_ARCHIVE,
        },
    }
}

/// The fewest leading hex digits of a SHA-256 a file is checked against: torch hub's 8.
const MIN_DIGEST_HEX: usize = 8;

/// A member of a verified archive larger than this is not a CIFAR batch.
const MAX_MEMBER_BYTES: u64 = 256 << 20;
/// Progress is reported at most once per this many bytes (and at the start and the end).
const PROGRESS_STEP_BYTES: u64 = 256 << 10;
const CHUNK_BYTES: usize = 64 << 10;

/// Downloads `which` into `data_root/<mnist|fashion-mnist|cifar-10-batches-bin>/`, verifying
/// every file's SHA-256 first, and returns that folder.
pub fn fetch(
    which: RemoteDataset,
    data_root: &Path,
    on_progress: &mut dyn FnMut(&FetchProgress),
    cancel: &AtomicBool,
) -> Result<PathBuf, DataError> {
    download(
        &manifest(which),
        which.destination(),
        data_root,
        on_progress,
        cancel,
    )
}

/// Downloads every file of `manifest` into `data_root/<destination>/`, each verified before
/// it is moved there; returns that folder.
pub(crate) fn download(
    manifest: &Manifest<'_>,
    destination: Destination<'_>,
    data_root: &Path,
    on_progress: &mut dyn FnMut(&FetchProgress),
    cancel: &AtomicBool,
) -> Result<PathBuf, DataError> {
    let mut open = url_opener();
    install(
        destination,
        manifest,
        data_root,
        &mut open,
        on_progress,
        cancel,
    )
}

/// Opens URLs over HTTPS, with timeouts so a stalled transfer fails instead of hanging.
#[cfg(not(target_arch = "wasm32"))]
fn url_opener() -> impl FnMut(&str) -> Result<Opened, DataError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(std::time::Duration::from_secs(30)))
        .timeout_recv_response(Some(std::time::Duration::from_secs(60)))
        .timeout_per_read(Some(std::time::Duration::from_secs(60)))
        .user_agent(concat!("kiln/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    move |url: &str| {
        let response = agent.get(url).call().map_err(|e| DataError::Network {
            url: url.to_string(),
            detail: e.to_string(),
        })?;
        let total = response.body().content_length();
        Ok((
            Box::new(response.into_body().into_reader()) as Box<dyn Read>,
            total,
        ))
    }
}

/// A browser page may read another site's files only where that site allows it (CORS), and the
/// data sets' mirrors do not: the visitor's own copies of the files are asked for instead.
#[cfg(target_arch = "wasm32")]
fn url_opener() -> impl FnMut(&str) -> Result<Opened, DataError> {
    |url: &str| {
        Err(DataError::Network {
            url: url.to_string(),
            detail: "a browser page may not read files of a site that does not allow it, and this \
                     mirror does not: download the files yourself and choose them here"
                .to_owned(),
        })
    }
}

/// An opened URL: the body and the size the server announced.
type Opened = (Box<dyn Read>, Option<u64>);

/// Opens one URL.
type Opener<'o> = dyn FnMut(&str) -> Result<Opened, DataError> + 'o;

/// Removes the scratch folder however `install` ends.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_err(path: &Path, source: io::Error) -> DataError {
    DataError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// The download engine, with the network replaced by `open` so it can be tested offline.
fn install(
    which: Destination<'_>,
    manifest: &Manifest<'_>,
    data_root: &Path,
    open: &mut Opener<'_>,
    on_progress: &mut dyn FnMut(&FetchProgress),
    cancel: &AtomicBool,
) -> Result<PathBuf, DataError> {
    std::fs::create_dir_all(data_root).map_err(|e| write_err(data_root, e))?;
    let scratch_path = data_root.join(format!(
        ".partial-{}-{}",
        which.dir_name,
        std::process::id()
    ));
    // A leftover from a crashed run of a process that had the same id holds nothing useful.
    let _ = std::fs::remove_dir_all(&scratch_path);
    std::fs::create_dir(&scratch_path).map_err(|e| write_err(&scratch_path, e))?;
    let scratch = ScratchDir(scratch_path);

    let mut staged: Vec<String> = Vec::new();
    for file in manifest.files {
        let mut last_err = None;
        for base in manifest.base_urls {
            if cancel.load(Ordering::Relaxed) {
                return Err(cancelled(which));
            }
            let url = format!("{base}{}", file.name);
            match fetch_one(&url, file, &scratch.0, open, on_progress, cancel) {
                Ok(names) => {
                    staged.extend(names);
                    last_err = None;
                    break;
                }
                Err(DataError::Cancelled { .. }) => return Err(cancelled(which)),
                // Another mirror cannot help with a full disk.
                Err(e @ DataError::Write { .. }) => return Err(e),
                Err(e) => last_err = Some(e),
            }
        }
        if let Some(e) = last_err {
            return Err(e);
        }
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(cancelled(which));
    }

    let final_dir = data_root.join(which.dir_name);
    std::fs::create_dir_all(&final_dir).map_err(|e| write_err(&final_dir, e))?;
    for name in &staged {
        let target = final_dir.join(name);
        std::fs::rename(scratch.0.join(name), &target).map_err(|e| write_err(&target, e))?;
    }
    drop(scratch);
    Ok(final_dir)
}

fn cancelled(which: Destination<'_>) -> DataError {
    DataError::Cancelled {
        what: which.display_name.to_string(),
    }
}

/// Counts bytes as they arrive, reports progress, and stops when cancelled.
struct ProgressReader<'a> {
    inner: Box<dyn Read + 'a>,
    file: &'a str,
    bytes_done: u64,
    bytes_reported: Option<u64>,
    bytes_total: Option<u64>,
    on_progress: &'a mut dyn FnMut(&FetchProgress),
    cancel: &'a AtomicBool,
}

impl ProgressReader<'_> {
    fn report(&mut self) {
        self.bytes_reported = Some(self.bytes_done);
        (self.on_progress)(&FetchProgress {
            file: self.file.to_string(),
            bytes_done: self.bytes_done,
            bytes_total: self.bytes_total,
        });
    }
}

impl Read for ProgressReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.bytes_reported.is_none() {
            self.report();
        }
        if self.cancel.load(Ordering::Relaxed) {
            return Err(io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.bytes_done += n as u64;
        let since = self.bytes_done - self.bytes_reported.unwrap_or(0);
        if n == 0 || since >= PROGRESS_STEP_BYTES {
            self.report();
        }
        Ok(n)
    }
}

/// Downloads one file from one URL into `scratch`; returns the names of the files it staged.
fn fetch_one(
    url: &str,
    file: &RemoteFile<'_>,
    scratch: &Path,
    open: &mut Opener<'_>,
    on_progress: &mut dyn FnMut(&FetchProgress),
    cancel: &AtomicBool,
) -> Result<Vec<String>, DataError> {
    let (body, bytes_total) = open(url)?;
    let progress = ProgressReader {
        inner: body,
        file: file.name,
        bytes_done: 0,
        bytes_reported: None,
        bytes_total,
        on_progress,
        cancel,
    };
    let ctx = Ctx {
        url,
        name: file.name,
        cancel,
    };
    match file.payload {
        Payload::Gzip { saved_as } => {
            let mut buffered = BufReader::new(progress);
            let head = buffered.fill_buf().map_err(|e| ctx.read_error(e))?;
            // Some servers send gzip with Content-Encoding, which the client already undid;
            // the digest of the content decides either way.
            let gzipped = head.starts_with(&[0x1f, 0x8b]);
            let mut content: Box<dyn Read> = if gzipped {
                Box::new(MultiGzDecoder::new(buffered))
            } else {
                Box::new(buffered)
            };
            save_verified(&mut content, file.sha256_hex, &scratch.join(saved_as), &ctx)?;
            Ok(vec![saved_as.to_string()])
        }
        Payload::AsIs => {
            let mut progress = progress;
            save_verified(
                &mut progress,
                file.sha256_hex,
                &scratch.join(file.name),
                &ctx,
            )?;
            Ok(vec![file.name.to_string()])
        }
        Payload::TarGz { required, optional } => {
            let archive = scratch.join(file.name);
            let mut progress = progress;
            save_verified(&mut progress, file.sha256_hex, &archive, &ctx)?;
            let names = extract_members(&archive, scratch, required, optional, &ctx)?;
            let _ = std::fs::remove_file(&archive);
            Ok(names)
        }
    }
}

/// Where a byte stream comes from, for error messages and cancelling.
struct Ctx<'a> {
    url: &'a str,
    name: &'a str,
    cancel: &'a AtomicBool,
}

impl Ctx<'_> {
    fn read_error(&self, e: io::Error) -> DataError {
        if self.cancel.load(Ordering::Relaxed) {
            return DataError::Cancelled {
                what: self.name.to_string(),
            };
        }
        DataError::Network {
            url: self.url.to_string(),
            detail: e.to_string(),
        }
    }
}

/// Copies `reader` into `dest` while hashing it and keeps `dest` only when the SHA-256 of what
/// arrived begins with `expected_sha256_hex` (is it, for a whole digest); on any failure `dest`
/// does not exist afterwards.
fn save_verified(
    reader: &mut dyn Read,
    expected_sha256_hex: &str,
    dest: &Path,
    ctx: &Ctx<'_>,
) -> Result<(), DataError> {
    let result = copy_hashed(reader, dest, ctx).and_then(|actual| {
        let expected = expected_sha256_hex.to_ascii_lowercase();
        if expected.len() >= MIN_DIGEST_HEX && actual.starts_with(&expected) {
            Ok(())
        } else {
            Err(DataError::ChecksumMismatch {
                file: ctx.name.to_string(),
                url: ctx.url.to_string(),
                expected_sha256: expected_sha256_hex.to_string(),
                actual_sha256: actual,
            })
        }
    });
    if result.is_err() {
        let _ = std::fs::remove_file(dest);
    }
    result
}

/// Copies `reader` into a new file `dest`; returns the hex SHA-256 of the bytes copied.
fn copy_hashed(reader: &mut dyn Read, dest: &Path, ctx: &Ctx<'_>) -> Result<String, DataError> {
    let mut out = File::create(dest).map_err(|e| write_err(dest, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        if ctx.cancel.load(Ordering::Relaxed) {
            return Err(DataError::Cancelled {
                what: ctx.name.to_string(),
            });
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ctx.read_error(e)),
        };
        let chunk = buf.get(..n).unwrap_or_default();
        hasher.update(chunk);
        out.write_all(chunk).map_err(|e| write_err(dest, e))?;
    }
    // A full disk may only show when the data is flushed; the file must not be trusted before.
    out.sync_all().map_err(|e| write_err(dest, e))?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Extracts the wanted members of a verified tar.gz into `into`, by file name only (so no
/// path inside the archive can point outside `into`).
fn extract_members(
    archive: &Path,
    into: &Path,
    required: &[&str],
    optional: &[&str],
    ctx: &Ctx<'_>,
) -> Result<Vec<String>, DataError> {
    let malformed = |detail: String| DataError::Malformed {
        path: archive.to_path_buf(),
        detail: format!("{detail}; the archive passed its checksum, so report this as a bug"),
    };
    let file = File::open(archive).map_err(|source| DataError::Read {
        path: archive.to_path_buf(),
        source,
    })?;
    let mut tar = tar::Archive::new(MultiGzDecoder::new(BufReader::new(file)));
    let mut found: Vec<String> = Vec::new();
    let entries = tar.entries().map_err(|e| malformed(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| malformed(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| malformed(e.to_string()))?;
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let wanted = required.contains(&name.as_str()) || optional.contains(&name.as_str());
        if !wanted || found.contains(&name) {
            continue;
        }
        if entry.size() > MAX_MEMBER_BYTES {
            return Err(malformed(format!(
                "member {name} is {} bytes, too large",
                entry.size()
            )));
        }
        let dest = into.join(&name);
        let mut out = File::create(&dest).map_err(|e| write_err(&dest, e))?;
        let mut buf = vec![0u8; CHUNK_BYTES];
        loop {
            if ctx.cancel.load(Ordering::Relaxed) {
                return Err(DataError::Cancelled {
                    what: ctx.name.to_string(),
                });
            }
            let n = match entry.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(malformed(e.to_string())),
            };
            out.write_all(buf.get(..n).unwrap_or_default())
                .map_err(|e| write_err(&dest, e))?;
        }
        out.sync_all().map_err(|e| write_err(&dest, e))?;
        found.push(name);
    }
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|r| !found.iter().any(|f| f == r))
        .collect();
    if !missing.is_empty() {
        return Err(malformed(format!("it lacks {}", missing.join(", "))));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::fixtures::{cifar_records, gzip, idx_images_bytes, idx_labels_bytes};
    use crate::data::{load_from_dir, test_dir};
    use std::io::Cursor;

    fn sha(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    /// A manifest of two gzip files, `a` and `b`, with the digests of `a_content`/`b_content`.
    fn gz_manifest(a_content: &[u8], b_content: &[u8]) -> Manifest<'static> {
        let files = vec![
            RemoteFile {
                name: "a.gz",
                sha256_hex: leak(sha(a_content)),
                payload: Payload::Gzip { saved_as: "a" },
            },
            RemoteFile {
                name: "b.gz",
                sha256_hex: leak(sha(b_content)),
                payload: Payload::Gzip { saved_as: "b" },
            },
        ];
        Manifest {
            base_urls: &["https://one.invalid/", "https://two.invalid/"],
            files: Box::leak(files.into_boxed_slice()),
        }
    }

    type OpenResult = Result<(Box<dyn Read>, Option<u64>), DataError>;

    fn serve(files: Vec<(&'static str, Vec<u8>)>) -> impl FnMut(&str) -> OpenResult {
        move |url: &str| {
            for (u, body) in &files {
                if url == *u {
                    return Ok((
                        Box::new(Cursor::new(body.clone())) as Box<dyn Read>,
                        Some(body.len() as u64),
                    ));
                }
            }
            Err(DataError::Network {
                url: url.to_string(),
                detail: "404".into(),
            })
        }
    }

    /// Everything left under `root` (relative paths), to prove nothing half-written remains.
    fn leftovers(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(root).unwrap().display().to_string());
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn verified_files_are_placed_with_mirror_fallback() {
        let root = test_dir("fetch-ok");
        let (a, b) = (vec![1u8; 100_000], b"bee".to_vec());
        let m = gz_manifest(&a, &b);
        // `a` only on the second mirror; `b` served uncompressed, as after Content-Encoding.
        let mut open = serve(vec![
            ("https://two.invalid/a.gz", gzip(&a)),
            ("https://one.invalid/b.gz", b.clone()),
        ]);
        let mut seen = Vec::new();
        let dir = install(
            RemoteDataset::Mnist.destination(),
            &m,
            &root,
            &mut open,
            &mut |p| seen.push(p.clone()),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(dir, root.join("mnist"));
        assert_eq!(std::fs::read(dir.join("a")).unwrap(), a);
        assert_eq!(std::fs::read(dir.join("b")).unwrap(), b);
        assert_eq!(leftovers(&root), vec!["mnist", "mnist/a", "mnist/b"]);
        let last_a = seen.iter().rfind(|p| p.file == "a.gz").unwrap();
        assert_eq!(Some(last_a.bytes_done), last_a.bytes_total);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_file_kept_as_is_is_checked_against_the_leading_digits_of_its_digest() {
        let root = test_dir("fetch-as-is");
        let body = vec![3u8; 70_000];
        let digest = sha(&body);
        let manifest = |digits: &str| Manifest {
            base_urls: &["https://one.invalid/"],
            files: Box::leak(
                vec![RemoteFile {
                    name: "net-abcd.pth",
                    sha256_hex: leak(digits.to_owned()),
                    payload: Payload::AsIs,
                }]
                .into_boxed_slice(),
            ),
        };
        let destination = Destination {
            dir_name: "weights",
            display_name: "the weights",
        };
        let fetch_with = |digits: &str| {
            let mut open = serve(vec![("https://one.invalid/net-abcd.pth", body.clone())]);
            install(
                destination,
                &manifest(digits),
                &root,
                &mut open,
                &mut |_| {},
                &AtomicBool::new(false),
            )
        };
        // Other leading digits, or fewer than torch hub's 8, keep nothing.
        let wrong = if digest.starts_with('0') { "1" } else { "0" };
        for digits in [format!("{wrong}{}", &digest[1..8]), digest[..7].to_owned()] {
            let err = fetch_with(&digits).expect_err("not the published file");
            assert!(matches!(err, DataError::ChecksumMismatch { .. }), "{err}");
            assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
        }
        let dir = fetch_with(&digest[..8]).expect("the first 8 digits match");
        assert_eq!(std::fs::read(dir.join("net-abcd.pth")).unwrap(), body);
        assert_eq!(leftovers(&root), vec!["weights", "weights/net-abcd.pth"]);
    }

    #[test]
    fn checksum_mismatch_leaves_nothing() {
        let root = test_dir("fetch-mismatch");
        let m = gz_manifest(b"good a", b"good b");
        let mut open = serve(vec![
            ("https://one.invalid/a.gz", gzip(b"good a")),
            ("https://one.invalid/b.gz", gzip(b"evil b")),
            ("https://two.invalid/b.gz", gzip(b"evil b")),
        ]);
        let err = install(
            RemoteDataset::Mnist.destination(),
            &m,
            &root,
            &mut open,
            &mut |_| {},
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(
            matches!(err, DataError::ChecksumMismatch { ref file, .. } if file == "b.gz"),
            "{err}"
        );
        assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
        // A truncated gzip download is a failed download, not a file.
        let full = gzip(&vec![7u8; 50_000]);
        let m = gz_manifest(&vec![7u8; 50_000], b"x");
        let mut open = serve(vec![(
            "https://one.invalid/a.gz",
            full[..full.len() / 2].to_vec(),
        )]);
        let err = install(
            RemoteDataset::Mnist.destination(),
            &m,
            &root,
            &mut open,
            &mut |_| {},
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, DataError::Network { .. }), "{err}");
        assert!(leftovers(&root).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cancel_leaves_nothing() {
        let root = test_dir("fetch-cancel");
        let big = vec![3u8; 2_000_000];
        let m = gz_manifest(&big, b"b");
        let mut open = serve(vec![
            ("https://one.invalid/a.gz", big.clone()),
            ("https://one.invalid/b.gz", b"b".to_vec()),
        ]);
        let cancel = AtomicBool::new(false);
        let err = install(
            RemoteDataset::Mnist.destination(),
            &m,
            &root,
            &mut open,
            &mut |p| {
                if p.bytes_done > 0 {
                    cancel.store(true, Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .unwrap_err();
        assert!(matches!(err, DataError::Cancelled { .. }), "{err}");
        assert!(leftovers(&root).is_empty(), "{:?}", leftovers(&root));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn write_failure_leaves_nothing_half_written() {
        let root = test_dir("fetch-write");
        // The target folder's name is taken by a file, so moving into place must fail.
        std::fs::write(root.join("mnist"), b"in the way").unwrap();
        let m = gz_manifest(b"a", b"b");
        let mut open = serve(vec![
            ("https://one.invalid/a.gz", gzip(b"a")),
            ("https://one.invalid/b.gz", gzip(b"b")),
        ]);
        let err = install(
            RemoteDataset::Mnist.destination(),
            &m,
            &root,
            &mut open,
            &mut |_| {},
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, DataError::Write { .. }), "{err}");
        assert_eq!(leftovers(&root), vec!["mnist"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn verified_archive_is_extracted_by_name() {
        let root = test_dir("fetch-tar");
        let mut builder = tar::Builder::new(Vec::new());
        let mut add = |path: &str, data: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            builder.append_data(&mut h, path, data).unwrap();
        };
        for (k, name) in CIFAR10_FILES.iter().enumerate() {
            add(
                &format!("cifar-10-batches-bin/{name}"),
                &cifar_records(&[k as u8]),
            );
        }
        add("cifar-10-batches-bin/readme.html", b"<p>not wanted</p>");
        let archive = gzip(&builder.into_inner().unwrap());
        let files = [RemoteFile {
            name: "c.tar.gz",
            sha256_hex: leak(sha(&archive)),
            payload: Payload::TarGz {
                required: &CIFAR10_FILES,
                optional: &[CIFAR10_META_FILE],
            },
        }];
        let m = Manifest {
            base_urls: &["https://x.invalid/"],
            files: &files,
        };
        let mut open = serve(vec![("https://x.invalid/c.tar.gz", archive.clone())]);
        let dir = install(
            RemoteDataset::Cifar10.destination(),
            &m,
            &root,
            &mut open,
            &mut |_| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        let ds = load_from_dir(RemoteDataset::Cifar10, &dir).unwrap();
        assert_eq!(ds.train.labels, vec![0, 1, 2, 3, 4]);
        assert_eq!(ds.test.labels, vec![5]);
        assert!(!dir.join("readme.html").exists());
        assert_eq!(leftovers(&root).len(), 7);
        // A corrupted archive fails its checksum before anything is extracted.
        let other = test_dir("fetch-tar-bad");
        let mut bad = archive;
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        let mut open = serve(vec![("https://x.invalid/c.tar.gz", bad)]);
        let err = install(
            RemoteDataset::Cifar10.destination(),
            &m,
            &other,
            &mut open,
            &mut |_| {},
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(err, DataError::ChecksumMismatch { .. }), "{err}");
        assert!(leftovers(&other).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&other).unwrap();
    }

    #[test]
    fn remote_names_round_trip() {
        for which in RemoteDataset::ALL {
            assert_eq!(which.to_string().parse::<RemoteDataset>().unwrap(), which);
        }
        assert!("imagenet".parse::<RemoteDataset>().is_err());
        // Manifests are well formed.
        for which in RemoteDataset::ALL {
            for f in manifest(which).files {
                assert_eq!(f.sha256_hex.len(), 64);
                assert!(f.sha256_hex.bytes().all(|b| b.is_ascii_hexdigit()));
            }
        }
        let _ = (idx_images_bytes(1, 1, 1, &[0]), idx_labels_bytes(&[0]));
    }
}
