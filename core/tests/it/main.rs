//! kiln-core's integration tests, one test binary: each binary links the whole of Burn, so the
//! workspace keeps one per crate (`.ci/test-layout` holds it to that).

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fresh_process;
mod half_precision;
mod kernel_cache;
mod resume;
mod seeded_runs;

use std::sync::{Mutex, MutexGuard};

/// Held for a whole test by every test that draws from the CPU backend's seeded generator:
/// Burn keeps one per process, so two tests drawing at once would change what a seed gives.
fn seeded_turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
