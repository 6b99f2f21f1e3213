//! What the window does when a person asks: start, resume, pause and cancel a run, the setup
//! panel's and the runs list's actions, exports, keyboard shortcuts. Panels return actions;
//! this file carries them out after drawing.

use super::*;

/// How an exported ONNX model is loaded, said where it is written: an installed Kiln has no
/// README to point to.
pub(super) const LOAD_ONNX: &str = "onnxruntime.InferenceSession(path) takes raw 0–255 pixels as \"pixels\" [N, C, H, W] float32 and gives \"logits\" and \"probabilities\"";

/// How exported safetensors are loaded into PyTorch, said where they are written.
pub(super) const LOAD_SAFETENSORS: &str = "model.load_state_dict(safetensors.torch.load_file(path)) takes them; the run's model.json holds the input shape, class names and the pixel offset and scale";

impl KilnApp {
    /// Starts a run of the form's experiment; does nothing while one is going.
    pub fn start(&mut self) {
        if self.is_training() {
            return;
        }
        let check = self.form.check();
        if let Some(reason) = self.start_blocker(&check) {
            self.notice = Some(reason);
            return;
        }
        let Some(experiment) = check.experiment else {
            return;
        };
        let ctx = self.ctx.clone();
        match Session::start(experiment, self.runs_dir.clone(), move || wake(&ctx)) {
            Ok(session) => {
                self.session = Some(session);
                self.notice = None;
                // The form is locked while training; a focused field would only keep repainting.
                self.ctx.memory_mut(|memory| memory.stop_text_input());
            }
            Err(e) => self.notice = Some(format!("could not start the training thread: {e}")),
        }
    }

    /// Continues the stopped run in `folder` from its last checkpoint; does nothing while a run
    /// is going.
    pub fn resume(&mut self, folder: &Path) {
        if self.is_training() {
            self.notice = Some("a run is going; resume this one when it ends".to_owned());
            return;
        }
        let ctx = self.ctx.clone();
        // The device row of Setup says where to train, a resumed run included: the way on when
        // the device it started on is gone.
        let devices = kiln_core::device::parse_devices(&self.form.device).ok();
        match Session::resume_run(folder, devices, move || wake(&ctx)) {
            Ok(session) => {
                self.session = Some(session);
                self.notice = None;
            }
            Err(reason) => self.notice = Some(reason),
        }
    }

    /// Starts what the Compare table offered beside a parting: the Kiln run under another
    /// framework's defaults (its curve joins the charts as it trains), or an explain sweep.
    pub(super) fn handle_compare_action(&mut self, action: CompareAction) {
        match action {
            CompareAction::Train(draft) => {
                if self.is_training() {
                    self.notice = Some("a run is going; start this one when it ends".to_owned());
                    return;
                }
                self.form = SetupForm::from_draft(&draft);
                self.start();
            }
            #[cfg(not(target_arch = "wasm32"))]
            CompareAction::Explain(a, b) => self.explain_between(*a, *b),
            #[cfg(target_arch = "wasm32")]
            CompareAction::Explain(..) => {
                self.notice =
                    Some("explain sweeps run in the desktop app (kiln explain)".to_owned())
            }
        }
    }

    /// Why Start cannot run now: a field of the form, or a named data set not on this computer.
    pub(super) fn start_blocker(&mut self, check: &FormCheck) -> Option<String> {
        check
            .blocking_reason()
            .or_else(|| match self.data_location() {
                Some(Err(reason)) => Some(format!("Data set: {reason}")),
                _ => None,
            })
    }

    /// Pauses a running run or resumes a paused one.
    pub fn toggle_pause(&mut self) {
        if let Some(session) = &mut self.session {
            match session.state {
                SessionState::Running => session.pause(),
                SessionState::Paused => session.resume(),
                _ => {}
            }
        }
    }

    /// Cancels the run; its folder keeps what was done.
    pub fn cancel(&mut self) {
        if let Some(session) = &mut self.session {
            session.cancel();
        }
    }

