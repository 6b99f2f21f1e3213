//! One training run driven from the window: the engine runs on a named thread (in a browser page,
//! as a task on the page's event loop), its events come back over a channel that the UI drains
//! once per frame, and each arrival wakes the UI.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use web_time::Instant;

use kiln_core::config::Experiment;
use kiln_core::device::DeviceChoice;
use kiln_core::results::TestPredictions;
use kiln_core::run::{self, Stage};
use kiln_core::run_folder::{MetricsRow, RunHistory};
use kiln_core::train::{Control, ControlState, RunOutcome, StartInfo, TrainEvent};

/// What the training thread sends to the UI.
#[derive(Debug)]
enum WorkerMessage {
    Stage(Stage),
    Event(Box<TrainEvent>),
    /// The thread is done; `Err` holds the sentence to show.
    Done(Result<PathBuf, String>),
}

/// Where the run stands, as the status line shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionState {
    /// Loading the data set or building the model.
    Preparing(String),
    /// Training.
    Running,
    /// Held at a step boundary.
    Paused,
    /// Cancel asked; the loop stops at the next step boundary.
    Cancelling,
    /// The run ended; the outcome says how.
    Finished(RunOutcome),
    /// The run could not start or failed; the sentence says why.
    Failed(String),
}

impl SessionState {
    /// Whether the thread is still working.
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            Self::Preparing(_) | Self::Running | Self::Paused | Self::Cancelling
        )
    }
}

/// A run started from the window.
#[derive(Debug)]
pub struct Session {
    control: Arc<Control>,
    messages: Receiver<WorkerMessage>,
    /// The run as it grows, in the same shape as a past run loaded from disk.
    pub history: RunHistory,
    /// The engine's start notice: device, parameters, steps per epoch.
    pub start: Option<StartInfo>,
    /// The latest readback.
    pub last_progress: Option<MetricsRow>,
    /// Warnings so far, as sentences.
    pub warnings: Vec<String>,
    /// Every test image's prediction, once a run has completed.
    pub predictions: Option<TestPredictions>,
    /// In a multi-label set, every test image's probability per label, once a run has completed.
    pub label_predictions: Option<Box<kiln_core::results::multi_label::LabelPredictions>>,
    /// Where the run stands.
    pub state: SessionState,
    /// Seconds to the first finished step, once known.
    pub warmup_secs: Option<f64>,
    /// The run's epochs.
    pub epochs: usize,
    started: Instant,
}

impl Session {
    /// Starts `experiment` on a thread named `kiln-train`; `wake` is called after each message so
    /// the UI repaints on arrival instead of polling.
    pub fn start(
        experiment: Experiment,
        runs_dir: PathBuf,
        wake: impl Fn() + Send + 'static,
    ) -> std::io::Result<Self> {
        let epochs = experiment.epochs;
        let history = RunHistory {
            name: experiment.name.clone(),
            config: Some(experiment.draft().clone()),
            ..RunHistory::default()
        };
        let control = Arc::new(Control::new());
        #[cfg(not(target_arch = "wasm32"))]
        let messages = spawn_worker(&control, wake, move |control, on_stage, on_event| {
            run::execute(&experiment, &runs_dir, control, on_stage, on_event)
        })?;
        // A page keeps its runs in its memory, under a runs folder of its own.
        #[cfg(target_arch = "wasm32")]
        let messages = {
            let _ = runs_dir;
            spawn_in_page(PageJob::Start(experiment), &control, wake)
        };
        Ok(Self::new(control, messages, history, epochs))
    }

    /// Continues the stopped run in `folder` among the page's runs as a task on the page's
    /// event loop, on `devices` when given; the rows it had before its last checkpoint are shown
    /// from the start.
    #[cfg(target_arch = "wasm32")]
    pub fn resume_run(
        folder: &Path,
        devices: Option<Vec<DeviceChoice>>,
        wake: impl Fn() + 'static,
    ) -> Result<Self, String> {
        use kiln_core::run_folder::page_runs;
        let (experiment, point) =
            page_runs::with(|runs| run::resume_plan_in(runs, folder, devices.clone()))
                .map_err(|e| e.to_string())?;
        let history =
            page_runs::with(|runs| RunHistory::load_in(runs, folder)).map_err(|e| e.to_string())?;
        let history = resumed_history(history, point.state.counters.epochs_completed);
        let control = Arc::new(Control::new());
        let epochs = experiment.epochs;
        let job = PageJob::Resume {
            folder: folder.to_owned(),
            devices,
        };
        let messages = spawn_in_page(job, &control, wake);
        Ok(Self::new(control, messages, history, epochs))
    }

