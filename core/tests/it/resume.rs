//! Resume gives the uninterrupted run's result. The CPU backend's seeded generator is per
//! process, so each test here takes its turn with every other test that draws from it
//! ([`crate::seeded_turn`]).

use std::fs;
use std::path::Path;
use std::sync::Arc;

use kiln_core::config::{Experiment, ExperimentDraft, OptimizerSpec, Schedule};
use kiln_core::device::DeviceChoice;
use kiln_core::executor::block_on;
use kiln_core::model::{Activation, ModelSpec};
use kiln_core::run::{execute, execute_in_page, resume, resume_in_page};
use kiln_core::run_folder::{self, Slot, page_runs};
use kiln_core::train::{Control, RunOutcome, TrainEvent};
use kiln_formats::files::FileTree;
use kiln_test_support::scratch_dir;

/// Dropout, Adam and a step schedule: every piece of state a resume has to bring back.
fn resumable_experiment() -> Experiment {
    ExperimentDraft {
        name: "resume".into(),
        model: ModelSpec::Mlp {
            widths: vec![24],
            activation: Activation::Relu,
            dropout: 0.2,
        },
        optimizer: OptimizerSpec::from_name("adam").unwrap(),
        schedule: Schedule::Step {
            every_epochs: 2,
            gamma: 0.5,
        },
        batch_size: 500,
        epochs: 4,
        device: DeviceChoice::Cpu,
        readback_interval_ms: 10,
        ..ExperimentDraft::default()
    }
    .validate()
    .unwrap()
}

/// Result columns of epochs.csv (timings differ from run to run).
fn epoch_results(folder: &Path) -> Vec<String> {
    fs::read_to_string(folder.join("epochs.csv"))
        .unwrap()
        .lines()
        .map(|line| line.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect()
}

/// A listener that cancels the run once a metrics row of its third epoch is written: a stop
/// in the middle of an epoch.
fn cancel_in_third_epoch(control: &Control) -> impl FnMut(&TrainEvent) + '_ {
    move |event| {
        if let TrainEvent::Progress(p) = event
            && p.epoch == 3
        {
            control.cancel();
        }
    }
}

/// The text of the file at `path` among this thread's page runs.
fn page_text(path: &Path) -> String {
    page_runs::with(|runs| {
        let (mut file, _) = runs.open(path).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        text
    })
}

