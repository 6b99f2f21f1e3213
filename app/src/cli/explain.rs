//! `kiln explain A B`: every setting in which two configs differ, defaults included, run along
//! the one-at-a-time path as a sweep (each difference alone on A, each undone from B, over
//! seeds), and each difference's effect on accuracy and speed with its interval; with
//! `--loop`, the speed gap between Kiln's loop and the naive user loop, habit by habit.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::config::{self, ExperimentDraft};
use kiln_core::sweep::{self, Sweep};

/// Options of `kiln explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A: a config file, a run folder (its config.toml) or a preset's name.
    #[arg(value_name = "A", required_unless_present_any = ["resume", "speed"])]
    a: Option<String>,
    /// B: a config file, a run folder or a preset's name; its differences from A are explained.
    #[arg(value_name = "B", required_unless_present_any = ["resume", "speed", "flavour"])]
    b: Option<String>,
    /// Instead of B: A under that framework's defaults (as `kiln train --flavour`), to split a
    /// gap to a run of that framework into the defaults that make it.
    #[arg(long, value_name = "pytorch|keras", value_parser = config::Flavour::from_word, conflicts_with_all = ["b", "speed", "resume"])]
    flavour: Option<config::Flavour>,
    /// Explain a speed gap instead: Kiln's loop against the naive user loop on A's workload
    /// (the built-in default without A), each of the naive loop's habits taken up alone.
    #[arg(long = "loop", conflicts_with_all = ["b", "resume", "list"])]
    speed: bool,
    /// With --loop: the device the loops run on (default: A's).
    #[arg(long, value_name = "DEVICE", requires = "speed")]
    device: Option<String>,
    /// With --loop: steps timed per loop, after one warm-up step.
    #[arg(long, value_name = "N", default_value_t = 200, requires = "speed")]
    steps: usize,
    /// Seeds of each setting on the path (at least 2 for intervals).
    #[arg(long, value_name = "N", default_value_t = 3)]
    seeds: usize,
    /// Train every trial for this many epochs instead of A's and B's own: a quicker, rougher
    /// answer (the gap after fewer epochs may not be the gap after all of them).
    #[arg(long, value_name = "N")]
    epochs: Option<usize>,
    /// The devices trials run on, one trial per device at a time (default: A's device).
    #[arg(long, value_name = "cpu,gpu:0,remote:HOST:PORT/N")]
    devices: Option<String>,
    /// Where the explain sweep's folder goes.
    #[arg(long, value_name = "DIR", default_value = "sweeps")]
    sweeps_dir: PathBuf,
    /// Go on with the explain sweep in this folder where it stopped.
    #[arg(long, value_name = "SWEEP_DIR", conflicts_with_all = ["a", "b"])]
    resume: Option<PathBuf>,
    /// Only list the differences; train nothing.
    #[arg(long)]
    list: bool,
}

/// Runs `kiln explain`.
pub fn run(args: ExplainArgs) -> anyhow::Result<()> {
    if args.speed {
        let draft = match &args.a {
            Some(word) => draft_of(word)?,
            None => ExperimentDraft::default(),
        };
        return super::explain_loop::run(draft, args.device.as_deref(), args.steps);
    }
    if let Some(folder) = &args.resume {
        let sweep = sweep::open_sweep_folder(folder)?;
        return super::sweep::run_in_folder(&sweep, folder, args.devices.as_deref());
    }
    let (a_word, b_word, mut a, mut b) = match (&args.a, &args.b, args.flavour) {
        (Some(a_word), _, Some(flavour)) => {
            let a = draft_of(a_word)?;
            let b = flavour.apply(&a);
            let b_word = format!("{a_word} with {}'s defaults", flavour.name());
            (a_word.clone(), b_word, a, b)
        }
        (Some(a_word), Some(b_word), None) => {
            let (a, b) = (draft_of(a_word)?, draft_of(b_word)?);
            (a_word.clone(), b_word.clone(), a, b)
        }
        _ => anyhow::bail!(
            "give two configs, run folders or presets to explain (or one and --flavour), or --resume SWEEP_DIR"
        ),
    };
    if let Some(epochs) = args.epochs {
        a.epochs = epochs;
        b.epochs = epochs;
    }
    let sweep::Differences {
        causes: differences,
        unused,
        a_only,
    } = sweep::differences(&a, &b);
    println!("B ({b_word}) differs from A ({a_word}) in:");
    for difference in &differences {
        println!("  {}", difference.describe());
    }
    for difference in &unused {
        println!(
            "  {}: used by neither model nor data set, so it cannot change a figure; not trained",
            difference.describe()
        );
    }
    for key in &a_only {
        println!("  {key}: set in A only, which the path cannot undo; set it in B to include it");
    }
    if differences.is_empty() {
        anyhow::bail!(
            "A and B differ in nothing that changes what they learn; there is nothing to explain"
        );
    }
    if args.list {
        return Ok(());
    }
    if !(1..=sweep::plan::MAX_SEEDS).contains(&args.seeds) {
        anyhow::bail!("--seeds must be from 1 to {}", sweep::plan::MAX_SEEDS);
    }
    let name = sweep::explain_name(&a, &b);
    let text = sweep::explain_config(&a, &differences, args.seeds, &name);
    let planned = Sweep::from_toml(&text, "the explain sweep")?;
    let folder = sweep::create_sweep_folder(&args.sweeps_dir, &planned, &text)?;
    super::sweep::run_in_folder(&planned, &folder, args.devices.as_deref())
}

/// The config a word names: a run folder's config.toml, a config file, or a preset.
fn draft_of(word: &str) -> anyhow::Result<ExperimentDraft> {
    let path = std::path::Path::new(word);
    if path.is_dir() {
        let config = path.join(kiln_core::run_folder::CONFIG_FILE);
        let text = std::fs::read_to_string(&config)
            .with_context(|| format!("{word} is a folder without a run's config.toml"))?;
        return Ok(ExperimentDraft::from_run_config(
            &text,
            &config.display().to_string(),
        )?);
    }
    if path.is_file() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("could not read {word}"))?;
        return Ok(ExperimentDraft::from_toml(&text, word)?);
    }
    config::preset(word).with_context(|| {
        format!("{word} is not a config file, a run folder or a preset (`kiln presets` lists them)")
    })
}
