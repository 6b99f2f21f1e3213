//! A sweep the window runs (from *Sweep…*, or *Explain the difference* between two ticked
//! runs): its trials on a named thread through the same queue as `kiln sweep`, a line per trial
//! as it goes, Cancel, and once it ends the table, the charts and, for an explain sweep, each
//! difference's effect with its waterfall.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};

use kiln_core::device::DeviceChoice;
use kiln_core::sweep::report::SortBy;
use kiln_core::sweep::{self, ExplainReport, Sweep, SweepEvent, SweepReport, SweepTally};
use kiln_core::train::{Control, ControlState};

use super::sweep_charts::DrawnCharts;

/// What the sweep's thread says.
enum Message {
    /// A trial started, ended, was proposed or could not run.
    Event(SweepEvent),
    /// The sweep ended: how its trials stand, or why it could not run.
    Done(Result<SweepTally, String>),
}

/// One sweep the window runs or ran.
pub struct SweepJob {
    /// The sweep folder.
    pub folder: PathBuf,
    /// Its plan, for naming trials.
    sweep: Sweep,
    control: Arc<Control>,
    messages: Receiver<Message>,
    /// A line per trial event, newest last.
    lines: Vec<String>,
    /// Trials that ended (finished, pruned, cancelled or failed) in this start.
    ended: usize,
    /// How it ended, once it has.
    outcome: Option<Result<SweepTally, String>>,
    /// The folder read as one table once the sweep ended.
    report: Option<SweepReport>,
    /// An explain sweep's effects.
    explained: Option<ExplainReport>,
    /// The drawn charts' titles and textures, made once after the end.
    charts: Option<DrawnCharts>,
    /// The column the table is sorted by.
    sort: SortBy,
}

impl SweepJob {
    /// Runs `sweep` in `folder` on `devices` on a thread; `wake` redraws after each message.
    pub fn start(
        sweep: Sweep,
        folder: PathBuf,
        devices: Vec<DeviceChoice>,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        let control = Arc::new(Control::new());
        let (sender, messages) = mpsc::channel();
        let (thread_sweep, thread_folder, thread_control) =
            (sweep.clone(), folder.clone(), Arc::clone(&control));
        let wake = Arc::new(wake);
        let spawned = std::thread::Builder::new()
            .name("kiln-sweep".to_owned())
            .spawn(move || {
                let (events, wake_on_event) = (sender.clone(), Arc::clone(&wake));
                let on_event = move |event: SweepEvent| {
                    // A closed channel: the window went away; the sweep goes on to its end.
                    let _ = events.send(Message::Event(event));
                    wake_on_event();
                };
                let ended = sweep::run_sweep(
                    &thread_sweep,
                    &thread_folder,
                    &devices,
                    &thread_control,
                    &on_event,
                );
                let _ = sender.send(Message::Done(ended.map_err(|e| e.to_string())));
                wake();
            });
        let mut job = Self {
            folder,
            sweep,
            control,
            messages,
            lines: Vec::new(),
            ended: 0,
            outcome: None,
            report: None,
            explained: None,
            charts: None,
            sort: SortBy::default(),
        };
        if let Err(e) = spawned {
            job.outcome = Some(Err(format!("could not start a thread for the sweep: {e}")));
        }
        job
    }

    /// Whether its trials are still running.
    pub fn is_running(&self) -> bool {
        self.outcome.is_none()
    }

    /// Asks the running trials to stop at their next step and starts no more.
    pub fn cancel(&self) {
        self.control.cancel();
    }

    /// Holds the running trials at their next step, or lets held ones go on.
    pub fn toggle_pause(&self) {
        match self.control.state() {
            ControlState::Paused => self.control.resume(),
            _ => self.control.pause(),
        }
    }

    /// Takes the thread's messages; reads the folder as a table once the sweep has ended.
    pub fn poll(&mut self) {
        while let Ok(message) = self.messages.try_recv() {
            match message {
                Message::Event(event) => {
                    if let SweepEvent::Proposed { trials, .. } = &event
                        && let Some(first) = trials.first()
                    {
                        self.sweep.add_setting(first.setting.clone());
                    }
                    if matches!(event, SweepEvent::Ended { .. } | SweepEvent::Failed { .. }) {
                        self.ended += 1;
                    }
                    self.lines.push(event.describe(&self.sweep));
                }
                Message::Done(outcome) => {
                    self.outcome = Some(outcome);
                    self.read_results();
                    self.write_charts();
                }
            }
        }
    }

