//! `kilnw` run for real beside a stand-in `kiln` (a shell script that records what it got).

#![cfg(unix)]
// Helpers outside #[test] functions unwrap too: a failed unwrap there is a failed test.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// Held by each test from its first written file to its last spawned process. Linux refuses to
/// run a file that any process holds open for writing ("Text file busy"), and a child forked by
/// one test holds a copy of every descriptor the other test has open until it execs; CI saw
/// that once, so the tests take turns.
static WRITING_OR_SPAWNING: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    WRITING_OR_SPAWNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
    let _turn = one_at_a_time();
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
    let _turn = one_at_a_time();
    let dir = install_dir("missing");

    let output = Command::new(dir.join("kilnw")).output().unwrap();

    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("is missing. Reinstall Kiln."), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}
