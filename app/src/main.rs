//! `kiln`: with no arguments opens the window; subcommands run headless.

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    kiln::cli::main()
}

/// A browser page opens the window through the `kiln-web` crate; there is no program to run.
#[cfg(target_arch = "wasm32")]
fn main() {}
