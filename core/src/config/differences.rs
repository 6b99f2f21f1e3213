//! The settings in which two configs differ, every default written out: what `kiln explain`
//! splits a gap into, what the window offers to test where two curves part, and what legends
//! would name. A table whose `kind` differs (another model or optimizer) is one difference.

use super::{ExperimentDraft, Setting};

/// Keys that name a run or say where it trains, not what it learns: never a cause.
const NOT_CAUSES: &[&str] = &[
    "name",
    "data_dir",
    "device",
    "devices",
    "readback_interval_ms",
    "profile_steps",
    "seed",
];

/// One setting in which two configs differ, defaults included.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The key, dotted for a nested one; a whole table (`model`) where the kinds differ.
    pub key: String,
    /// A's value.
    pub a: toml::Value,
    /// B's value.
    pub b: toml::Value,
}

impl Difference {
    /// `key (a → b)`, as the report names it.
    pub fn describe(&self) -> String {
        format!(
            "{} ({} → {})",
            self.key,
            value_text(&self.a),
            value_text(&self.b)
        )
    }
}

/// The settings in which two configs differ, sorted by what the path can do with them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Differences {
    /// Each difference the path applies alone to A and undoes alone from B.
    pub causes: Vec<Difference>,
    /// Differences in a setting neither model nor data set uses (batch norm's momentum between
    /// two MLPs): they cannot change a figure, so they are named and not trained.
    pub unused: Vec<Difference>,
    /// The keys only A sets (an optional setting B leaves out), which the path cannot undo.
    pub a_only: Vec<String>,
}

/// Every setting in which `b` differs from `a`, every default written out; a table whose `kind`
/// differs (another model, optimizer, schedule, data set) is one difference.
pub fn differences(a: &ExperimentDraft, b: &ExperimentDraft) -> Differences {
    let table = |draft: &ExperimentDraft| -> toml::Table {
        toml::from_str(&draft.to_toml()).unwrap_or_default()
    };
    let mut found = Vec::new();
    let mut a_only = Vec::new();
    walk("", &table(a), &table(b), &mut found, &mut a_only);
    let (unused, causes) = found
        .into_iter()
        .partition(|difference| used_by_neither(&difference.key, a, b));
    Differences {
        causes,
        unused,
        a_only,
    }
}

/// Whether `key` is a setting of its own row that matters to neither draft.
fn used_by_neither(key: &str, a: &ExperimentDraft, b: &ExperimentDraft) -> bool {
    Setting::ALL
        .iter()
        .filter(|setting| setting.key() == key)
        .find_map(|setting| setting.row())
        .is_some_and(|row| !row.applies(a) && !row.applies(b))
}

fn walk(
    prefix: &str,
    a: &toml::Table,
    b: &toml::Table,
    found: &mut Vec<Difference>,
    a_only: &mut Vec<String>,
) {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if prefix.is_empty() && NOT_CAUSES.contains(&key.as_str()) {
            continue;
        }
        let full = format!("{prefix}{key}");
        match (a.get(key), b.get(key)) {
            (Some(toml::Value::Table(x)), Some(toml::Value::Table(y)))
                if x.get("kind") == y.get("kind") =>
            {
                walk(&format!("{full}."), x, y, found, a_only);
            }
            (Some(x), Some(y)) if x != y => found.push(Difference {
                key: full,
                a: x.clone(),
                b: y.clone(),
            }),
            (Some(_), None) => a_only.push(full),
            (None, Some(y)) => {
                // A leaves it at its default (absent): the path sets B's value on A.
                found.push(Difference {
                    key: full,
                    a: toml::Value::String("(not set)".into()),
                    b: y.clone(),
                });
            }
            _ => {}
        }
    }
}

/// A value as a person writes it: a string without quotes, a table or list inline.
pub fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        // 1e-8, not 0.00000001: an epsilon reads as people write it.
        toml::Value::Float(x) if *x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) => {
            format!("{x:e}")
        }
        other => other.to_string(),
    }
}
