//! Kiln's front ends: the window (`gui`) and the command line (`cli`). Both only translate
//! between people and `kiln_core`; the binary in main.rs just hands over to `cli::main`. In a
//! browser page (the `kiln-web` crate) only the window is built.

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod gui;
