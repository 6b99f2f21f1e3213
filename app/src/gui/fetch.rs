//! A download started from the setup panel (a data set, or ImageNet weights), on its own named
//! thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};

use kiln_core::data::DataError;
use kiln_core::data::fetch::{self, FetchProgress, RemoteDataset};
use kiln_core::model::TorchvisionArch;

/// What a download fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Download {
    /// A data set's files.
    Dataset(RemoteDataset),
    /// torchvision's ImageNet weights of an architecture.
    Weights(TorchvisionArch),
}

impl Download {
    /// What messages call it.
    pub fn display_name(self) -> String {
        match self {
            Self::Dataset(dataset) => dataset.display_name().to_owned(),
            Self::Weights(arch) => format!("the ImageNet weights of {}", arch.title()),
        }
    }

    fn run(
        self,
        data_root: &std::path::Path,
        on_progress: &mut dyn FnMut(&FetchProgress),
        cancel: &AtomicBool,
    ) -> Result<PathBuf, DataError> {
        match self {
            Self::Dataset(dataset) => fetch::fetch(dataset, data_root, on_progress, cancel),
            Self::Weights(arch) => {
                kiln_core::weights::fetch::fetch(arch, data_root, on_progress, cancel)
            }
        }
    }
}

enum FetchMessage {
    Progress(FetchProgress),
    Done(Result<PathBuf, String>),
}

/// A download in progress.
pub struct FetchJob {
    /// What is being downloaded.
    pub what: Download,
    cancel: Arc<AtomicBool>,
    messages: Receiver<FetchMessage>,
    /// The latest progress notice.
    pub progress: Option<FetchProgress>,
}

impl std::fmt::Debug for FetchJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchJob")
            .field("what", &self.what)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

impl FetchJob {
    /// Starts downloading `what` into `data_root` on a thread named `kiln-fetch`.
    pub fn start(
        what: Download,
        data_root: PathBuf,
        wake: impl Fn() + Send + 'static,
    ) -> std::io::Result<Self> {
        let (sender, messages) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let worker_cancel = Arc::clone(&cancel);
        std::thread::Builder::new()
            .name("kiln-fetch".to_owned())
            .spawn(move || {
                // A closed channel means the window is gone; the download then just ends.
                let result = std::fs::create_dir_all(&data_root)
                    .map_err(|e| format!("could not create {}: {e}", data_root.display()))
                    .and_then(|()| {
                        what.run(
                            &data_root,
                            &mut |progress| {
                                let _ = sender.send(FetchMessage::Progress(progress.clone()));
                                wake();
                            },
                            &worker_cancel,
                        )
                        .map_err(|e| e.to_string())
                    });
                let _ = sender.send(FetchMessage::Done(result));
                wake();
            })?;
        Ok(Self {
            what,
            cancel,
            messages,
            progress: None,
        })
    }

    /// Asks the download to stop; nothing half-downloaded is kept.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Takes the waiting notices; returns the outcome once the download has ended.
    pub fn poll(&mut self) -> Option<Result<PathBuf, String>> {
        loop {
            match self.messages.try_recv() {
                Ok(FetchMessage::Progress(progress)) => self.progress = Some(progress),
                Ok(FetchMessage::Done(result)) => return Some(result),
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    return Some(Err(
                        "the download thread stopped without saying why".to_owned()
                    ));
                }
            }
        }
    }

    /// File being downloaded and the fraction done, for a progress bar.
    pub fn status(&self) -> (String, Option<f32>) {
        match &self.progress {
            Some(p) => (
                p.file.clone(),
                p.bytes_total
                    .filter(|&t| t > 0)
                    .map(|t| (p.bytes_done as f64 / t as f64) as f32),
            ),
            None => (self.what.display_name(), None),
        }
    }
}
