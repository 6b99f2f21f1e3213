//! A sweep's plan: a base config, the axes its `[sweep]` table varies, and the trials they make.
//!
//! An axis is any key of the config (`lr`, `input_scaling`, `optimizer.weight_decay`, `model`)
//! over a list of values or a numeric range. A trial's config is the base with its values set
//! and read back through [`ExperimentDraft::from_toml`], so an axis can vary whatever a config
//! can say, and a value the engine refuses is refused before any trial runs, naming its trial.

use std::fmt::Write as _;

use crate::config::ExperimentDraft;
use crate::config::value_text;
use crate::shuffle::ShuffleRng;

use super::pruning::PruneRule;

/// The table of a config that makes it a sweep.
pub const SWEEP_TABLE: &str = "sweep";
/// Most trials one sweep may plan; more is a typo in a range, not an experiment.
pub const MAX_TRIALS: usize = 10_000;
/// Most seeds per setting.
pub const MAX_SEEDS: usize = 100;

/// Why a sweep config cannot be planned, in one sentence that says what to change.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{source_name}: {problem}")]
pub struct PlanError {
    /// The config's name (its file).
    pub source_name: String,
    /// The problem and what to do about it.
    pub problem: String,
}

/// How the settings of a sweep are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Every combination of the axes' values.
    Grid,
    /// `trials` settings drawn at random from the axes.
    Random,
    /// The base, then each axis's values changed alone from it.
    OneAtATime,
    /// A model-based search (TPE, as Optuna's default sampler): `startup_trials` settings
    /// drawn at random, then each next one proposed from how the settings before it did.
    Tpe,
    /// `kiln explain`'s path between two configs: each axis has one value (the other
    /// config's); the base, all of them (the other config), each alone, and all but each.
    Explain,
}

impl Search {
    /// The word a `[sweep]` table writes for it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Grid => "grid",
            Self::Random => "random",
            Self::OneAtATime => "one-at-a-time",
            Self::Tpe => "tpe",
            Self::Explain => "explain",
        }
    }
}

/// The values one axis takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// These values, in order.
    List(Vec<toml::Value>),
    /// Numbers from `min` to `max`: drawn uniformly (in log space when `log`) by a random
    /// search, or `steps` points evenly spaced (in log space when `log`) by the others.
    Range {
        /// The smallest value.
        min: f64,
        /// The largest value.
        max: f64,
        /// Spaced by ratio rather than by difference (a learning rate, a weight decay).
        log: bool,
        /// Points of a grid over the range.
        steps: Option<usize>,
        /// Whole numbers (both ends were written as integers): values are rounded.
        integer: bool,
    },
}

/// One key of the config and the values a sweep gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The key, dotted for a nested one (`optimizer.weight_decay`).
    pub key: String,
    /// Its values.
    pub values: Values,
}

impl Axis {
    /// Whether its values are numbers on a ratio scale, for plots with a log axis.
    pub fn is_log(&self) -> bool {
        matches!(self.values, Values::Range { log: true, .. })
    }

    /// The values a grid or a one-at-a-time search sets, or why it has none.
    fn points(&self) -> Result<Vec<toml::Value>, String> {
        match &self.values {
            Values::List(values) => Ok(values.clone()),
            Values::Range {
                min,
                max,
                log,
                steps,
                integer,
            } => {
                let Some(steps) = steps else {
                    return Err(format!(
                        "`{}` is a range, and only a random or tpe search draws from a range; give its grid points with steps = N, or list its values",
                        self.key
                    ));
                };
                let mut points: Vec<toml::Value> = (0..*steps)
                    .map(|i| {
                        let t = i as f64 / (*steps - 1) as f64;
                        number(lerp(*min, *max, t, *log), *integer)
                    })
                    .collect();
                points.dedup();
                Ok(points)
            }
        }
    }

    /// A value drawn at random.
    pub(crate) fn draw(&self, rng: &mut ShuffleRng) -> toml::Value {
        match &self.values {
            Values::List(values) => values[rng.below(values.len())].clone(),
            Values::Range {
                min,
                max,
                log,
                integer,
                ..
            } => number(lerp(*min, *max, rng.unit(), *log), *integer),
        }
    }
}

