//! Kiln's training engine. Data flows one way: config → dataset on device → training loop →
//! events → (window | terminal | run folder). The engine never knows who is listening;
//! ARCHITECTURE.md at the repository's root draws the modules and which way the imports go.

pub mod compare;
pub mod config;
pub mod data;
pub mod device;
#[cfg(not(target_arch = "wasm32"))]
pub mod executor;
pub mod export;
pub mod model;
pub mod plot;
pub mod predict;
pub mod remote;
pub mod results;
// A run folder on disk, a panic caught around a blocking loop: the browser keeps its runs its own way.
#[cfg(not(target_arch = "wasm32"))]
pub mod run;
pub mod run_folder;
pub mod selection;
pub mod settings;
pub mod train;
pub mod weights;
