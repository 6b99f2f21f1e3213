//! Run folders written by the real writer, read back, listed, renamed and deleted.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::config::ExperimentDraft;
use crate::data::test_dir;
use crate::train::{RunOutcome, RunSummary, TrainEvent};

/// A readback of the 0-based `epoch`, as the loop counts.
fn progress(epoch: usize, step: usize, loss: f64) -> MetricsRow {
    MetricsRow {
        wall_secs: step as f64 * 0.5,
        epoch: epoch + 1,
        step,
        global_step: epoch * 10 + step,
        samples_seen: (epoch * 10 + step) as u64 * 32,
        train_loss: loss,
        train_accuracy: 0.5,
        samples_per_sec: 1000.0,
        step_ms: 2.5,
        data_ms: 0.1,
        compute_ms: 2.0,
        sync_ms: 0.4,
        lr: 1e-3,
    }
}

/// The end of the 0-based `epoch`.
fn epoch_end(epoch: usize) -> EpochRow {
    EpochRow {
        epoch: epoch + 1,
        train_loss: 1.0,
        train_accuracy: 0.6,
        val_loss: None,
        val_accuracy: None,
        test_loss: Some(1.1),
        test_accuracy: Some(0.55),
        epoch_secs: 5.0,
        eval_secs: 0.5,
        samples_per_sec: 900.0,
    }
}

/// A run folder written by the real writer: two epochs of five readbacks each.
fn write_run(runs_dir: &Path, name: &str, lr: f64) -> PathBuf {
    let draft = ExperimentDraft {
        name: name.to_owned(),
        lr,
        ..ExperimentDraft::default()
    };
    let experiment = draft.validate().unwrap();
    let mut folder = RunFolder::create(runs_dir, &experiment).unwrap();
    for epoch in 0..2 {
        for step in 1..=5 {
            folder
                .record(&TrainEvent::Progress(progress(
                    epoch,
                    step,
                    2.0 / step as f64,
                )))
                .unwrap();
        }
        folder
            .record(&TrainEvent::EpochEnd(epoch_end(epoch)))
            .unwrap();
    }
    let mut summary = RunSummary::new("cpu", 100, 0.1, 0.0);
    summary.epochs_completed = 2;
    folder
        .record(&TrainEvent::Finished(Box::new(summary)))
        .unwrap();
    folder.path().to_owned()
}

