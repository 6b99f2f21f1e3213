//! `kiln`: with no arguments opens the window; subcommands run headless.

fn main() -> std::process::ExitCode {
    kiln::cli::main()
}
