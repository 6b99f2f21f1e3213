//! `kiln`: train image classifiers on your own GPU. Subcommands run headless.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