    /// The *Find lr…* window, while open; a rate taken from it goes into Setup.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn lr_finder_ui(&mut self, ctx: &egui::Context) {
        let Some(finder) = &mut self.lr_finder else {
            return;
        };
        match finder.window_ui(ctx) {
            Some(lr_finder::LrFinderAction::UseRate(lr)) => {
                *self.form.text_mut(kiln_core::settings::Setting::Lr) = format!("{lr:.2e}");
                self.notice = Some(format!(
                    "learning rate set to {lr:.2e}, the range test's suggestion"
                ));
                self.lr_finder = None;
            }
            Some(lr_finder::LrFinderAction::Close) => self.lr_finder = None,
            None => {}
        }
    }

    pub(super) fn handle_setup_action(&mut self, action: SetupAction) {
        match action {
            SetupAction::ChooseImageFolder => self.choose_data_folder(DataChoice::ImageFolder),
            SetupAction::ChooseLabelsFile => self.choose_labels_file(),
            SetupAction::ChooseDataDir => self.choose_data_folder(DataChoice::NamedSetFolder),
            SetupAction::Fetch => self.start_fetch(),
            SetupAction::FetchWeights(arch) => self.start_download(Download::Weights(arch)),
            SetupAction::ChooseWeightsFile => self.choose_weights_file(),
            SetupAction::AddRemoteBox => self.remote_boxes.open_dialog(),
            #[cfg(target_arch = "wasm32")]
            SetupAction::FindLr => {}
            #[cfg(not(target_arch = "wasm32"))]
            SetupAction::FindLr => match self.form.check().experiment {
                Some(experiment) => {
                    let ctx = self.ctx.clone();
                    let finder = lr_finder::LrFinder::start(experiment, move || wake(&ctx));
                    self.lr_finder = Some(finder);
                }
                None => {
                    self.notice = Some(format!(
                        "the learning rate cannot be tested yet: {}",
                        self.form.check().blocking_reason().unwrap_or_default()
                    ));
                }
            },
            SetupAction::InspectData => match self.form.check().experiment {
                Some(experiment) => {
                    let ctx = self.ctx.clone();
                    self.data_view = Some(DataView::open(experiment, move || wake(&ctx)));
                    self.stage = Stage::Data;
                }
                None => {
                    self.notice = Some(format!(
                        "the data set cannot be read yet: {}",
                        self.form.check().blocking_reason().unwrap_or_default()
                    ));
                }
            },
            SetupAction::CancelFetch => {
                if let Some(job) = &self.fetch {
                    job.cancel();
                }
            }
        }
    }

    /// Asks for a weights file to start from: the system's dialog, or a page's chooser, whose
    /// file arrives later (a page reads safetensors only).
    /// Asks for a labels file; a page never offers one (its files are only a chosen folder's).
    fn choose_labels_file(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(file) = files::pick_file(
            "Labels file: a row per image with its path and label",
            "labels file",
            &["csv", "tsv", "jsonl", "ndjson", "json"],
        ) {
            self.form.labels_file = Some(file);
            self.data_location = None;
        }
    }

    fn choose_weights_file(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            if let Some(file) = files::pick_file(
                "Pretrained weights (torchvision .pth or .safetensors)",
                "weights",
                &["pth", "pt", "safetensors"],
            ) {
                self.form.weights_file = Some(file);
            }
        }
        #[cfg(target_arch = "wasm32")]
        if let Err(reason) = files::choose_file(files::FileChoice::Weights, &self.ctx) {
            self.notice = Some(reason);
        }
    }

    /// Downloads the data set the form names, if it is one Kiln downloads.
    pub(super) fn start_fetch(&mut self) {
        if let Some(remote) = self.form.dataset.remote() {
            self.start_download(Download::Dataset(remote));
        }
    }

    /// Starts `what` downloading into the form's data folder (or the usual one).
    fn start_download(&mut self, what: Download) {
        if cfg!(target_arch = "wasm32") {
            let way = match what {
                Download::Dataset(_) => {
                    "Download it yourself and choose its folder with Choose data folder…".to_owned()
                }
                Download::Weights(arch) => format!(
                    "Download {} yourself, save it as .safetensors (a page cannot read a .pth) \
                     and start from that file",
                    kiln_core::weights::fetch::ImageNetWeights::of(arch).file_name
                ),
            };
            self.fetch_message = Some(format!(
                "{} cannot be downloaded into a browser page: the mirrors do not let pages read \
                 their files. {way}",
                what.display_name()
            ));
            return;
        }
        if let Some(job) = &self.fetch {
            self.fetch_message = Some(format!(
                "{} is downloading; wait for it or cancel it first",
                job.what.display_name()
            ));
            return;
        }
        let root = self
            .form
            .draft
            .data_dir
            .clone()
            .or_else(|| std::env::var_os(data::DATA_DIR_ENV).map(PathBuf::from))
            .or_else(data::default_data_root);
        let Some(root) = root else {
            self.fetch_message = Some(
                "this system has no per-user data folder; choose a data folder first".to_owned(),
            );
            return;
        };
        let ctx = self.ctx.clone();
        match FetchJob::start(what, root, move || wake(&ctx)) {
            Ok(job) => {
                self.fetch = Some(job);
                self.fetch_message = None;
            }
            Err(e) => self.fetch_message = Some(format!("could not start the download: {e}")),
        }
    }

    /// Keeps `files` (paths starting with the folder's name, and their bytes) as if the page's
    /// folder chooser for `choice` had delivered them: how a page's check chooses a folder,
    /// since a script cannot fill the chooser.
    #[cfg(target_arch = "wasm32")]
    pub fn receive_data_folder(&self, choice: DataChoice, files: Vec<(String, Vec<u8>)>) {
        files::receive(choice, files, &self.ctx);
    }

    /// Hands the window a file (its `name` and `bytes`) as the page's file chooser would after
    /// *Import run…* or *Try the model*'s *Open image…*; it is taken in on the next frame.
    #[cfg(target_arch = "wasm32")]
    pub fn receive_file(&self, choice: files::FileChoice, name: String, bytes: Vec<u8>) {
        files::receive_file(choice, Ok((name, bytes)), &self.ctx);
    }

    /// Whether the browser's storage still has runs to keep or forget: a page closed now may
    /// lose that change.
    #[cfg(target_arch = "wasm32")]
    pub fn page_storage_busy(&self) -> bool {
        super::page_store::busy()
    }

    /// Carries out `action` as if the runs panel had returned it: how a browser page's check
    /// presses the panel's buttons.
    pub fn act_on_runs(&mut self, action: RunsAction) {
        self.handle_runs_action(action);
    }

    pub(super) fn handle_runs_action(&mut self, action: RunsAction) {
        match action {
            RunsAction::Refresh => self.refresh_runs(),
            RunsAction::ChooseFolder => {
                let asked = files::pick_folder("Folder to keep runs in", Some(&self.runs_dir));
                if let Some(folder) = self.chosen(asked) {
                    self.chosen_runs_dir = Some(folder.clone());
                    self.runs_dir = folder;
                    self.runs.selected.clear();
                    self.refresh_runs();
                }
            }
            RunsAction::Rename { path, name } => {
                #[cfg(not(target_arch = "wasm32"))]
                let renamed = run_folder::rename_run(&path, &name);
                #[cfg(target_arch = "wasm32")]
                let renamed = run_folder::page_runs::with_mut(|runs| {
                    run_folder::rename_run_in(runs, &path, &name)
                })
                .inspect(|new_path| {
                    super::page_store::forget(&path);
                    super::page_store::keep(new_path);
                });
                match renamed {
                    Ok(new_path) => {
                        if self.runs.selected.remove(&path) {
                            self.runs.selected.insert(new_path);
                        }
                        self.notice = None;
                    }
                    Err(e) => self.notice = Some(e.to_string()),
                }
                self.refresh_runs();
            }
            RunsAction::Delete(path) => {
                #[cfg(not(target_arch = "wasm32"))]
                if let Err(e) = run_folder::delete_run(&path) {
                    self.notice = Some(e.to_string());
                }
                #[cfg(target_arch = "wasm32")]
                {
                    run_folder::page_runs::with_mut(|runs| runs.remove(&path));
                    super::page_store::forget(&path);
                }
                self.refresh_runs();
            }
            RunsAction::TryModel(path) => {
                self.try_model = Some(super::with_run_files(|tree| TryModel::open(tree, &path)));
                self.stage = Stage::Predict;
            }
            RunsAction::ExportModel(path) => self.export_model(&path),
            RunsAction::Resume(path) => self.resume(&path),
            RunsAction::UseSettings(path) => {
                match self
                    .runs
                    .runs
                    .iter()
                    .find(|r| r.path == path)
                    .and_then(|r| r.config.as_ref())
                {
                    Some(config) => self.form = SetupForm::from_draft(config),
                    None => {
                        self.notice =
                            Some(format!("{} has no readable config.toml", path.display()))
                    }
                }
            }
            RunsAction::Export(kind) => self.export(kind),
            RunsAction::Archive(path) => self.archive_run(&path),
            RunsAction::Import(kind) => self.import_run(kind),
        }
    }

    /// Asks where to write `run`'s model for PyTorch, and writes it there.
    #[cfg(not(target_arch = "wasm32"))]
    fn export_model(&mut self, run: &std::path::Path) {
        let name = run
            .file_name()
            .map_or_else(|| "model".to_owned(), |n| n.to_string_lossy().into_owned());
        let Some(path) = files::save_as(
            "Export model",
            &[
                ("PyTorch weights (safetensors)", &["safetensors"]),
                ("ONNX model", &["onnx"]),
            ],
            &format!("{name}.safetensors"),
        ) else {
            return;
        };
        let onnx = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("onnx"));
        let run = run.to_owned();
        self.notice = Some(format!("writing {}…", path.display()));
        // A ResNet-50 is a hundred megabytes to load and write: off the UI thread.
        self.start_file_job("kiln-export-model", move || {
            let failed = |e: String| format!("could not export the model: {e}");
            let predictor =
                kiln_core::predict::Predictor::load(&run).map_err(|e| failed(e.to_string()))?;
            let (model, spec) = (predictor.model(), predictor.spec());
            let what = if onnx {
                kiln_core::weights::onnx::write_onnx(model, spec, predictor.card(), &path)
                    .map(|()| format!("an ONNX model: {LOAD_ONNX}"))
            } else {
                kiln_core::weights::export::write_safetensors(model, spec, &path)
                    .map(|n| format!("{n} tensors with PyTorch's names: {LOAD_SAFETENSORS}"))
            }
            .map_err(failed)?;
            Ok(format!("wrote {} ({what})", path.display()))
        });
    }

    /// Runs `work` off the window's thread; its sentence, success or not, goes to the notice
    /// line when it is done.
    #[cfg(not(target_arch = "wasm32"))]
    fn start_file_job(
        &mut self,
        thread: &str,
        work: impl FnOnce() -> Result<String, String> + Send + 'static,
    ) {
        let ctx = self.ctx.clone();
        self.file_job = Some(BackgroundJob::start(thread, work, move || {
            ctx.request_repaint()
        }));
    }

    /// Packs `run`'s whole folder into one .tar file where the person says (a download in a
    /// page), for *Import run…* or `kiln import` elsewhere.
    fn archive_run(&mut self, run: &Path) {
        let file_name = format!(
            "{}.{}",
            run.file_name()
                .map_or_else(|| "run".into(), |n| n.to_string_lossy()),
            run_folder::ARCHIVE_EXTENSION
        );
        #[cfg(not(target_arch = "wasm32"))]
        {
            let Some(path) = files::save_as(
                "Archive run",
                &[("Run folder archive", &["tar"])],
                &file_name,
            ) else {
                return;
            };
            let run = run.to_owned();
            self.notice = Some(format!("writing {}…", path.display()));
            // Checkpoints of a large model are hundreds of megabytes: off the UI thread.
            self.start_file_job("kiln-archive", move || {
                let failed = |e: String| format!("could not archive {}: {e}", run.display());
                let bytes = run_folder::pack(&kiln_core::data::files::Disk, &run)
                    .map_err(|e| failed(e.to_string()))?;
                std::fs::write(&path, &bytes).map_err(|e| failed(e.to_string()))?;
                Ok(format!(
                    "wrote {} ({:.1} MB); Import run… or `kiln import` reads it back",
                    path.display(),
                    bytes.len() as f64 / 1e6
                ))
            });
        }
        #[cfg(target_arch = "wasm32")]
        {
            let packed = run_folder::page_runs::with(|runs| run_folder::pack(runs, run))
                .map_err(|e| e.to_string())
                .and_then(|bytes| files::download(&file_name, &bytes, "application/x-tar"));
            self.notice = Some(match packed {
                Ok(()) => format!("downloaded {file_name}"),
                Err(reason) => format!("could not archive {}: {reason}", run.display()),
            });
        }
    }

    /// Asks for a run folder archive or another framework's training logs and brings them into
    /// the runs folder under free names, as `kiln import` does (in a page: an archive, among the
    /// page's runs, once the browser's chooser has read it).
    fn import_run(&mut self, kind: ImportKind) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let picked = match kind {
                ImportKind::File => files::pick_file_of(
                    "Import run",
                    &[
                        (
                            "Run archives and training logs",
                            &[
                                run_folder::ARCHIVE_EXTENSION,
                                "gz",
                                "tgz",
                                "csv",
                                "tsv",
                                "log",
                                "json",
                                "v2",
                            ],
                        ),
                        // Event files are named events.out.tfevents.<time>.<host>…: any ending.
                        ("All files", &["*"]),
                    ],
                ),
                ImportKind::Folder => {
                    match files::pick_folder("Import runs from a folder of logs", None) {
                        Ok(folder) => folder,
                        Err(reason) => {
                            self.notice = Some(reason);
                            return;
                        }
                    }
                }
            };
            let Some(path) = picked else {
                return;
            };
            self.import_picked(path);
        }
        #[cfg(target_arch = "wasm32")]
        match kind {
            ImportKind::File => {
                if let Err(reason) = files::choose_file(files::FileChoice::RunArchive, &self.ctx) {
                    self.notice = Some(reason);
                }
            }
            ImportKind::Folder => {
                self.notice = Some(
                    "a page imports run archives only; other frameworks' logs are imported by the desktop app or `kiln import`".to_owned(),
                );
            }
        }
    }

    /// Imports a picked archive or log as *Import run…* does once its path is chosen: the log
    /// is read first, off the window's thread, for series no convention names, which the
    /// *Name series* window asks about before the import; else the import goes on at once.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn import_picked(&mut self, path: PathBuf) {
        let ctx = self.ctx.clone();
        self.notice = Some(format!("reading {}…", path.display()));
        self.series_scan = Some(BackgroundJob::start(
            "kiln-import-scan",
            move || {
                let unnamed = run_folder::unnamed_series_at(&path, &Default::default());
                Ok((path, unnamed))
            },
            move || ctx.request_repaint(),
        ));
    }

    /// Takes in the finished scan of a picked log: the *Name series* window where it has
    /// unnamed series, else the import.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn poll_series_scan(&mut self) {
        let Some(job) = &mut self.series_scan else {
            return;
        };
        job.poll();
        if matches!(job, BackgroundJob::Waiting(_)) {
            return;
        }
        match self.series_scan.take() {
            Some(BackgroundJob::Ready((path, unnamed))) => match unnamed.is_empty() {
                true => self.import_with(path, Default::default()),
                false => {
                    self.notice = None;
                    self.series_dialog = Some(series_dialog::SeriesDialog::new(path, unnamed));
                }
            },
            Some(BackgroundJob::Failed(reason)) => self.notice = Some(reason),
            _ => {}
        }
    }

    /// The *Name series* window, while open.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn series_dialog_ui(&mut self, ctx: &egui::Context) {
        let Some(dialog) = &mut self.series_dialog else {
            return;
        };
        match dialog.window_ui(ctx) {
            Some(series_dialog::SeriesDialogAction::Import(path, names)) => {
                self.series_dialog = None;
                self.import_with(path, names);
            }
            Some(series_dialog::SeriesDialogAction::Cancel) => self.series_dialog = None,
            None => {}
        }
    }

    /// Imports `path` into the runs folder with the person's `names` for its series, as `kiln
    /// import --series` does, off the window's thread.
    #[cfg(not(target_arch = "wasm32"))]
    fn import_with(&mut self, path: PathBuf, names: run_folder::SeriesNames) {
        let runs_dir = self.runs_dir.clone();
        let validation = match self.runs.import_validation_was_test {
            true => run_folder::LogValidation::Test,
            false => run_folder::LogValidation::Validation,
        };
        self.notice = Some(format!("importing {}…", path.display()));
        self.start_file_job("kiln-import", move || {
            let outcome = run_folder::import_path(&path, &runs_dir, &names, validation)
                .map_err(|e| format!("{} was not imported: {e}", path.display()))?;
            let mut said = match outcome.folders.as_slice() {
                [one] => format!("imported {}", one.display()),
                many => format!("imported {} runs from {}", many.len(), path.display()),
            };
            if !outcome.problems.is_empty() {
                said.push_str(&format!("; left out: {}", outcome.problems.join("; ")));
            }
            Ok(said)
        });
    }

    /// Downloads `run`'s model both as safetensors with PyTorch's names and as ONNX: a page has
    /// no save dialog to choose one of them in, so each comes as its own download.
    #[cfg(target_arch = "wasm32")]
    fn export_model(&mut self, run: &std::path::Path) {
        let name = run
            .file_name()
            .map_or_else(|| "model".to_owned(), |n| n.to_string_lossy().into_owned());
        let downloaded = super::with_run_files(|tree| {
            kiln_core::predict::Predictor::load_in(tree, run).map_err(|e| e.to_string())
        })
        .and_then(|predictor| {
            let (model, spec) = (predictor.model(), predictor.spec());
            let (weights, _) = kiln_core::weights::export::safetensors_bytes(model, spec)?;
            let onnx = kiln_core::weights::onnx::onnx_bytes(model, spec, predictor.card())?;
            files::download(
                &format!("{name}.safetensors"),
                &weights,
                "application/octet-stream",
            )?;
            files::download(&format!("{name}.onnx"), &onnx, "application/octet-stream")?;
            Ok(format!(
                "downloaded {name}.safetensors ({LOAD_SAFETENSORS}) and {name}.onnx ({LOAD_ONNX})"
            ))
        });
        self.notice =
            Some(downloaded.unwrap_or_else(|e| format!("could not export the model: {e}")));
    }

    /// What a file dialog gave; where there is none, its sentence goes to the notice line.
    fn choose_data_folder(&mut self, choice: DataChoice) {
        let asked = files::choose_data_folder(choice, &self.ctx);
        if let Some(folder) = self.chosen(asked) {
            self.use_data_folder(choice, folder);
        }
    }

    /// Puts a chosen data folder in the form, whether the desktop's dialog gave it at once or a
    /// page's chooser delivered it later.
    pub fn use_data_folder(&mut self, choice: DataChoice, folder: PathBuf) {
        // A running run has its own copy of the experiment: the form may change under it.
        match choice {
            DataChoice::ImageFolder => self.form.folder = Some(folder),
            DataChoice::NamedSetFolder => self.form.draft.data_dir = Some(folder),
            DataChoice::Dropped if self.form.dataset.remote().is_some() => {
                self.form.draft.data_dir = Some(folder);
            }
            DataChoice::Dropped => {
                self.form.dataset = DatasetKind::Folder;
                self.form.folder = Some(folder);
            }
        }
        // The same name chosen again in a page may hold other files: look again.
        self.data_location = None;
    }

    pub(super) fn chosen(&mut self, asked: Result<Option<PathBuf>, String>) -> Option<PathBuf> {
        asked.unwrap_or_else(|reason| {
            self.notice = Some(reason);
            None
        })
    }

    /// The runs to export: the ticked ones, else the current run.
    pub(super) fn export_runs(&self) -> Vec<&RunHistory> {
        let selected = self.runs.selected_runs();
        if !selected.is_empty() {
            return selected;
        }
        self.session.iter().map(|s| &s.history).collect()
    }

    pub(super) fn export(&mut self, kind: ExportKind) {
        let runs = self.export_runs();
        if runs.is_empty() {
            self.notice = Some("tick one or more runs to export".to_owned());
            return;
        }
        let default_name = match runs.as_slice() {
            [one] => format!("{}.{}", one.folder_name(), kind.extension()),
            _ => format!("kiln-{}-runs.{}", runs.len(), kind.extension()),
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            let filter = kind.extension().to_uppercase();
            let Some(path) =
                files::save_as("Export", &[(&filter, &[kind.extension()])], &default_name)
            else {
                return;
            };
            self.notice = Some(match export_to(&runs, kind, &path, self.x_axis) {
                Ok(()) => format!("wrote {}", path.display()),
                Err(reason) => reason,
            });
        }
        #[cfg(target_arch = "wasm32")]
        {
            let downloaded = export_bytes(&runs, kind, self.x_axis)
                .and_then(|(bytes, mime)| files::download(&default_name, &bytes, mime));
            self.notice = Some(match downloaded {
                Ok(()) => format!("downloaded {default_name}"),
                Err(reason) => reason,
            });
        }
    }

    pub(super) fn shortcuts(&mut self, ctx: &egui::Context) {
        let (start, pause, cancel) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&START_SHORTCUT),
                i.consume_shortcut(&PAUSE_SHORTCUT),
                i.consume_shortcut(&CANCEL_SHORTCUT),
            )
        });
        if start {
            self.start();
        }
        if pause {
            self.toggle_pause();
        }
        if cancel {
            self.cancel();
        }
        if let Some(stage) = Stage::pressed(ctx) {
            self.set_stage(stage);
        }
    }
}

