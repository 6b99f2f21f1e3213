//! `kiln`: with no arguments opens the window; subcommands run headless.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kiln::cli::main()
}
