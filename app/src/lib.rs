//! Kiln's front ends: the window (`gui`) and the command line (`cli`). Both only translate
//! between people and `kiln_core`; the binary in main.rs just hands over to [`cli::main`].

pub mod cli;
pub mod gui;
