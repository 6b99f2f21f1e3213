//! The command line: raw arguments parsed once into validated settings, then handed to the engine.

mod bench;
mod compare;
mod data;
mod devices;
mod export;
mod progress;
mod train;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Train image classifiers on your own GPU and see where the time goes.
#[derive(Debug, Parser)]
#[command(name = "kiln", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Where the window keeps and reads run folders (subcommands take their own --runs-dir).
    #[arg(long, value_name = "DIR", default_value = "runs")]
    runs_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a model; with no options, an MLP on the built-in synthetic data set.
    Train(Box<train::TrainArgs>),
    /// List every device Kiln can train on, and which one `--device auto` picks.
    Devices(devices::DevicesArgs),
    /// Download and check data sets.
    Data(data::DataArgs),
    /// List the shipped presets (the reference workloads).
    Presets,
    /// Write run folders as a CSV and plot images (PNG, SVG); several runs are overlaid.
    Export(export::ExportArgs),
    /// Compare runs: settings that differ, final figures and speed side by side, seed spread.
    Compare(compare::CompareArgs),
    /// Time a workload for a fixed number of steps: warm-up, ms per step, samples/s, memory.
    Bench(Box<bench::BenchArgs>),
}

/// Runs the command line; errors are printed once, here, as one sentence.
pub fn main() -> ExitCode {
    if std::env::var_os("BURN_DEVICE").is_none() {
        // Burn stages a loaded optimizer state on its default device (a GPU when one is
        // compiled in) before moving it to the training device. Staging on the CPU keeps a
        // resumed CPU run from starting a GPU runtime, or failing where there is none.
        // SAFETY: nothing else runs yet; no other thread can read the environment meanwhile.
        unsafe { std::env::set_var("BURN_DEVICE", "flex") };
    }
    if let Some(dir) = kiln_core::device::kernel_cache_dir() {
        // Before any device starts: autotune results of earlier launches are read from there.
        kiln_core::device::keep_kernel_cache_in(&dir);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        None => crate::gui::run(cli.runs_dir),
        Some(Command::Train(args)) => train::run(*args),
        Some(Command::Devices(args)) => devices::run(&args),
        Some(Command::Data(args)) => data::run(args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Bench(args)) => bench::run(*args),
        Some(Command::Presets) => {
            print_presets();
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", sentence(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, without repeating a cause the message already quotes.
fn sentence(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn print_presets() {
    let names = kiln_core::config::preset_names();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for name in names {
        match kiln_core::config::preset(name) {
            Ok(draft) => println!("{name:<width$}  {}", preset_line(&draft)),
            Err(e) => println!("{name:<width$}  (unreadable: {e})"),
        }
    }
}

/// What a preset trains, with the settings its framework flavours differ in (init, input
/// scaling, loss, Adam's ε), so `-pytorch` and `-keras` do not read alike.
fn preset_line(draft: &kiln_core::config::ExperimentDraft) -> String {
    use kiln_core::config::OptimizerSpec;
    let epsilon = match &draft.optimizer {
        OptimizerSpec::Adam { epsilon, .. } | OptimizerSpec::AdamW { epsilon, .. } => {
            format!(", ε {epsilon:e}")
        }
        _ => String::new(),
    };
    format!(
        "{} on {}, {} lr {}, batch {}, {} epochs; init {}, inputs {}, loss on {}{epsilon}",
        draft.model,
        draft.dataset,
        draft.optimizer.name(),
        draft.lr,
        draft.batch_size,
        draft.epochs,
        draft.init,
        draft.input_scaling,
        draft.loss,
    )
}
