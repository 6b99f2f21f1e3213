//! Kiln's training engine. Data flows one way: config → dataset on device → training loop →
//! events → (window | terminal | run folder). The engine never knows who is listening;
//! ARCHITECTURE.md at the repository's root draws the modules and which way the imports go.

pub mod atomic_file;
pub mod compare;
pub mod config;
pub mod data;
pub mod device;
pub mod executor;
pub mod export;
pub mod model;
pub(crate) mod panics;
pub mod pixels;
pub mod plot;
pub mod predict;
pub mod remote;
pub mod results;
pub mod run;
pub mod run_folder;
pub mod selection;
pub mod settings;
pub(crate) mod shuffle;
// A sweep runs its trials on this computer's threads and disk; a page trains one run at a time.
#[cfg(not(target_arch = "wasm32"))]
pub mod sweep;
pub mod train;
pub mod weights;