    /// Continues the stopped run in `folder` on a thread named `kiln-train`, on `devices` when
    /// given; the rows it had before its last checkpoint are shown from the start.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn resume_run(
        folder: &Path,
        devices: Option<Vec<DeviceChoice>>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Self, String> {
        let (experiment, point) =
            run::resume_plan(folder, devices.clone()).map_err(|e| e.to_string())?;
        let history = RunHistory::load(folder).map_err(|e| e.to_string())?;
        let history = resumed_history(history, point.state.counters.epochs_completed);
        let control = Arc::new(Control::new());
        let folder = folder.to_owned();
        let epochs = experiment.epochs;
        let messages = spawn_worker(&control, wake, move |control, on_stage, on_event| {
            run::resume(&folder, devices, control, on_stage, on_event)
        })
        .map_err(|e| format!("could not start the training thread: {e}"))?;
        Ok(Self::new(control, messages, history, epochs))
    }

    fn new(
        control: Arc<Control>,
        messages: Receiver<WorkerMessage>,
        history: RunHistory,
        epochs: usize,
    ) -> Self {
        Self {
            control,
            messages,
            history,
            start: None,
            last_progress: None,
            warnings: Vec::new(),
            predictions: None,
            label_predictions: None,
            state: SessionState::Preparing("loading data…".to_owned()),
            warmup_secs: None,
            epochs,
            started: Instant::now(),
        }
    }

