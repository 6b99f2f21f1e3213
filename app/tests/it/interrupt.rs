//! Interrupting `kiln train`: Ctrl-C stops at a step boundary with a complete folder; `kill -9`
//! leaves every file written so far readable.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn run_folder(runs: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(runs)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .next()
}

/// Starts a run long enough to be interrupted, writing its folder under `runs`.
fn spawn_long_run(runs: &Path, stderr: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "train", "--device", "cpu", "--model", "mlp:16", "--epochs", "10000",
        ])
        .args(["--batch", "32", "--runs-dir"])
        .arg(runs)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("the kiln binary runs")
}

/// Waits until `file` of the run folder has a row below its header, and returns the folder.
fn wait_for_a_row(runs: &Path, file: &str) -> std::path::PathBuf {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "no row in {file} within two minutes"
        );
        if let Some(folder) = run_folder(runs)
            && std::fs::read_to_string(folder.join(file)).is_ok_and(|text| text.lines().count() > 1)
        {
            return folder;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_cancels_and_keeps_a_complete_run_folder() {
    let runs = std::env::temp_dir().join(format!("kiln-interrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&runs);
    let child = spawn_long_run(&runs, Stdio::piped());
    // Wait until training has really started: the first metrics row is on disk.
    let folder = wait_for_a_row(&runs, "metrics.csv");
    // The shell's own `kill`, so the test needs no procps.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -INT {}", child.id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("kiln exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a cancelled run must not exit 0");
    assert!(stderr.contains("cancel"), "{stderr}");

    let summary = std::fs::read_to_string(folder.join("summary.json")).expect("summary.json");
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["outcome"], "cancelled");
    assert!(summary["steps"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&runs);
}

#[test]
fn kill_9_mid_epoch_leaves_a_readable_folder() {
    let runs = std::env::temp_dir().join(format!("kiln-kill9-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&runs);
    let mut child = spawn_long_run(&runs, Stdio::null());
    // Kill it once an epoch has ended and the next one is under way, so both files have rows.
    let folder = wait_for_a_row(&runs, "epochs.csv");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().expect("SIGKILL is delivered");
    let _ = child.wait();

    // Everything written so far reads back: the config reruns, every row parses.
    let run = kiln_core::run_folder::RunHistory::load(&folder).expect("the folder loads");
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(run.config.is_some());
    assert!(!run.epochs.is_empty());
    assert!(!run.metrics.is_empty());
    assert!(run.summary.is_none(), "no summary: the run never finished");
    let config = std::fs::read_to_string(folder.join("config.toml")).unwrap();
    kiln_core::config::ExperimentDraft::from_toml(&config, "config.toml")
        .expect("config.toml parses")
        .validate()
        .expect("config.toml is a valid experiment");
    // No temporary file is left looking like a result.
    for entry in std::fs::read_dir(&folder).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(!name.to_string_lossy().ends_with(".tmp"), "{name:?}");
    }
    let _ = std::fs::remove_dir_all(&runs);
}

#[test]
fn a_second_writer_is_refused_while_the_first_trains_and_a_kill_9_frees_the_folder() {
    let runs = std::env::temp_dir().join(format!("kiln-one-writer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&runs);
    let mut child = spawn_long_run(&runs, Stdio::null());
    // With a checkpoint, so a resume would otherwise go ahead.
    let folder = wait_for_a_row(&runs, "epochs.csv");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !folder.join("checkpoints/last/state.json").exists() {
        assert!(Instant::now() < deadline, "no checkpoint within a minute");
        std::thread::sleep(Duration::from_millis(10));
    }

    // Seen trying Kiln: this trained the run to its end beside the first process.
    let second = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["train", "--resume"])
        .arg(&folder)
        .output()
        .expect("kiln runs");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    let holder = format!("is being written by process {} (kiln train)", child.id());
    assert!(stderr.contains(&holder), "{stderr}");

    // The system drops the hold with the process, however it ends.
    child.kill().expect("SIGKILL is delivered");
    let _ = child.wait();
    assert_eq!(kiln_core::run_folder::held_by(&folder), None);
    kiln_core::run_folder::FolderLock::acquire(&folder).expect("the folder is free");
    let _ = std::fs::remove_dir_all(&runs);
}

/// The result columns of a run's epochs.csv (timings differ from run to run).
fn epoch_results(folder: &Path) -> Vec<String> {
    std::fs::read_to_string(folder.join("epochs.csv"))
        .expect("epochs.csv")
        .lines()
        .map(|line| line.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect()
}

/// A short run with dropout and Adam; `runs` is where its folder goes.
fn short_run(runs: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
    command
        .args(["train", "--device", "cpu", "--model", "mlp:32:relu:0.1"])
        .args(["--epochs", "3", "--batch", "16", "--runs-dir"])
        .arg(runs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

#[test]
fn a_run_killed_mid_epoch_resumes_to_the_uninterrupted_result() {
    let root = std::env::temp_dir().join(format!("kiln-kill-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (killed_runs, straight_runs) = (root.join("killed"), root.join("straight"));

    let mut child = short_run(&killed_runs)
        .spawn()
        .expect("the kiln binary runs");
    let folder = wait_for_a_row(&killed_runs, "epochs.csv");
    // The epoch's row is written before its checkpoint; a kill between the two resumes from
    // the epoch before, which needs a first checkpoint to exist at all.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !folder.join("checkpoints/last/state.json").exists() {
        assert!(Instant::now() < deadline, "no checkpoint within a minute");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().expect("SIGKILL is delivered");
    let _ = child.wait();
    assert!(
        !folder.join("summary.json").exists(),
        "killed too late: the run had already finished"
    );

    // --device may go with --resume (the way on when a GPU is lost); the same device here, so
    // the result can be compared with the uninterrupted run's.
    let resumed = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["train", "--resume"])
        .arg(&folder)
        .args(["--device", "cpu"])
        .output()
        .expect("kiln runs");
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(stdout.contains("resuming on cpu"), "{stdout}");

    let straight = short_run(&straight_runs).output().expect("kiln runs");
    assert!(straight.status.success());
    let straight_folder = run_folder(&straight_runs).expect("a run folder");
    assert_eq!(epoch_results(&folder), epoch_results(&straight_folder));
    let run = kiln_core::run_folder::RunHistory::load(&folder).expect("the folder loads");
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(
        run.summary.map(|s| s.outcome),
        Some(kiln_core::train::RunOutcome::Completed)
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The folder in `dir` whose name ends in `suffix`, once there is one.
fn entry_ending(dir: &Path, suffix: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
}

#[test]
fn a_killed_sweep_resumes_where_it_stopped_and_trains_no_trial_twice() {
    let root = kiln_test_support::scratch_dir("sweep-kill");
    let config = root.join("sweep.toml");
    std::fs::write(
        &config,
        "name = \"cut\"\ndevice = \"cpu\"\nepochs = 3\nbatch_size = 16\n\n[model]\nkind = \"mlp\"\nwidths = [16]\n\n[sweep]\nlr = [0.01, 0.02]\n",
    )
    .unwrap();
    let sweeps = root.join("sweeps");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("sweep")
        .arg(&config)
        .arg("--sweeps-dir")
        .arg(&sweeps)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the kiln binary runs");
    // Killed once the second trial has its first checkpoint: the first trial is done by then.
    let deadline = Instant::now() + Duration::from_secs(120);
    let (sweep, second) = loop {
        assert!(
            Instant::now() < deadline,
            "no second trial's checkpoint within two minutes"
        );
        let sweep = entry_ending(&sweeps, "-sweep");
        let second = sweep.as_deref().and_then(|s| entry_ending(s, "-t002"));
        if let (Some(sweep), Some(second)) = (sweep, second)
            && second.join("checkpoints/last/state.json").exists()
        {
            break (sweep, second);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    child.kill().expect("SIGKILL is delivered");
    let _ = child.wait();
    assert!(
        !second.join("summary.json").exists(),
        "killed too late: the second trial had already finished"
    );
    let first = entry_ending(&sweep, "-t001").expect("the first trial's folder");
    let first_summary = std::fs::read(first.join("summary.json")).expect("the first trial ended");

    let resumed = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["sweep", "--resume"])
        .arg(&sweep)
        .output()
        .expect("kiln runs");
    let said = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{said}");
    assert!(
        said.contains("trial 1/2 (lr=0.01, seed 42): done before, kept"),
        "{said}"
    );
    let name = second.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        said.contains(&format!(
            "trial 2/2 (lr=0.02, seed 42): resuming {name} on cpu"
        )),
        "{said}"
    );
    // Nothing trained twice: the first trial untouched, the second in its own folder, each
    // epoch once.
    assert_eq!(
        std::fs::read(first.join("summary.json")).unwrap(),
        first_summary
    );
    let runs: Vec<_> = std::fs::read_dir(&sweep)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert_eq!(runs.len(), 2);
    let run = kiln_core::run_folder::RunHistory::load(&second).unwrap();
    let epochs: Vec<usize> = run.epochs.iter().map(|e| e.epoch).collect();
    assert_eq!(epochs, [1, 2, 3]);
    assert_eq!(
        run.summary.map(|s| s.outcome),
        Some(kiln_core::train::RunOutcome::Completed)
    );
    let table = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        table.contains("lr=0.01") && table.contains("lr=0.02"),
        "{table}"
    );
}
