//! The `kiln` package's integration tests, one test binary: each binary links the whole of Burn,
//! so the workspace keeps one per crate (`.ci/test-layout` holds it to that).

mod cli;
mod gui;
mod interrupt;
mod remote;
