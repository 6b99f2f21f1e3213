//! The window's experiments: the *Sweep…* window's Start, *Explain the difference* between two
//! ticked runs, and where their sweep folders go (`sweeps/` beside the runs folder, as
//! `kiln sweep` keeps them beside `runs/` when run from the same place).

use super::*;
use kiln_core::sweep::{self, Sweep};

impl KilnApp {
    /// Where the window's sweep folders go: `sweeps` beside the runs folder.
    fn sweeps_dir(&self) -> PathBuf {
        match self.runs_dir.parent() {
            Some(parent) => parent.join("sweeps"),
            None => PathBuf::from("sweeps"),
        }
    }

    /// Whether the window runs a sweep now.
    pub(super) fn sweep_running(&self) -> bool {
        self.sweep_job.as_ref().is_some_and(|job| job.is_running())
    }

    /// The *Sweep…* window, while open; a sweep it starts runs in the Compare view.
    pub(super) fn sweep_dialog_ui(&mut self, ctx: &egui::Context) {
        let sweeps_dir = self.sweeps_dir();
        let Some(dialog) = &mut self.sweep_dialog else {
            return;
        };
        let draft = self.form.to_draft(&mut Default::default());
        match dialog.window_ui(ctx, &draft, &sweeps_dir) {
            Some(sweep_dialog::SweepDialogAction::Start { text, sweep }) => {
                self.sweep_dialog = None;
                self.start_sweep(*sweep, &text);
            }
            Some(sweep_dialog::SweepDialogAction::Resume(folder)) => {
                self.sweep_dialog = None;
                self.resume_sweep(folder);
            }
            Some(sweep_dialog::SweepDialogAction::PickFolderToResume) => {
                match files::pick_folder("Sweep folder to resume", Some(&sweeps_dir)) {
                    Ok(Some(folder)) => {
                        self.sweep_dialog = None;
                        self.resume_sweep(folder);
                    }
                    Ok(None) => {}
                    Err(e) => self.notice = Some(e),
                }
            }
            Some(sweep_dialog::SweepDialogAction::Close) => self.sweep_dialog = None,
            None => {}
        }
    }

    /// Goes on with the sweep in `folder` where it stopped, as `kiln sweep --resume` does:
    /// finished trials are kept, a trial cut mid-way resumes from its checkpoint.
    fn resume_sweep(&mut self, folder: PathBuf) {
        match sweep::open_sweep_folder(&folder) {
            Ok(sweep) => self.run_sweep_in(sweep, folder),
            Err(e) => {
                self.notice = Some(format!("{} cannot be resumed: {e}", folder.display()));
            }
        }
    }

    /// Makes `sweep`'s folder (its config `text` kept as `sweep.toml`) and runs its trials on
    /// the devices its config names, shown in the Compare view.
    fn start_sweep(&mut self, sweep: Sweep, text: &str) {
        if self.sweep_running() {
            self.notice = Some("a sweep is running; cancel it or let it end first".to_owned());
            return;
        }
        match sweep::create_sweep_folder(&self.sweeps_dir(), &sweep, text) {
            Ok(folder) => self.run_sweep_in(sweep, folder),
            Err(e) => self.notice = Some(format!("the sweep could not start: {e}")),
        }
    }

    /// Runs `sweep`'s trials not yet finished in `folder` on the devices its config names,
    /// shown in the Compare view.
    fn run_sweep_in(&mut self, sweep: Sweep, folder: PathBuf) {
        if self.sweep_running() {
            self.notice = Some("a sweep is running; cancel it or let it end first".to_owned());
            return;
        }
        let devices = match sweep.trials.first().map(|trial| sweep.draft(trial)) {
            Some(Ok(draft)) => draft.devices(),
            Some(Err(e)) => {
                self.notice = Some(e.to_string());
                return;
            }
            None => Vec::new(),
        };
        let ctx = self.ctx.clone();
        self.notice = Some(format!("sweep folder {}", folder.display()));
        self.sweep_job = Some(sweep_job::SweepJob::start(
            sweep,
            folder,
            devices,
            move || wake(&ctx),
        ));
        self.stage = Stage::Compare;
    }

    /// Runs the explain sweep between the two ticked runs: every setting in which the second
    /// differs from the first, each applied alone and undone alone, over three seeds.
    pub(super) fn explain_ticked(&mut self) {
        let ticked = self.runs.selected_runs();
        let configs: Vec<&kiln_core::config::ExperimentDraft> = ticked
            .iter()
            .filter_map(|run| run.config.as_ref())
            .collect();
        let [a, b] = configs.as_slice() else {
            self.notice = Some(
                "tick two Kiln runs to explain their difference (an imported run has no config to rerun)"
                    .to_owned(),
            );
            return;
        };
        let (a, b) = ((*a).clone(), (*b).clone());
        self.explain_between(a, b);
    }

    /// Starts the explain sweep of B's differences from A, or says why there is none.
    pub(super) fn explain_between(
        &mut self,
        a: kiln_core::config::ExperimentDraft,
        b: kiln_core::config::ExperimentDraft,
    ) {
        let differences = sweep::differences(&a, &b).causes;
        if differences.is_empty() {
            self.notice = Some(
                "the two runs differ in nothing that changes what they learn (their seed aside); there is nothing to explain"
                    .to_owned(),
            );
            return;
        }
        let name = sweep::explain_name(&a, &b);
        let text = sweep::explain_config(&a, &differences, 3, &name);
        match Sweep::from_toml(&text, "the explain sweep") {
            Ok(planned) => self.start_sweep(planned, &text),
            Err(e) => self.notice = Some(e.to_string()),
        }
    }
}
