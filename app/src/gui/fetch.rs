//! A data set download started from the setup panel, on its own named thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};

use kiln_core::data::fetch::{self, FetchProgress, RemoteDataset};

enum FetchMessage {
    Progress(FetchProgress),
    Done(Result<PathBuf, String>),
}

/// A download in progress.
pub struct FetchJob {
    /// What is being downloaded.
    pub dataset: RemoteDataset,
    cancel: Arc<AtomicBool>,
    messages: Receiver<FetchMessage>,
    /// The latest progress notice.
    pub progress: Option<FetchProgress>,
}

impl std::fmt::Debug for FetchJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchJob")
            .field("dataset", &self.dataset)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

impl FetchJob {
    /// Starts downloading `dataset` into `data_root` on a thread named `kiln-fetch`.
    pub fn start(
        dataset: RemoteDataset,
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
                        fetch::fetch(
                            dataset,
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
            dataset,
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
            None => (self.dataset.display_name().to_owned(), None),
        }
    }
}
