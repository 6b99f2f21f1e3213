//! The command line: raw arguments parsed once into validated settings, then handed to the engine.

mod archive;
mod bench;
mod compare;
mod data;
mod devices;
mod explain;
mod explain_loop;
mod export;
mod export_model;
mod import;
mod label_columns;
mod lr_find;
mod predict;
mod progress;
pub mod reference;
mod serve;
mod setting_flags;
mod sweep;
mod train;
mod weights;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// What `kiln --version` prints: Kiln's version and those of the engines it was built with, which
/// decide its speed and its bugs. A test keeps them equal to Cargo.lock's.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (Burn 0.22.1, wgpu 30.0.2, egui 0.37.0)"
);

/// Train image classifiers on your own GPU and see where the time goes.
// Each flag's help on the line after it, wrapped to the terminal (clap's `wrap_help`): beside
// value forms as long as --model's, clap put the help 130 columns in, past any terminal's edge.
#[derive(Debug, Parser)]
#[command(name = "kiln", version, long_version = LONG_VERSION, about, long_about = None, next_line_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Where the window keeps and reads run folders (subcommands take their own --runs-dir);
    /// by default `runs` here when started from a shell or when it exists, else the per-user
    /// data folder (as when started from a menu).
    #[arg(long, value_name = "DIR")]
    runs_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a model; with no options, an MLP on the built-in synthetic data set.
    Train(Box<train::TrainArgs>),
    /// List every device Kiln can train on, and which one `--device auto` picks.
    Devices(devices::DevicesArgs),
    /// Download and check data sets.
    Data(data::DataArgs),
    /// Pretrained weights: fetch torchvision's ImageNet weights, list them, check a file.
    Weights(weights::WeightsArgs),
    /// List the shipped presets (the reference workloads).
    Presets,
    /// Write run folders as a CSV and plot images (PNG, SVG); several runs are overlaid.
    Export(export::ExportArgs),
    /// Write a completed run's model for other tools: safetensors with PyTorch's key names, ONNX.
    ExportModel(export_model::ExportModelArgs),
    /// Classify image files and folders with a completed run's model: a CSV of each image's
    /// likeliest classes, and optionally copies or links sorted into class folders.
    Predict(predict::PredictArgs),
    /// Compare runs: settings that differ, final figures and speed side by side, seed spread.
    Compare(compare::CompareArgs),
    /// Run a config's [sweep] table: its trials as a queue over devices into one sweep folder
    /// (resumable), then a row per setting with mean ± std over seeds and seed noise tested.
    Sweep(sweep::SweepArgs),
    /// Why B trains differently from A: each setting in which they differ (defaults included)
    /// applied alone to A and undone alone from B, over seeds, as a sweep; each one's effect.
    Explain(explain::ExplainArgs),
    /// Time a workload for a fixed number of steps: warm-up, ms per step, samples/s, memory.
    Bench(Box<bench::BenchArgs>),
    /// Find a learning rate: a fresh model trained while the rate grows from tiny to huge until
    /// the loss diverges; the rate where the loss fell fastest is suggested.
    LrFind(Box<lr_find::LrFindArgs>),
    /// Pack a run folder, checkpoints included, into one .tar file to carry elsewhere.
    Archive(archive::ArchiveArgs),
    /// Bring runs into a runs folder: run folder archives (`kiln archive`, the window's
    /// Archive…), and other frameworks' training logs (Keras, Lightning, TensorBoard, CSV).
    Import(import::ImportArgs),
    /// Host this machine's devices for Kiln on other machines (`--device remote:HOST:PORT/N`).
    Serve(serve::ServeArgs),
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
    #[cfg(target_os = "linux")]
    give_mesa_a_runtime_dir();
    if let Some(dir) = kiln_core::device::kernel_cache_dir() {
        // Before any device starts: autotune results of earlier launches are read from there.
        kiln_core::device::keep_kernel_cache_in(&dir);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        None => crate::gui::run(window_runs_dir(cli.runs_dir)),
        Some(Command::Train(args)) => train::run(*args),
        Some(Command::Sweep(args)) => sweep::run(args),
        Some(Command::Explain(args)) => explain::run(args),
        Some(Command::Devices(args)) => devices::run(&args),
        Some(Command::Data(args)) => data::run(args),
        Some(Command::Weights(args)) => weights::run(args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::ExportModel(args)) => export_model::run(&args),
        Some(Command::Predict(args)) => predict::run(&args),
        Some(Command::Compare(args)) => compare::run(&args),
        Some(Command::Bench(args)) => bench::run(*args),
        Some(Command::LrFind(args)) => lr_find::run(*args),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::Archive(args)) => archive::run_archive(&args),
        Some(Command::Import(args)) => import::run(&args),
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

