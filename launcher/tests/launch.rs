//! `kilnw` run for real beside a stand-in `kiln` (a shell script that records what it got).

#![cfg(unix)]
// Helpers outside #[test] functions unwrap too: a failed unwrap there is a failed test.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder holding a copy of `kilnw`, as an installer lays it out.
fn install_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kilnw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_kilnw"), dir.join("kilnw")).unwrap();
    dir
}

fn write_stand_in(dir: &Path, script: &str) {
    let kiln = dir.join("kiln");
    std::fs::write(&kiln, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&kiln, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn kilnw_becomes_the_kiln_beside_it_with_the_same_arguments_and_exit_status() {
    let dir = install_dir("runs");
    let record = dir.join("args.txt");
    write_stand_in(
        &dir,
        &format!("echo \"$@\" > '{}'\nexit 3", record.display()),
    );

    let status = Command::new(dir.join("kilnw"))
        .args(["--runs-dir", "my runs"])
        .status()
        .unwrap();

    assert_eq!(status.code(), Some(3), "kiln's own exit status comes back");
    let args = std::fs::read_to_string(&record).expect("the kiln beside kilnw ran");
    assert_eq!(args.trim(), "--runs-dir my runs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kilnw_without_kiln_beside_it_says_to_reinstall() {
    let dir = install_dir("missing");

    let output = Command::new(dir.join("kilnw")).output().unwrap();

    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("is missing. Reinstall Kiln."), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}