#[test]
fn a_folder_written_by_run_folder_reads_back() {
    let dir = test_dir("history-load");
    let path = write_run(&dir, "first", 0.01);
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.name, "first");
    // config.toml round-trips the whole draft, an absent data_dir included.
    let expected = ExperimentDraft {
        name: "first".to_owned(),
        lr: 0.01,
        ..ExperimentDraft::default()
    };
    assert_eq!(run.config.as_ref(), Some(&expected));
    assert_eq!(run.metrics.len(), 10);
    assert_eq!(run.epochs.len(), 2);
    let first = &run.metrics[0];
    assert_eq!(first, &progress(0, 1, 2.0));
    assert_eq!(run.metrics[9].epoch, 2);
    assert_eq!(run.epochs[1], epoch_end(1));
    assert_eq!(run.summary.as_ref().unwrap().outcome, RunOutcome::Completed);
    assert!(run.folder_name().ends_with("-first"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_truncated_last_row_is_skipped_silently() {
    let dir = test_dir("history-truncated");
    let path = write_run(&dir, "cut", 0.01);
    fs::remove_file(path.join("summary.json")).unwrap();
    let mut metrics = fs::read_to_string(path.join("metrics.csv")).unwrap();
    metrics.push_str("3.000,3,1,21,672,0.9");
    fs::write(path.join("metrics.csv"), metrics).unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.metrics.len(), 10);
    assert!(run.summary.is_none());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn garbage_rows_are_skipped_and_named() {
    let dir = test_dir("history-garbage");
    let path = write_run(&dir, "garbage", 0.01);
    let text = fs::read_to_string(path.join("epochs.csv")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "2,oops,0.5,1,0.5,,,1,1,1");
    fs::write(path.join("epochs.csv"), lines.join("\n") + "\n").unwrap();
    fs::write(path.join("summary.json"), "{ not json").unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert_eq!(run.epochs.len(), 2);
    assert_eq!(run.problems.len(), 2, "{:?}", run.problems);
    assert!(
        run.problems[0].contains("epochs.csv line 3") && run.problems[0].contains("oops"),
        "{:?}",
        run.problems
    );
    assert!(
        run.problems[1].contains("summary.json"),
        "{:?}",
        run.problems
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn hand_written_files_and_a_bad_config_still_load() {
    let dir = test_dir("history-hand");
    let path = dir.join("20260101-000000-hand");
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("config.toml"), "batch = 3\n").unwrap();
    // Columns reordered and one added, CRLF line ends, NaN loss.
    fs::write(
        path.join("metrics.csv"),
        "epoch,wall_secs,step,global_step,samples_seen,train_loss,train_accuracy,samples_per_sec,step_ms,data_ms,compute_ms,sync_ms,lr,extra\r\n\
         1,0.5,1,1,32,NaN,0.1,100,1,0,1,0,0.1,x\r\n",
    )
    .unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert_eq!(run.name, "20260101-000000-hand");
    assert!(run.config.is_none());
    assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
    assert!(run.problems[0].contains("config.toml"));
    assert_eq!(run.metrics.len(), 1);
    assert_eq!(run.metrics[0].epoch, 1);
    assert_eq!(run.metrics[0].wall_secs, 0.5);
    assert!(run.metrics[0].train_loss.is_nan());
    assert!(run.epochs.is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// A run folder as Kiln wrote it before validation splits: epochs.csv without `val_*`
/// columns, config.toml without `validation`, summary.json without `validated_on`.
#[test]
fn a_folder_from_before_validation_splits_reads_as_validated_on_test() {
    let dir = test_dir("history-older");
    let path = dir.join("20260101-000000-older");
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("config.toml"), "name = \"older\"\nepochs = 2\n").unwrap();
    fs::write(
        path.join("epochs.csv"),
        "epoch,train_loss,train_accuracy,test_loss,test_accuracy,epoch_secs,eval_secs,samples_per_sec\n\
         1,0.9,0.7,0.8,0.75,1.0,0.1,6000\n",
    )
    .unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let row = &run.epochs[0];
    assert_eq!((row.val_loss, row.val_accuracy), (None, None));
    assert_eq!((row.test_loss, row.test_accuracy), (Some(0.8), Some(0.75)));
    assert_eq!(row.held_out(), Some((0.8, 0.75)));
    assert_eq!(run.validated_on(), crate::selection::ValidatedOn::Test);
    let config = run.config.as_ref().unwrap();
    assert_eq!(config.validation, crate::config::Validation::Test);
    assert_eq!(config.keep, crate::config::Keep::Last);
    let mut summary = serde_json::to_value(RunSummary::new("CPU", 1, 0.0, 0.0)).unwrap();
    summary.as_object_mut().unwrap().remove("validated_on");
    let older: RunSummary = serde_json::from_value(summary).unwrap();
    assert_eq!(older.validated_on, crate::selection::ValidatedOn::Test);
    // Renamed, it still reads as the run it was: its config is written back as validated on
    // test and keeping its last epoch (a resume must not carve validation out of its training).
    let renamed = rename_run(&path, "older-renamed").unwrap();
    let config = RunHistory::load(&renamed).unwrap().config.unwrap();
    assert_eq!(config.name, "older-renamed");
    assert_eq!(config.validation, crate::config::Validation::Test);
    assert_eq!(config.keep, crate::config::Keep::Last);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn missing_and_non_run_folders_are_errors() {
    let dir = test_dir("history-missing");
    let err = RunHistory::load(&dir.join("nope")).unwrap_err();
    assert!(matches!(err, FolderError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("nope"), "{err}");
    let err = RunHistory::load(&dir).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn runs_are_listed_newest_first() {
    let dir = test_dir("history-list");
    assert!(list_runs(&dir.join("missing")).unwrap().is_empty());
    for name in [
        "20260102-000000-b",
        "20260103-000000-c",
        "20260101-000000-a",
    ] {
        fs::create_dir_all(dir.join(name)).unwrap();
        fs::write(dir.join(name).join("metrics.csv"), MetricsRow::HEADER).unwrap();
    }
    fs::create_dir_all(dir.join("20270101-000000-not-a-run")).unwrap();
    fs::write(dir.join("20280101-000000-file"), "x").unwrap();
    let names: Vec<String> = list_runs(&dir)
        .unwrap()
        .iter()
        .map(|p| folder_name_of(p))
        .collect();
    assert_eq!(
        names,
        [
            "20260103-000000-c",
            "20260102-000000-b",
            "20260101-000000-a"
        ]
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn rename_moves_the_folder_and_rewrites_the_config() {
    let dir = test_dir("history-rename");
    let path = write_run(&dir, "old", 0.01);
    let stamp = folder_name_of(&path)[..15].to_owned();
    let renamed = rename_run(&path, "new_name-2.b").unwrap();
    assert_eq!(folder_name_of(&renamed), format!("{stamp}-new_name-2.b"));
    assert!(!path.exists());
    let run = RunHistory::load(&renamed).unwrap();
    assert_eq!(run.name, "new_name-2.b");
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.metrics.len(), 10);
    // The renamed config still validates, so the run can be rerun from it.
    run.config.unwrap().validate().unwrap();
    // Renaming to the same name is a no-op, not "already exists".
    assert_eq!(rename_run(&renamed, "new_name-2.b").unwrap(), renamed);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn rename_refuses_bad_names_and_taken_targets() {
    let dir = test_dir("history-rename-refused");
    let path = write_run(&dir, "one", 0.01);
    for bad in ["", "a/b", "a b", "..\\x", "x.", &"n".repeat(65)] {
        let err = rename_run(&path, bad).unwrap_err();
        assert!(matches!(err, FolderError::BadName { .. }), "{bad}: {err}");
    }
    let stamp = folder_name_of(&path)[..15].to_owned();
    fs::create_dir_all(dir.join(format!("{stamp}-taken"))).unwrap();
    let err = rename_run(&path, "taken").unwrap_err();
    assert!(matches!(err, FolderError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("taken"), "{err}");
    let err = rename_run(&dir.join("nothing"), "x").unwrap_err();
    assert!(matches!(err, FolderError::NotFound { .. }), "{err}");
    let plain = dir.join("plain");
    fs::create_dir_all(&plain).unwrap();
    let err = rename_run(&plain, "x").unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    // Nothing changed.
    assert_eq!(RunHistory::load(&path).unwrap().name, "one");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn delete_refuses_what_is_not_a_run() {
    let dir = test_dir("history-delete");
    let other = dir.join("photos");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("cat.png"), "meow").unwrap();
    let err = delete_run(&other).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    assert!(other.join("cat.png").exists());
    let err = delete_run(&other.join("cat.png")).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    let path = write_run(&dir, "doomed", 0.01);
    #[cfg(unix)]
    {
        // Deleting a link to a run removes the link, never the run it points to.
        let link = dir.join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        delete_run(&link).unwrap();
        assert!(!link.exists() && path.join("metrics.csv").exists());
    }
    delete_run(&path).unwrap();
    assert!(!path.exists());
    assert!(matches!(
        delete_run(&path).unwrap_err(),
        FolderError::NotFound { .. }
    ));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn timestamps_are_utc_calendar_dates() {
    assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000");
    // 2026-11-29 15:34:06 UTC
    let t = UNIX_EPOCH + Duration::from_secs(1_795_966_446);
    assert_eq!(timestamp(t), "20261129-153406");
    // A leap day.
    let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
    assert_eq!(timestamp(t), "20000229-000000");
}