/// Mesa's Vulkan drivers look for a Wayland display while wgpu lists adapters, and where
/// `XDG_RUNTIME_DIR` is missing (a container, CI, `su`) libwayland prints "error:
/// XDG_RUNTIME_DIR is invalid or not set" twice before a run that is fine. Without a runtime
/// folder there is no display to find anyway; an empty private one of Kiln's own lets the
/// lookup find nothing quietly.
#[cfg(target_os = "linux")]
fn give_mesa_a_runtime_dir() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let set = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    if set.is_some_and(|dir| dir.is_absolute() && dir.is_dir()) {
        return;
    }
    // /proc/self belongs to this process's user.
    let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kiln-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    // Someone else's folder (or a link) under that name is not used.
    let ours = std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o777 == 0o700);
    if ours {
        // SAFETY: called first thing in main, before any other thread exists.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

/// The window's runs folder: `given`, else `./runs` when started from a shell or when it
/// exists, else the per-user data folder (`~/.local/share/kiln/runs`, `~/Library/Application
/// Support/kiln/runs`, `%APPDATA%\kiln\runs`): a launch from a menu starts in the home
/// folder, where a `runs` folder would be a surprise.
pub fn window_runs_dir(given: Option<PathBuf>) -> crate::gui::RunsDir {
    use std::io::IsTerminal;
    choose_runs_dir(
        given,
        std::path::Path::new("runs").is_dir(),
        std::io::stdin().is_terminal(),
        dirs::data_dir(),
    )
}

/// [`window_runs_dir`]'s rule, given what it looks at.
fn choose_runs_dir(
    given: Option<PathBuf>,
    runs_here: bool,
    from_shell: bool,
    data_dir: Option<PathBuf>,
) -> crate::gui::RunsDir {
    use crate::gui::RunsDir;
    match (given, data_dir) {
        (Some(dir), _) => RunsDir::Fixed(dir),
        (None, Some(data)) if !runs_here && !from_shell => {
            RunsDir::PerUser(data.join("kiln").join("runs"))
        }
        (None, _) => RunsDir::Fixed(PathBuf::from("runs")),
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
            Ok(draft) => {
                println!("{name:<width$}  {}", preset_line(&draft));
                println!("{:<width$}  {}", "", defaults_line(&draft));
            }
            Err(e) => println!("{name:<width$}  (unreadable: {e})"),
        }
    }
}

/// What a preset trains.
fn preset_line(draft: &kiln_core::config::ExperimentDraft) -> String {
    format!(
        "{} on {}, {} lr {}, batch {}, {} epochs",
        draft.model,
        draft.dataset,
        draft.optimizer.name(),
        draft.lr,
        draft.batch_size,
        draft.epochs,
    )
}

/// The settings the framework flavours differ in, each marked where the preset's model and data
/// do not use it, so `-pytorch` and `-keras` do not read alike and a reader sees which count.
fn defaults_line(draft: &kiln_core::config::ExperimentDraft) -> String {
    use kiln_core::config::OptimizerSpec;
    let mut parts: Vec<String> = kiln_core::config::FRAMEWORK_DEFAULTS
        .iter()
        .filter_map(|setting| setting.row())
        .filter_map(|row| {
            let (word, value) = row.legend_entry(draft)?;
            let unused = if row.applies(draft) { "" } else { " (unused)" };
            Some(format!("{word} {value}{unused}"))
        })
        .collect();
    if let OptimizerSpec::Adam { epsilon, .. } | OptimizerSpec::AdamW { epsilon, .. } =
        &draft.optimizer
    {
        parts.push(format!("Adam ε {epsilon:e}"));
    }
    format!("defaults: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_keeps_runs_here_from_a_shell_and_in_the_data_folder_from_a_menu() {
        use crate::gui::RunsDir;
        let data = || Some(PathBuf::from("/home/ada/.local/share"));
        let here = || RunsDir::Fixed(PathBuf::from("runs"));
        assert_eq!(
            choose_runs_dir(None, false, false, data()),
            RunsDir::PerUser(PathBuf::from("/home/ada/.local/share/kiln/runs"))
        );
        assert_eq!(choose_runs_dir(None, false, true, data()), here());
        assert_eq!(choose_runs_dir(None, true, false, data()), here());
        let given = Some(PathBuf::from("elsewhere"));
        assert_eq!(
            choose_runs_dir(given, false, false, data()),
            RunsDir::Fixed(PathBuf::from("elsewhere"))
        );
        // A system without a data folder falls back to ./runs rather than failing.
        assert_eq!(choose_runs_dir(None, false, false, None), here());
    }

    #[test]
    fn the_long_version_names_the_engines_cargo_lock_builds() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"))
            .expect("the workspace's Cargo.lock");
        let version_of = |name: &str| {
            let entry = format!("name = \"{name}\"\nversion = \"");
            let start = lock.find(&entry).expect(name) + entry.len();
            lock[start..]
                .split('"')
                .next()
                .expect("a version")
                .to_owned()
        };
        for (shown, crate_name) in [("Burn", "burn"), ("wgpu", "wgpu"), ("egui", "egui")] {
            let expected = format!("{shown} {}", version_of(crate_name));
            assert!(
                LONG_VERSION.contains(&expected),
                "{LONG_VERSION} lacks {expected}"
            );
        }
    }

    /// The package installs its desktop entry and AppStream component under the window's app
    /// id; a desktop shell matches them to the window by it.
    #[test]
    fn the_linux_package_files_carry_the_window_app_id() {
        let linux = concat!(env!("CARGO_MANIFEST_DIR"), "/../packaging/linux/");
        let id = crate::gui::APP_ID;
        let desktop = std::fs::read_to_string(format!("{linux}{id}.desktop")).expect("entry");
        assert!(desktop.contains(&format!("\nIcon={id}\n")), "{desktop}");
        assert!(
            desktop.contains(&format!("\nStartupWMClass={id}\n")),
            "{desktop}"
        );
        let metainfo =
            std::fs::read_to_string(format!("{linux}{id}.metainfo.xml")).expect("metainfo");
        assert!(metainfo.contains(&format!("<id>{id}</id>")), "{metainfo}");
        assert!(
            metainfo.contains(&format!(">{id}.desktop</launchable>")),
            "{metainfo}"
        );
        let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .expect("manifest");
        for size in [48, 64, 128, 256, 512] {
            let icon = format!("hicolor/{size}x{size}/apps/{id}.png");
            assert!(manifest.contains(&icon), "the package installs {icon}");
        }
    }
}