    /// The sweep folder as one table, and an explain sweep's effects.
    fn read_results(&mut self) {
        match SweepReport::read(&self.folder) {
            Ok(report) => {
                self.explained = sweep::open_sweep_folder(&self.folder)
                    .ok()
                    .and_then(|sweep| ExplainReport::of(&sweep, &report));
                self.report = Some(report);
            }
            Err(e) => self
                .lines
                .push(format!("could not read the sweep back: {e}")),
        }
    }
}

impl SweepJob {
    /// Writes the charts beside the trials as `kiln sweep` does; charts that cannot be written
    /// are a line, not an end.
    fn write_charts(&mut self) {
        let Some(report) = &self.report else { return };
        if let Err(e) = sweep::write_charts(report, self.explained.as_ref(), &self.folder) {
            self.lines.push(format!("could not write the charts: {e}"));
        }
    }
}

/// The sweep's panel: its progress and Cancel while it runs; its table, charts and (for an
/// explain sweep) effects once it has ended.
pub fn sweep_job_ui(ui: &mut egui::Ui, job: &mut SweepJob) {
    job.poll();
    let planned = job.sweep.trials.len() + job.sweep.proposals_left() * job.sweep.spec.seeds;
    ui.horizontal(|ui| {
        ui.strong(format!("Sweep {}", job.sweep.name));
        ui.label(job.sweep.describe())
            .on_hover_text(job.folder.display().to_string());
    });
    match &job.outcome {
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("{} of {planned} trials ended", job.ended));
                let paused = job.control.state() == ControlState::Paused;
                if ui
                    .button(if paused {
                        "⏵ Resume sweep"
                    } else {
                        "⏸ Pause sweep"
                    })
                    .on_hover_text("Hold the running trials at their next step, or let them go on")
                    .clicked()
                {
                    job.toggle_pause();
                }
                if ui
                    .button("⏹ Cancel sweep")
                    .on_hover_text(
                        "Stop the trials at their next step; `kiln sweep --resume` goes on later",
                    )
                    .clicked()
                {
                    job.cancel();
                }
            });
            if let Some(line) = job.lines.last() {
                ui.label(line);
            }
        }
        Some(Err(reason)) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        Some(Ok(tally)) => {
            ui.label(format!(
                "{} finished now, {} done before, {} cancelled, {} failed, {} not started",
                tally.finished,
                tally.already_done,
                tally.cancelled,
                tally.failed,
                tally.not_started
            ));
        }
    }
    if let Some(report) = &job.report {
        let state = (&mut job.sort, &mut job.charts);
        results_ui(ui, report, job.explained.as_ref(), state);
    }
}

/// The sweep's table, its effects when it explains a gap, and its charts.
fn results_ui(
    ui: &mut egui::Ui,
    report: &SweepReport,
    explained: Option<&ExplainReport>,
    (sort, charts): (&mut SortBy, &mut Option<DrawnCharts>),
) {
    let spread = |s: Option<sweep::report::Spread>, scale: f64, digits: usize| {
        s.map_or("-".to_owned(), |s| {
            format!("{:.digits$} ± {:.digits$}", scale * s.mean, scale * s.std)
        })
    };
    egui::Grid::new("sweep-table").striped(true).show(ui, |ui| {
        let headers = [
            (SortBy::Plan, "setting"),
            (SortBy::Plan, "seeds"),
            (SortBy::Validation, report.figure_name()),
            (SortBy::Test, "test"),
            (SortBy::EpochSecs, "s/epoch"),
            (SortBy::Plan, "against the best"),
        ];
        for (key, header) in headers {
            let chosen = *sort == key && key != SortBy::Plan;
            if ui
                .selectable_label(chosen, egui::RichText::new(header).strong())
                .on_hover_text("Sort by this column (the setting's column: the plan's order)")
                .clicked()
            {
                *sort = key;
            }
        }
        ui.end_row();
        for row in report.sorted_rows(*sort) {
            ui.label(&row.setting);
            ui.label(match row.pruned {
                0 => format!("{}/{}", row.finished, row.planned),
                pruned => format!("{}/{} ({pruned} pruned)", row.finished, row.planned),
            });
            ui.label(spread(row.val_accuracy, 100.0, 2));
            ui.label(spread(row.test_accuracy, 100.0, 2));
            ui.label(spread(row.epoch_secs, 1.0, 2));
            ui.label(row.versus_best.map(|v| v.describe()).unwrap_or_default());
            ui.end_row();
        }
    });
    if let Some(explained) = explained {
        ui.separator();
        ui.label(egui::RichText::new(explained.describe()).monospace());
    }
    super::sweep_charts::charts_ui(ui, report, explained, charts);
}
