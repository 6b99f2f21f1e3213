//! The window's per-frame logic: workers' messages drained within a time budget (the run, the
//! device list, a download), the data location kept current, a past run's predictions read once.

use super::*;
use kiln_core::config::ExperimentDraft;

impl KilnApp {
    pub(super) fn poll_background(&mut self) {
        if let Devices::Listing(receiver) = &self.devices
            && let Ok(list) = receiver.try_recv()
        {
            self.devices = Devices::Ready(list);
        }
        self.remote_boxes.poll();
        for (choice, outcome) in files::arrived() {
            if let Some(folder) = self.chosen(outcome.map(Some)) {
                self.use_data_folder(choice, folder);
            }
        }
        #[cfg(target_arch = "wasm32")]
        self.poll_page_storage();
        let mut list_again = false;
        if let Some(session) = &mut self.session {
            let was_active = session.state.is_active();
            let folder_before = session.history.path.clone();
            session.drain(DRAIN_BUDGET);
            // A run is listed (as running) once its folder exists, and again when it ends.
            let created = session.history.path != folder_before;
            list_again = created || (was_active && !session.state.is_active());
        }
        if list_again {
            self.refresh_runs();
        }
        if let Some(job) = &mut self.fetch
            && let Some(result) = job.poll()
        {
            self.fetch_message = Some(match result {
                Ok(path) => format!(
                    "{} is ready in {} (checksums verified)",
                    job.what.display_name(),
                    path.display()
                ),
                Err(reason) => reason,
            });
            self.fetch = None;
            self.data_location = None;
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.poll_series_scan();
        if let Some(job) = &mut self.file_job {
            job.poll();
            let done = match job {
                BackgroundJob::Waiting(_) => None,
                BackgroundJob::Ready(sentence) | BackgroundJob::Failed(sentence) => {
                    Some(sentence.clone())
                }
            };
            if done.is_some() {
                self.notice = done;
                self.file_job = None;
                // An import adds a run; the others leave the list as it was, and reading it
                // again costs a few file reads.
                self.refresh_runs();
            }
        }
    }

    /// Takes in what the browser's storage and the page's file chooser delivered: runs of an
    /// earlier visit, a failed write, an archive to import, an image to try.
    #[cfg(target_arch = "wasm32")]
    fn poll_page_storage(&mut self) {
        for news in page_store::news() {
            match news {
                page_store::News::Restored(restored) => {
                    self.refresh_runs();
                    if !restored.unreadable.is_empty() {
                        self.notice = Some(format!(
                            "left out {} run(s) this browser kept that could not be read: {}",
                            restored.unreadable.len(),
                            restored.unreadable.join("; ")
                        ));
                    }
                }
                page_store::News::Failed(reason) => self.notice = Some(reason),
            }
        }
        for (choice, file) in files::arrived_files() {
            match choice {
                files::FileChoice::RunArchive => self.import_in_page(file),
                files::FileChoice::ImageToTry => match (file, &mut self.try_model) {
                    (Ok((name, bytes)), Some(try_model)) => try_model.try_bytes(&name, &bytes),
                    (Err(reason), _) => self.notice = Some(reason),
                    (Ok(_), None) => {}
                },
                files::FileChoice::Weights => {
                    match file
                        .and_then(|(name, bytes)| data::page_files::keep_weights(&name, bytes))
                    {
                        Ok(path) => self.form.weights_file = Some(path),
                        Err(reason) => self.notice = Some(reason),
                    }
                }
            }
        }
    }

    /// Adds a chosen run folder archive to the page's runs and the browser's storage.
    #[cfg(target_arch = "wasm32")]
    fn import_in_page(&mut self, file: Result<(String, Vec<u8>), String>) {
        let imported = file.and_then(|(name, bytes)| {
            run_folder::page_runs::import(&bytes)
                .map_err(|reason| format!("{name} was not imported: {reason}"))
        });
        self.notice = Some(match imported {
            Ok(folder) => {
                page_store::keep(&folder);
                self.refresh_runs();
                format!("imported {}", folder.display())
            }
            Err(reason) => reason,
        });
    }

    pub(super) fn data_location(&mut self) -> Option<Result<PathBuf, String>> {
        let remote = self.form.dataset.remote()?;
        let stale = self.data_location.as_ref().is_none_or(|(kind, dir, _)| {
            *kind != self.form.dataset || *dir != self.form.draft.data_dir
        });
        if stale {
            let found = data::locate(remote, self.form.draft.data_dir.as_deref()).map_err(|e| match e {
                DataError::NotFound { .. } if cfg!(target_arch = "wasm32") => format!(
                    "not among the files chosen in this page; choose the folder holding {}'s files",
                    remote.display_name()
                ),
                DataError::NotFound { .. } => {
                    format!(
                        "not found on this computer; press Fetch to download {}",
                        remote.display_name()
                    )
                }
                other => other.to_string(),
            });
            self.data_location = Some((self.form.dataset, self.form.draft.data_dir.clone(), found));
        }
        self.data_location
            .as_ref()
            .map(|(_, _, found)| found.clone())
    }

    /// The config of the run whose results the Results view shows.
    pub(super) fn predictions_config(&self) -> Option<ExperimentDraft> {
        let shown = self.results_run()?;
        if let Some(session) = self.session.as_ref().filter(|s| s.history.path == shown) {
            return session.history.config.clone();
        }
        self.runs
            .selected_runs()
            .into_iter()
            .find(|run| run.path == shown)
            .and_then(|run| run.config.clone())
    }

    /// Reads the predictions of the past run the Results view shows, once per run picked.
    pub(super) fn refresh_past_predictions(&mut self) {
        let live = self
            .session
            .as_ref()
            .filter(|s| s.has_test_predictions())
            .map(|s| s.history.path.clone());
        let wanted = self
            .results_run()
            .filter(|shown| Some(shown) != live.as_ref());
        match wanted {
            None => {
                self.past_predictions = None;
                self.past_label_predictions = None;
            }
            Some(path) => {
                if self
                    .past_predictions
                    .as_ref()
                    .is_some_and(|(p, _)| *p == path)
                {
                    return;
                }
                let loaded = with_run_files(|tree| run_folder::load_predictions_in(tree, &path));
                let loaded = loaded.unwrap_or_else(|e| {
                    self.notice = Some(e.to_string());
                    None
                });
                let labels =
                    with_run_files(|tree| run_folder::load_label_predictions_in(tree, &path));
                self.past_label_predictions = labels.unwrap_or_else(|e| {
                    self.notice = Some(e.to_string());
                    None
                });
                self.past_predictions = Some((path, loaded));
            }
        }
    }
}