/// Where a numeric `value` lies in a range axis, from 0 (min) to 1 (max) on the range's scale;
/// `None` for a list axis or a value that is not a number.
pub(crate) fn unit_of(axis: &Axis, value: &toml::Value) -> Option<f64> {
    let Values::Range { min, max, log, .. } = axis.values else {
        return None;
    };
    let x = match value {
        toml::Value::Integer(n) => *n as f64,
        toml::Value::Float(x) => *x,
        _ => return None,
    };
    let t = if log {
        (x.ln() - min.ln()) / (max.ln() - min.ln())
    } else {
        (x - min) / (max - min)
    };
    t.is_finite().then(|| t.clamp(0.0, 1.0))
}

/// `min` + `t` of the way to `max`, along a log scale when `log`.
pub(crate) fn lerp(min: f64, max: f64, t: f64, log: bool) -> f64 {
    if log {
        (min.ln() + t * (max.ln() - min.ln())).exp()
    } else {
        min + t * (max - min)
    }
}

/// `value` as a TOML number: an integer (rounded) or a float with 4 significant digits, so
/// names and tables read `0.00316`, not `0.0031622776601683794`.
pub(crate) fn number(value: f64, integer: bool) -> toml::Value {
    if integer {
        return toml::Value::Integer(value.round() as i64);
    }
    let rounded = format!("{value:.3e}").parse::<f64>().unwrap_or(value);
    toml::Value::Float(rounded)
}

/// What a `[sweep]` table asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// How settings are chosen.
    pub search: Search,
    /// Runs of each setting, with the base seed, the base seed + 1, …
    pub seeds: usize,
    /// Settings a random or model-based search tries.
    pub trials: Option<usize>,
    /// Settings a model-based search draws at random before it proposes any.
    pub startup_trials: usize,
    /// The rule that ends trials clearly behind the others, if any.
    pub prune: Option<PruneRule>,
    /// The keys varied, in the order of their names (TOML tables keep no order).
    pub axes: Vec<Axis>,
}

/// One run of a sweep: a setting of its axes and a seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// Its place in the plan, from 1.
    pub index: usize,
    /// The value of each axis it sets (one-at-a-time: only the one it changes; the base: none).
    pub setting: Vec<(String, toml::Value)>,
    /// Its seed.
    pub seed: u64,
}

impl Trial {
    /// Its setting as `key=value` words (`base` for none), the same for every seed of it.
    pub fn setting_text(&self) -> String {
        setting_text(&self.setting)
    }
}

/// `key=value` words of a setting, strings without their quotes; `base` for no change.
pub fn setting_text(setting: &[(String, toml::Value)]) -> String {
    if setting.is_empty() {
        return "base".to_string();
    }
    let mut text = String::new();
    for (key, value) in setting {
        if !text.is_empty() {
            text.push(' ');
        }
        let _ = write!(text, "{key}={}", value_text(value));
    }
    text
}

/// A sweep ready to run: its base config, what its `[sweep]` table asks, and every trial.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The base's name; trial runs are named after it.
    pub name: String,
    /// The config without its `[sweep]` table, every default written out.
    pub base: toml::Table,
    /// The `[sweep]` table, read.
    pub spec: SweepSpec,
    /// Every trial, in the order they are queued.
    pub trials: Vec<Trial>,
}

