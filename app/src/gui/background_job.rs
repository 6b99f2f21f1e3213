//! One answer computed on a named thread for a window that must stay live meanwhile (the Data
//! window, a confusion cell's images): waiting, then the value or the sentence saying why not.

use std::sync::mpsc::{self, Receiver, TryRecvError};

/// Where the answer stands.
pub enum BackgroundJob<T> {
    /// The thread is working.
    Waiting(Receiver<Result<T, String>>),
    /// It came.
    Ready(T),
    /// It could not be had; the sentence says why.
    Failed(String),
}

impl<T: Send + 'static> BackgroundJob<T> {
    /// Runs `work` on a thread named `thread`, calling `wake` once it is done. A browser page
    /// has one thread, so there the answer is worked out at once, before the frame goes on.
    pub fn start(
        thread: &str,
        work: impl FnOnce() -> Result<T, String> + Send + 'static,
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        if cfg!(target_arch = "wasm32") {
            let _ = (thread, wake);
            return match work() {
                Ok(value) => Self::Ready(value),
                Err(reason) => Self::Failed(reason),
            };
        }
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name(thread.to_owned())
            .spawn(move || {
                // A closed channel means the window was closed first; nothing to tell.
                let _ = sender.send(work());
                wake();
            });
        match spawned {
            Ok(_) => Self::Waiting(receiver),
            Err(e) => Self::Failed(format!("could not start a thread for it: {e}")),
        }
    }

    /// Takes the thread's answer when it has come.
    pub fn poll(&mut self) {
        if let Self::Waiting(receiver) = self {
            *self = match receiver.try_recv() {
                Ok(Ok(value)) => Self::Ready(value),
                Ok(Err(reason)) => Self::Failed(reason),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    Self::Failed("the thread working on it ended without an answer".to_owned())
                }
            };
        }
    }
}
