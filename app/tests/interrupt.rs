//! Ctrl-C in `kiln train`: the run stops at a step boundary and its folder is complete.

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

#[test]
fn ctrl_c_cancels_and_keeps_a_complete_run_folder() {
    let runs = std::env::temp_dir().join(format!("kiln-interrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&runs);
    let child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "train", "--device", "cpu", "--model", "mlp:16", "--epochs", "10000",
        ])
        .args(["--batch", "32", "--runs-dir"])
        .arg(&runs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kiln binary runs");

    // Wait until training has really started: the first metrics row is on disk.
    let deadline = Instant::now() + Duration::from_secs(120);
    let folder = loop {
        assert!(
            Instant::now() < deadline,
            "no metrics row within two minutes"
        );
        if let Some(folder) = run_folder(&runs)
            && std::fs::read_to_string(folder.join("metrics.csv"))
                .is_ok_and(|text| text.lines().count() > 1)
        {
            break folder;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
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