impl Sweep {
    /// Reads a config with a `[sweep]` table and plans its trials; every trial's config is
    /// checked here, so a value the engine refuses is named before anything runs.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Self, PlanError> {
        let fail = |problem: String| PlanError {
            source_name: source_name.to_string(),
            problem,
        };
        let mut base: toml::Table = toml::from_str(text).map_err(|e| fail(e.message().into()))?;
        let Some(table) = base.remove(SWEEP_TABLE) else {
            return Err(fail(
                "it has no [sweep] table; add one naming the settings to vary, e.g. lr = [0.001, 0.01, 0.1]".into(),
            ));
        };
        let toml::Value::Table(table) = table else {
            return Err(fail(
                "`sweep` must be a table ([sweep]) of the settings to vary".into(),
            ));
        };
        let spec = read_spec(table).map_err(&fail)?;
        let draft = draft_of(&base, source_name)?;
        // Every key with its value, defaults included: what one-at-a-time changes from, and
        // where a nested key (`optimizer.weight_decay`) finds the rest of its table.
        let base: toml::Table =
            toml::from_str(&draft.to_toml()).map_err(|e| fail(e.to_string()))?;
        let trials = plan(&spec, &base, draft.seed).map_err(&fail)?;
        let sweep = Self {
            name: draft.name.clone(),
            base,
            spec,
            trials,
        };
        for trial in &sweep.trials {
            sweep
                .draft(trial)
                .and_then(|draft| {
                    draft.validate().map(|_| ()).map_err(|e| PlanError {
                        source_name: source_name.to_string(),
                        problem: e.to_string(),
                    })
                })
                .map_err(|e| {
                    fail(format!(
                        "trial {} ({}): {}",
                        trial.index,
                        trial.setting_text(),
                        e.problem
                    ))
                })?;
        }
        Ok(sweep)
    }

    /// The config of `trial`: the base with its values set, its seed, and its own name.
    pub fn draft(&self, trial: &Trial) -> Result<ExperimentDraft, PlanError> {
        let mut table = self.base.clone();
        for (key, value) in &trial.setting {
            set(&mut table, key, value.clone());
        }
        let mut draft = draft_of(&table, &format!("trial {}", trial.index))?;
        draft.seed = trial.seed;
        draft.name = self.trial_name(trial);
        Ok(draft)
    }

    /// The run name of `trial`: the base's name and its place, `fashion-mlp-t007`.
    pub fn trial_name(&self, trial: &Trial) -> String {
        format!("{}-t{:03}", self.name, trial.index)
    }

    /// One line on what the plan is: its search, its axes, how many trials, and its pruning.
    pub fn describe(&self) -> String {
        match self.spec.prune {
            Some(rule) => format!("{}; {}", self.describe_plan(), rule.describe()),
            None => self.describe_plan(),
        }
    }

    /// Its search, its axes and how many trials.
    fn describe_plan(&self) -> String {
        let axes: Vec<String> = self
            .spec
            .axes
            .iter()
            .map(|axis| match &axis.values {
                Values::List(values) => format!("{} ({})", axis.key, values.len()),
                Values::Range { min, max, log, .. } => format!(
                    "{} ({}{} to {})",
                    axis.key,
                    if *log { "log " } else { "" },
                    min,
                    max
                ),
            })
            .collect();
        if self.spec.search == Search::Tpe {
            return format!(
                "{} trial(s): tpe search over {} ({} setting(s), the first {} drawn at random, the rest proposed from the results before them), {} seed(s) each",
                self.spec.trials.unwrap_or(0) * self.spec.seeds,
                axes.join(" × "),
                self.spec.trials.unwrap_or(0),
                self.spec.startup_trials,
                self.spec.seeds
            );
        }
        format!(
            "{} trial(s): {} search over {}, {} seed(s) each",
            self.trials.len(),
            self.spec.search.word(),
            axes.join(" × "),
            self.spec.seeds
        )
    }

    /// Settings a model-based search has yet to propose: its `trials` less those planned.
    pub fn proposals_left(&self) -> usize {
        match self.spec.search {
            Search::Tpe => self
                .spec
                .trials
                .unwrap_or(0)
                .saturating_sub(self.trials.len() / self.spec.seeds.max(1)),
            _ => 0,
        }
    }

    /// Every setting planned so far, once each (a setting's seeds follow one another).
    pub fn settings(&self) -> Vec<Vec<(String, toml::Value)>> {
        self.trials
            .chunks(self.spec.seeds.max(1))
            .map(|seeds| seeds[0].setting.clone())
            .collect()
    }

    /// Plans a proposed `setting` after the trials planned, one trial per seed; its trials.
    pub fn add_setting(&mut self, setting: Vec<(String, toml::Value)>) -> Vec<Trial> {
        let base_seed = self.trials.first().map_or(0, |t| t.seed);
        let added: Vec<Trial> = (0..self.spec.seeds)
            .map(|k| Trial {
                index: self.trials.len() + k + 1,
                setting: setting.clone(),
                seed: base_seed.wrapping_add(k as u64),
            })
            .collect();
        self.trials.extend(added.iter().cloned());
        added
    }
}

/// The draft `table` reads as, or the sentence the config reader gives.
fn draft_of(table: &toml::Table, source_name: &str) -> Result<ExperimentDraft, PlanError> {
    let text = toml::to_string(table).map_err(|e| PlanError {
        source_name: source_name.to_string(),
        problem: e.to_string(),
    })?;
    ExperimentDraft::from_toml(&text, source_name).map_err(|e| PlanError {
        source_name: source_name.to_string(),
        problem: e.to_string(),
    })
}

/// Sets the dotted `key` of `table` to `value`, making the tables on the way.
fn set(table: &mut toml::Table, key: &str, value: toml::Value) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut here = table;
    for part in parts {
        let entry = here
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(inner) = entry else {
            return;
        };
        here = inner;
    }
    here.insert(last.to_string(), value);
}

