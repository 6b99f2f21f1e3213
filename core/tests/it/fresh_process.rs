//! A test whose subject is set once per process (CubeCL's configuration) runs in a process of
//! its own: this binary, started again on that one test. One binary keeps the workspace's link
//! count down (docs/development.md); a process of its own keeps the test honest.

use std::process::Command;

/// Runs the ignored test `name` (its path in this binary) alone in a new process of this test
/// binary, and fails unless it ran and passed there.
pub fn run_alone(name: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--test-threads", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in a process of its own:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