/// Writes one export file; the error is a sentence for the notice line.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn export_to(
    runs: &[&RunHistory],
    kind: ExportKind,
    path: &Path,
    x_axis: XAxis,
) -> Result<(), String> {
    let options = PlotOptions {
        x_axis,
        ..PlotOptions::default()
    };
    let (csv, png, svg) = match kind {
        ExportKind::Csv => (Some(path), None, None),
        ExportKind::Png => (None, Some(path), None),
        ExportKind::Svg => (None, None, Some(path)),
    };
    export::save(runs, &options, csv, png, svg).map_err(|e| e.to_string())
}

/// One export's bytes and their media type, for a page's download.
#[cfg(target_arch = "wasm32")]
fn export_bytes(
    runs: &[&RunHistory],
    kind: ExportKind,
    x_axis: XAxis,
) -> Result<(Vec<u8>, &'static str), String> {
    let options = PlotOptions {
        x_axis,
        ..PlotOptions::default()
    };
    let rendered = match kind {
        ExportKind::Csv => {
            let mut bytes = Vec::new();
            export::write_csv(runs, &mut bytes).map(|()| (bytes, "text/csv"))
        }
        ExportKind::Png => export::render_png(runs, &options).map(|bytes| (bytes, "image/png")),
        ExportKind::Svg => {
            export::render_svg(runs, &options).map(|text| (text.into_bytes(), "image/svg+xml"))
        }
    };
    rendered.map_err(|e| e.to_string())
}