/// The value of the dotted `key` in `table`, if it has one.
pub(crate) fn get<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// The keys of a `[sweep]` table that say how to search rather than what to vary.
const OPTIONS: &[&str] = &["search", "seeds", "trials", "startup_trials", "prune"];
/// Settings a model-based search draws at random first, unless told (Optuna's default).
pub const DEFAULT_STARTUP_TRIALS: usize = 10;

fn read_spec(mut table: toml::Table) -> Result<SweepSpec, String> {
    let whole = |key: &str, value: &toml::Value, max: usize| -> Result<usize, String> {
        value
            .as_integer()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| format!("`{key}` must be a whole number from 1 to {max}"))
    };
    let search = match table.remove("search") {
        None => Search::Grid,
        Some(value) => match value.as_str() {
            Some("grid") => Search::Grid,
            Some("random") => Search::Random,
            Some("one-at-a-time") => Search::OneAtATime,
            Some("tpe") => Search::Tpe,
            Some("explain") => Search::Explain,
            _ => {
                return Err(format!(
                    "search = {value} is not one Kiln knows; use \"grid\", \"random\", \"one-at-a-time\" or \"tpe\" (or \"explain\", as kiln explain writes)"
                ));
            }
        },
    };
    let seeds = match table.remove("seeds") {
        None => 1,
        Some(value) => whole("seeds", &value, MAX_SEEDS)?,
    };
    let trials = match table.remove("trials") {
        None => None,
        Some(value) => Some(whole("trials", &value, MAX_TRIALS)?),
    };
    if matches!(search, Search::Random | Search::Tpe) && trials.is_none() {
        return Err(format!(
            "a {} search needs trials = N, the number of settings to try",
            search.word()
        ));
    }
    let startup_trials = match table.remove("startup_trials") {
        None => DEFAULT_STARTUP_TRIALS.min(trials.unwrap_or(1)),
        Some(_) if search != Search::Tpe => {
            return Err(
                "startup_trials belongs to search = \"tpe\" (the settings drawn at random before it proposes any)".to_string(),
            );
        }
        Some(value) => whole("startup_trials", &value, trials.unwrap_or(1))?,
    };
    let prune = match table.remove("prune") {
        None => None,
        Some(value) => Some(PruneRule::from_toml(&value)?),
    };
    let mut axes = Vec::new();
    read_axes(&table, "", &mut axes)?;
    if axes.is_empty() {
        return Err(format!(
            "its [sweep] table varies nothing; add a setting with its values, e.g. lr = [0.001, 0.01] (besides {})",
            OPTIONS.join(", ")
        ));
    }
    Ok(SweepSpec {
        search,
        seeds,
        trials,
        startup_trials,
        prune,
        axes,
    })
}

/// The axes of `table`, a nested table's keys dotted after `prefix`.
fn read_axes(table: &toml::Table, prefix: &str, axes: &mut Vec<Axis>) -> Result<(), String> {
    for (key, value) in table {
        let key = format!("{prefix}{key}");
        match value {
            toml::Value::Array(values) if values.is_empty() => {
                return Err(format!("`{key}` has no values; list at least one"));
            }
            toml::Value::Array(values) => axes.push(Axis {
                key,
                values: Values::List(values.clone()),
            }),
            toml::Value::Table(range) if range.contains_key("min") || range.contains_key("max") => {
                axes.push(Axis {
                    values: read_range(&key, range)?,
                    key,
                });
            }
            toml::Value::Table(inner) => read_axes(inner, &format!("{key}."), axes)?,
            other => {
                return Err(format!(
                    "`{key} = {other}` is one value; a sweep gives a list ([a, b]) or a range ({{ min = …, max = … }}), and a fixed value belongs in the config above [sweep]"
                ));
            }
        }
    }
    Ok(())
}

fn read_range(key: &str, range: &toml::Table) -> Result<Values, String> {
    let end = |name: &str| -> Result<(f64, bool), String> {
        match range.get(name) {
            Some(toml::Value::Integer(n)) => Ok((*n as f64, true)),
            Some(toml::Value::Float(x)) if x.is_finite() => Ok((*x, false)),
            _ => Err(format!(
                "the range `{key}` needs a number for `{name}`, e.g. {{ min = 0.0001, max = 0.1, log = true }}"
            )),
        }
    };
    let ((min, whole_min), (max, whole_max)) = (end("min")?, end("max")?);
    if min >= max {
        return Err(format!(
            "the range `{key}` goes from {min} to {max}; min must be below max"
        ));
    }
    let log = match range.get("log") {
        None => false,
        Some(toml::Value::Boolean(log)) => *log,
        Some(_) => return Err(format!("`log` of the range `{key}` is true or false")),
    };
    if log && min <= 0.0 {
        return Err(format!(
            "the range `{key}` is on a log scale, so it must stay above 0 (min is {min})"
        ));
    }
    let steps = match range.get("steps") {
        None => None,
        Some(value) => Some(
            value
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (2..=MAX_TRIALS).contains(n))
                .ok_or_else(|| {
                    format!("`steps` of the range `{key}` is a whole number of at least 2")
                })?,
        ),
    };
    for other in range.keys() {
        if !["min", "max", "log", "steps"].contains(&other.as_str()) {
            return Err(format!(
                "the range `{key}` has `{other}`, which a range does not take (min, max, log, steps)"
            ));
        }
    }
    Ok(Values::Range {
        min,
        max,
        log,
        steps,
        integer: whole_min && whole_max,
    })
}

