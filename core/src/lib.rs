//! Kiln's training engine. Data flows one way: config → dataset on device → training loop →
//! events. The engine never knows whether a window, a terminal or a test is listening.

pub mod checkpoint;
pub mod compare;
pub mod config;
pub mod data;
pub mod device;
pub mod export;
pub mod history;
pub mod model;
pub mod predict;
pub mod run;
pub mod train;
