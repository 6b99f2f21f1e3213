//! The one error type of the data layer; every message names the file and says what to do.

use std::io;
use std::path::PathBuf;

/// Why a data set could not be found, read, parsed or downloaded.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A file or folder exists but could not be read.
    #[error("could not read {}: {source}; check that it exists and that you may read it", .path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },

    /// A file or folder could not be written (disk full, no permission, …).
    #[error("could not write {}: {source}; check the free disk space and the folder's permissions", .path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },

    /// A file does not start with the magic number of the format it should have.
    #[error("{}: wrong magic number {found:#010x}, expected {expected:#010x} ({what}); check that it is the right file", .path.display())]
    WrongMagic {
        /// The file.
        path: PathBuf,
        /// The first four bytes, big-endian.
        found: u32,
        /// The magic number the format requires.
        expected: u32,
        /// What the expected magic number stands for, e.g. "an IDX image file".
        what: &'static str,
    },

    /// A file holds less data than its header or format promises.
    #[error("{} is truncated: {detail}; delete it and download it again", .path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What was promised and what was found.
        detail: String,
    },

    /// A gzip file is damaged (cut short or corrupt), so its content cannot be trusted.
    #[error("{} is not a complete gzip file ({detail}); delete it and download it again", .path.display())]
    CorruptGzip {
        /// The file.
        path: PathBuf,
        /// What the decompressor said.
        detail: String,
    },

    /// A file's content contradicts its format or its companion files.
    #[error("{} is malformed: {detail}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The problem and what to do about it.
        detail: String,
    },

    /// A label is not a valid class index.
    #[error("label {label} in {} is out of range for {num_classes} classes; the file is corrupt or belongs to another data set", .path.display())]
    LabelOutOfRange {
        /// The label file.
        path: PathBuf,
        /// The offending label.
        label: u8,
        /// How many classes the data set has.
        num_classes: usize,
    },

    /// A named data set is in none of the places searched.
    #[error("{name} was not found. Looked in: {}. Run `kiln data fetch {fetch_name}` or pass --data-dir", .looked_in.join(", "))]
    NotFound {
        /// The data set's display name, e.g. "MNIST".
        name: &'static str,
        /// The name `kiln data fetch` takes, e.g. "mnist".
        fetch_name: &'static str,
        /// Every folder searched, in order, each with a note when it held an incomplete copy.
        looked_in: Vec<String>,
    },

    /// An image in an image-folder data set could not be decoded.
    #[error("could not decode image {}: {detail}; remove or replace it", .path.display())]
    BadImage {
        /// The image file.
        path: PathBuf,
        /// What the decoder said.
        detail: String,
    },

    /// An image folder does not have the layout of a data set.
    #[error("image folder {}: {problem}", .path.display())]
    BadFolder {
        /// The folder.
        path: PathBuf,
        /// The problem and what to do about it.
        problem: String,
    },

    /// A labels file (CSV or JSON lines of image paths and labels) cannot be read as one.
    #[error("labels file {}: {problem}", .path.display())]
    BadLabels {
        /// The labels file.
        path: PathBuf,
        /// The problem and what to do about it.
        problem: String,
    },

    /// A data set name or option could not be understood.
    #[error("{0}")]
    BadSpec(String),

    /// A download failed on the network.
    #[error("downloading {url} failed: {detail}; check the network connection and try again")]
    Network {
        /// The address tried last.
        url: String,
        /// What went wrong.
        detail: String,
    },

    /// Downloaded content did not match its published SHA-256.
    #[error(
        "{file} from {url} does not match its published SHA-256 (expected {expected_sha256}, got {actual_sha256}); nothing was kept, try again later"
    )]
    ChecksumMismatch {
        /// The file's name.
        file: String,
        /// Where it came from.
        url: String,
        /// The published digest, hex.
        expected_sha256: String,
        /// The digest of what arrived, hex.
        actual_sha256: String,
    },

    /// The caller cancelled a download.
    #[error("the download of {what} was cancelled; nothing was kept")]
    Cancelled {
        /// What was being downloaded.
        what: String,
    },
}