/// Every trial of `spec` over `base`, seeds innermost.
fn plan(spec: &SweepSpec, base: &toml::Table, base_seed: u64) -> Result<Vec<Trial>, String> {
    let settings: Vec<Vec<(String, toml::Value)>> = match spec.search {
        Search::Grid => {
            let mut settings: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
            for axis in &spec.axes {
                let points = axis.points()?;
                if settings.len().saturating_mul(points.len()) > MAX_TRIALS {
                    return Err(format!(
                        "the grid has more than {MAX_TRIALS} settings; use fewer values or a random search"
                    ));
                }
                settings = settings
                    .into_iter()
                    .flat_map(|setting| {
                        points.iter().map(move |point| {
                            let mut next = setting.clone();
                            next.push((axis.key.clone(), point.clone()));
                            next
                        })
                    })
                    .collect();
            }
            settings
        }
        Search::OneAtATime => {
            let mut settings = vec![Vec::new()];
            for axis in &spec.axes {
                let current = get(base, &axis.key);
                for point in axis.points()? {
                    if !same_value(current, &point) {
                        settings.push(vec![(axis.key.clone(), point)]);
                    }
                }
            }
            settings
        }
        Search::Explain => {
            let changes: Vec<(String, toml::Value)> = spec
                .axes
                .iter()
                .map(|axis| match &axis.values {
                    Values::List(values) if values.len() == 1 => {
                        Ok((axis.key.clone(), values[0].clone()))
                    }
                    _ => Err(format!(
                        "`{}` needs exactly one value in an explain sweep: the other config's",
                        axis.key
                    )),
                })
                .collect::<Result<_, _>>()?;
            let mut settings = vec![Vec::new(), changes.clone()];
            for i in 0..changes.len() {
                let alone = vec![changes[i].clone()];
                let mut all_but = changes.clone();
                all_but.remove(i);
                for setting in [alone, all_but] {
                    if !settings.contains(&setting) {
                        settings.push(setting);
                    }
                }
            }
            settings
        }
        Search::Random | Search::Tpe => {
            // Seeded by the config: a resumed sweep plans the same draws on any machine.
            let mut rng = ShuffleRng(base_seed ^ 0x5EED_5EED);
            let drawn = match spec.search {
                Search::Tpe => spec.startup_trials,
                _ => spec.trials.unwrap_or(1),
            };
            (0..drawn)
                .map(|_| {
                    spec.axes
                        .iter()
                        .map(|axis| (axis.key.clone(), axis.draw(&mut rng)))
                        .collect()
                })
                .collect()
        }
    };
    let count = settings.len().saturating_mul(spec.seeds);
    if count > MAX_TRIALS {
        return Err(format!(
            "it plans {count} trials, more than {MAX_TRIALS}; use fewer values or seeds"
        ));
    }
    let mut trials = Vec::with_capacity(count);
    for setting in settings {
        for k in 0..spec.seeds {
            trials.push(Trial {
                index: trials.len() + 1,
                setting: setting.clone(),
                seed: base_seed.wrapping_add(k as u64),
            });
        }
    }
    Ok(trials)
}

/// Whether the base's value (if any) is `point`, numbers compared by value.
pub(crate) fn same_value(current: Option<&toml::Value>, point: &toml::Value) -> bool {
    let as_number = |v: &toml::Value| match v {
        toml::Value::Integer(n) => Some(*n as f64),
        toml::Value::Float(x) => Some(*x),
        _ => None,
    };
    match (current, point) {
        (None, _) => false,
        (Some(current), point) => match (as_number(current), as_number(point)) {
            (Some(a), Some(b)) => a == b,
            _ => current == point,
        },
    }
}