/// Result columns of a page run's epochs.csv.
fn page_epoch_results(folder: &Path) -> Vec<String> {
    page_text(&folder.join("epochs.csv"))
        .lines()
        .map(|line| line.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect()
}

/// One column of metrics.csv as numbers.
fn metrics_column(folder: &Path, column: usize) -> Vec<usize> {
    fs::read_to_string(folder.join("metrics.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|row| row.split(',').nth(column).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_run_stopped_mid_epoch_and_resumed_ends_as_the_uninterrupted_run() {
    let _turn = crate::seeded_turn();
    let experiment = resumable_experiment();
    let control = Arc::new(Control::new());
    let straight_dir = scratch_dir("straight");
    let straight = execute(
        &experiment,
        &straight_dir,
        &control,
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(straight.summary.outcome, RunOutcome::Completed);

    // Stop in the middle of the third epoch, after a metrics row of it was written.
    let stopped_dir = scratch_dir("stopped");
    let control = Arc::new(Control::new());
    let stopped = execute(
        &experiment,
        &stopped_dir,
        &control,
        &mut |_| {},
        &mut cancel_in_third_epoch(&control),
    )
    .unwrap();
    assert_eq!(stopped.summary.outcome, RunOutcome::Cancelled);
    assert_eq!(stopped.summary.epochs_completed, 2);
    assert!(run_folder::can_resume(&stopped.path, experiment.draft()));
    assert!(metrics_column(&stopped.path, 1).contains(&3));
    assert!(run_folder::find(&stopped.path, Slot::Best).is_ok());

    let control = Arc::new(Control::new());
    let mut first_epoch = None;
    let resumed = resume(&stopped.path, None, &control, &mut |_| {}, &mut |event| {
        if let TrainEvent::Started(info) = event {
            first_epoch = Some(info.first_epoch);
        }
    })
    .unwrap();
    assert_eq!(first_epoch, Some(2));
    assert_eq!(resumed.path, stopped.path);
    assert_eq!(resumed.summary.outcome, RunOutcome::Completed);
    assert_eq!(resumed.summary.epochs_completed, 4);
    assert_eq!(resumed.summary.steps, straight.summary.steps);
    assert_eq!(resumed.summary.samples_seen, straight.summary.samples_seen);
    assert_eq!(epoch_results(&resumed.path), epoch_results(&straight.path));
    assert_eq!(
        fs::read_to_string(resumed.path.join("predictions.csv")).unwrap(),
        fs::read_to_string(straight.path.join("predictions.csv")).unwrap()
    );
    // The rows of the abandoned third epoch are gone; the resumed ones continue the count.
    let steps = metrics_column(&resumed.path, 3);
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    let epochs = metrics_column(&resumed.path, 1);
    assert!(epochs.windows(2).all(|w| w[0] <= w[1]), "{epochs:?}");

    // A finished run has nothing left to resume.
    let again = resume(&resumed.path, None, &control, &mut |_| {}, &mut |_| {}).unwrap_err();
    assert!(again.to_string().contains("nothing to resume"), "{again}");
    let _ = fs::remove_dir_all(straight_dir);
    let _ = fs::remove_dir_all(stopped_dir);
}

#[test]
fn a_run_keeping_its_best_epoch_keeps_it_across_a_resume() {
    let _turn = crate::seeded_turn();
    // Nothing clears a min_delta of 10: epoch 1 stays the best, and patience ends epoch 3.
    let experiment = ExperimentDraft {
        early_stop: 2,
        min_delta: 10.0,
        ..resumable_experiment().draft().clone()
    }
    .validate()
    .unwrap();
    let dir = scratch_dir("keep-best");
    let control = Arc::new(Control::new());
    let stopped = execute(&experiment, &dir, &control, &mut |_| {}, &mut |event| {
        if matches!(event, TrainEvent::EpochEnd(row) if row.epoch == 2) {
            control.cancel();
        }
    })
    .unwrap();
    assert_eq!(stopped.summary.outcome, RunOutcome::Cancelled);
    assert_eq!(stopped.summary.epochs_completed, 2);
    assert!(run_folder::can_resume(&stopped.path, experiment.draft()));
    let resumed = resume(
        &stopped.path,
        None,
        &Arc::new(Control::new()),
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap();
    let summary = resumed.summary;
    assert_eq!(summary.outcome, RunOutcome::Completed);
    assert_eq!(summary.epochs_completed, 3);
    assert_eq!(summary.stopped_early.map(|s| s.best_epoch), Some(1));
    // Epoch 1 came before the resume: its weights come back from the best checkpoint.
    assert_eq!(summary.kept_epoch, Some(1));
    let best = run_folder::slot_folder(&resumed.path, Slot::Best).join("model.bpk");
    assert!(fs::read(resumed.path.join("model.bpk")).unwrap() == fs::read(best).unwrap());
    // And a run that stopped early has nothing left to resume: the runs list offers no Resume
    // (it did, until the rule was shared), and a resume says why.
    assert!(!run_folder::can_resume(&resumed.path, experiment.draft()));
    let err = resume(
        &resumed.path,
        None,
        &Arc::new(Control::new()),
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("stopped early after epoch 3"),
        "{err}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_run_moves_to_another_device_when_it_resumes() {
    let _turn = crate::seeded_turn();
    // A GPU adapter where there is one (lavapipe in CI), else the CPU again: the move itself,
    // the checkpoint read onto a device it was not written from, is what is tested.
    let (target, target_name) = match kiln_core::device::list_devices()
        .into_iter()
        .find(|d| d.id.starts_with("gpu:"))
    {
        Some(gpu) => (gpu.id.parse::<DeviceChoice>().unwrap(), gpu.name),
        None => {
            eprintln!("no GPU adapter: the run resumes on the CPU it started on");
            (DeviceChoice::Cpu, String::new())
        }
    };
    let experiment = resumable_experiment();
    let runs = scratch_dir("move");
    let control = Arc::new(Control::new());
    let stopper = Arc::clone(&control);
    let stopped = execute(&experiment, &runs, &control, &mut |_| {}, &mut |event| {
        if let TrainEvent::EpochEnd(end) = event
            && end.epoch == 2
        {
            stopper.cancel();
        }
    })
    .unwrap();
    assert_eq!(stopped.summary.outcome, RunOutcome::Cancelled);

    let resumed = resume(
        &stopped.path,
        Some(vec![target]),
        &Arc::new(Control::new()),
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(resumed.summary.outcome, RunOutcome::Completed);
    assert_eq!(resumed.summary.epochs_completed, 4);
    if !target_name.is_empty() {
        assert_eq!(resumed.summary.device_name, target_name);
    }
    // config.toml still says where the run started, so --config reruns it as it was.
    let config = fs::read_to_string(resumed.path.join("config.toml")).unwrap();
    assert!(config.contains("device = \"cpu\""), "{config}");
    let _ = fs::remove_dir_all(runs);
}

#[test]
fn a_page_run_stopped_mid_epoch_and_resumed_in_the_page_ends_as_the_uninterrupted_one() {
    let _turn = crate::seeded_turn();
    let experiment = resumable_experiment();
    let straight = block_on(execute_in_page(
        &experiment,
        &Control::new(),
        &mut |_| {},
        &mut |_| {},
    ))
    .unwrap();
    assert_eq!(straight.summary.outcome, RunOutcome::Completed);

    let control = Control::new();
    let stopped = block_on(execute_in_page(
        &experiment,
        &control,
        &mut |_| {},
        &mut cancel_in_third_epoch(&control),
    ))
    .unwrap();
    assert_eq!(stopped.summary.outcome, RunOutcome::Cancelled);
    assert_eq!(stopped.summary.epochs_completed, 2);
    page_runs::with(|runs| {
        assert!(run_folder::can_resume_in(
            runs,
            &stopped.path,
            experiment.draft()
        ));
        assert!(run_folder::find_in(runs, &stopped.path, Slot::Best).is_ok());
        assert!(
            !run_folder::can_resume(&stopped.path, experiment.draft()),
            "not on disk"
        );
    });

    let mut first_epoch = None;
    let resumed = block_on(resume_in_page(
        &stopped.path,
        None,
        &Control::new(),
        &mut |_| {},
        &mut |event| {
            if let TrainEvent::Started(info) = event {
                first_epoch = Some(info.first_epoch);
            }
        },
    ))
    .unwrap();
    assert_eq!(first_epoch, Some(2));
    assert_eq!(resumed.path, stopped.path);
    assert_eq!(resumed.summary.outcome, RunOutcome::Completed);
    assert_eq!(resumed.summary.steps, straight.summary.steps);
    assert_eq!(
        page_epoch_results(&resumed.path),
        page_epoch_results(&straight.path)
    );
    assert_eq!(
        page_text(&resumed.path.join("predictions.csv")),
        page_text(&straight.path.join("predictions.csv"))
    );
    page_runs::with(|runs| {
        assert!(runs.is_file(&resumed.path.join("model.bpk")));
        // A completed run in a page has no use for its checkpoints; the browser's storage
        // would keep them with the run.
        assert!(!runs.is_dir(&resumed.path.join("checkpoints")));
        assert!(!run_folder::can_resume_in(
            runs,
            &resumed.path,
            experiment.draft()
        ));
    });
    let again = block_on(resume_in_page(
        &resumed.path,
        None,
        &Control::new(),
        &mut |_| {},
        &mut |_| {},
    ))
    .unwrap_err();
    assert!(again.to_string().contains("nothing to resume"), "{again}");
}