    /// Takes the messages waiting, for at most `budget`, so a burst never stalls a frame.
    /// Returns whether anything arrived.
    pub fn drain(&mut self, budget: Duration) -> bool {
        let deadline = Instant::now() + budget;
        let mut any = false;
        loop {
            match self.messages.try_recv() {
                Ok(message) => {
                    any = true;
                    self.apply(message);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if self.state.is_active() {
                        self.state = SessionState::Failed(
                            "the training thread stopped without saying why".to_owned(),
                        );
                    }
                    break;
                }
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        any
    }

    fn apply(&mut self, message: WorkerMessage) {
        match message {
            WorkerMessage::Stage(Stage::LoadingData) => {
                self.state = SessionState::Preparing("loading data…".to_owned());
            }
            WorkerMessage::Stage(loaded @ Stage::DataLoaded { .. }) => {
                self.state = SessionState::Preparing(format!("{loaded}; uploading…"));
            }
            WorkerMessage::Stage(Stage::FolderCreated(path)) => {
                self.history.path = path;
            }
            WorkerMessage::Event(event) => self.apply_event(*event),
            WorkerMessage::Done(Ok(path)) => {
                self.history.path = path;
                if self.state.is_active() {
                    self.state = SessionState::Finished(RunOutcome::Completed);
                }
            }
            WorkerMessage::Done(Err(reason)) => self.state = SessionState::Failed(reason),
        }
    }

    fn apply_event(&mut self, event: TrainEvent) {
        match event {
            TrainEvent::Started(info) => {
                self.state = SessionState::Running;
                // Compare the live run by the device it really uses, not by `auto`.
                if let (Some(config), Ok(device)) =
                    (self.history.config.as_mut(), info.device_id.parse())
                {
                    config.device = device;
                }
                self.start = Some(info);
            }
            TrainEvent::Progress(progress) => {
                if self.warmup_secs.is_none() {
                    self.warmup_secs = Some(progress.wall_secs);
                }
                self.history.metrics.push(progress.clone());
                self.last_progress = Some(progress);
            }
            TrainEvent::EpochEnd(row) => self.history.epochs.push(row),
            TrainEvent::Warning(warning) => self.warnings.push(warning.to_string()),
            // The summary that follows carries the test figures.
            TrainEvent::Tested(_) => {}
            TrainEvent::Predictions(predictions) => self.predictions = Some(predictions),
            TrainEvent::LabelPredictions(predictions) => {
                self.label_predictions = Some(predictions);
            }
            TrainEvent::Finished(summary) => {
                self.warmup_secs = Some(summary.warmup_secs);
                self.state = SessionState::Finished(summary.outcome);
                self.history.summary = Some(*summary);
            }
            TrainEvent::Failed(reason) => self.state = SessionState::Failed(reason),
        }
    }

    /// Whether the run has tested its model: its predictions, per class or per label, are in.
    pub fn has_test_predictions(&self) -> bool {
        self.predictions.is_some() || self.label_predictions.is_some()
    }

    /// Holds the loop at the next step boundary.
    pub fn pause(&mut self) {
        if self.state == SessionState::Running {
            self.control.pause();
            self.state = SessionState::Paused;
        }
    }

    /// Lets a paused loop go on.
    pub fn resume(&mut self) {
        if self.state == SessionState::Paused {
            self.control.resume();
            self.state = SessionState::Running;
        }
    }

    /// Stops the loop at the next step boundary; the run folder keeps what was done.
    pub fn cancel(&mut self) {
        if self.state.is_active() {
            self.control.cancel();
            self.state = SessionState::Cancelling;
        }
    }

    /// Whether the engine currently holds the loop.
    pub fn is_paused(&self) -> bool {
        self.control.state() == ControlState::Paused
    }

    /// Seconds since Start was pressed.
    pub fn elapsed_secs(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Estimated seconds left, from the steady throughput and the images still to train on.
    pub fn eta_secs(&self) -> Option<f64> {
        let start = self.start.as_ref()?;
        let progress = self.last_progress.as_ref()?;
        if progress.samples_per_sec <= 0.0 {
            return None;
        }
        let total = (start.train_len * start.epochs) as f64;
        let left = (total - progress.samples_seen as f64).max(0.0);
        let epochs_left = start.epochs.saturating_sub(progress.epoch);
        let mean_eval_secs = if self.history.epochs.is_empty() {
            0.0
        } else {
            self.history
                .epochs
                .iter()
                .filter_map(|e| e.eval_secs)
                .sum::<f64>()
                / self.history.epochs.len() as f64
        };
        Some(left / progress.samples_per_sec + mean_eval_secs * epochs_left as f64)
    }
}

/// `history` of a stopped run as its resumed run starts: the rows up to its checkpoint's
/// `epochs_completed`, no summary.
fn resumed_history(mut history: RunHistory, epochs_completed: usize) -> RunHistory {
    history.metrics.retain(|row| row.epoch <= epochs_completed);
    history.epochs.retain(|row| row.epoch <= epochs_completed);
    history.summary = None;
    history
}

/// What a page's training task does.
#[cfg(target_arch = "wasm32")]
enum PageJob {
    /// A new run of the experiment.
    Start(Experiment),
    /// The stopped run in `folder` goes on, on `devices` when given.
    Resume {
        folder: PathBuf,
        devices: Option<Vec<DeviceChoice>>,
    },
}

/// Runs `job` as a task on the page's event loop ([`run::execute_in_page`],
/// [`run::resume_in_page`]), which gives the page its turn while it trains, and hands back the
/// channel its messages come on; `path` names the run once it is done.
#[cfg(target_arch = "wasm32")]
fn spawn_in_page(
    job: PageJob,
    control: &Arc<Control>,
    wake: impl Fn() + 'static,
) -> Receiver<WorkerMessage> {
    let (sender, messages) = mpsc::channel();
    let control = Arc::clone(control);
    wasm_bindgen_futures::spawn_local(async move {
        let send = |message: WorkerMessage| {
            let _ = sender.send(message);
            wake();
        };
        // The browser's storage keeps the run after each epoch and at its end, so a reload
        // or a closed tab loses at most the epoch under way (and resumes from the one before).
        let folder = std::cell::RefCell::new(None::<PathBuf>);
        let keep = || {
            if let Some(path) = folder.borrow().as_deref() {
                super::page_store::keep(path);
            }
        };
        let mut on_stage = |stage: Stage| {
            if let Stage::FolderCreated(path) = &stage {
                *folder.borrow_mut() = Some(path.clone());
            }
            send(WorkerMessage::Stage(stage));
        };
        // An epoch's checkpoint is kept after its EpochEnd, so the run is stored when the next
        // epoch's first row arrives: the stored run then resumes from the epoch it shows last.
        let mut last_epoch = None;
        let mut on_event = |event: &TrainEvent| {
            if let TrainEvent::Progress(row) = event {
                if last_epoch.is_some_and(|epoch| epoch != row.epoch) {
                    keep();
                }
                last_epoch = Some(row.epoch);
            }
            send(WorkerMessage::Event(Box::new(event.clone())));
        };
        let result = match job {
            PageJob::Start(experiment) => {
                run::execute_in_page(&experiment, &control, &mut on_stage, &mut on_event).await
            }
            PageJob::Resume {
                folder: run,
                devices,
            } => run::resume_in_page(&run, devices, &control, &mut on_stage, &mut on_event).await,
        };
        keep();
        send(WorkerMessage::Done(
            result.map(|record| record.path).map_err(|e| e.to_string()),
        ));
    });
    messages
}

/// Runs `job` (`execute` for a new run, `resume` for a stopped one) on a thread named `kiln-train` and hands back the channel its messages come on.
#[cfg(not(target_arch = "wasm32"))]
fn spawn_worker(
    control: &Arc<Control>,
    wake: impl Fn() + Send + 'static,
    job: impl FnOnce(
        &Arc<Control>,
        &mut dyn FnMut(Stage),
        &mut dyn FnMut(&TrainEvent),
    ) -> Result<run::RunRecord, run::RunError>
    + Send
    + 'static,
) -> std::io::Result<Receiver<WorkerMessage>> {
    let (sender, messages) = mpsc::channel();
    let control = Arc::clone(control);
    std::thread::Builder::new()
        .name("kiln-train".to_owned())
        .spawn(move || {
            // A closed channel means the window is gone; the run folder still records everything.
            let send = |message: WorkerMessage| {
                let _ = sender.send(message);
                wake();
            };
            let result = job(
                &control,
                &mut |stage| send(WorkerMessage::Stage(stage)),
                &mut |event| send(WorkerMessage::Event(Box::new(event.clone()))),
            );
            send(WorkerMessage::Done(
                result.map(|record| record.path).map_err(|e| e.to_string()),
            ));
        })?;
    Ok(messages)
}
