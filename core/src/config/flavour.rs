//! A framework's defaults laid over any draft: what the `-pytorch` and `-keras` presets write
//! out, applied to a person's own settings to test whether the defaults explain a gap.

use std::sync::OnceLock;

use super::{ExperimentDraft, FRAMEWORK_DEFAULTS, OptimizerSpec, preset};

/// A framework whose defaults Kiln can train under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// PyTorch's (and Lightning's, which trains with PyTorch's layers).
    PyTorch,
    /// Keras 3's.
    Keras,
}

impl Flavour {
    /// Both, PyTorch first.
    pub const ALL: [Flavour; 2] = [Flavour::PyTorch, Flavour::Keras];

    /// The framework's name as a person writes it.
    pub fn name(self) -> &'static str {
        match self {
            Flavour::PyTorch => "PyTorch",
            Flavour::Keras => "Keras",
        }
    }

    /// The word `--flavour` takes.
    pub fn word(self) -> &'static str {
        match self {
            Flavour::PyTorch => "pytorch",
            Flavour::Keras => "keras",
        }
    }

    /// The flavour of `word` (`pytorch`, `keras`, any case).
    pub fn from_word(word: &str) -> Result<Flavour, String> {
        Flavour::ALL
            .into_iter()
            .find(|f| f.word().eq_ignore_ascii_case(word))
            .ok_or_else(|| format!("'{word}' is no framework flavour; use pytorch or keras"))
    }

    /// The flavour that stands for a framework an imported log names (`Keras`, `Lightning`,
    /// `PyTorch`); none for a log that does not say which framework wrote it.
    pub fn of_framework(framework: &str) -> Option<Flavour> {
        match framework.to_ascii_lowercase().as_str() {
            "keras" | "tensorflow" => Some(Flavour::Keras),
            "pytorch" | "lightning" => Some(Flavour::PyTorch),
            _ => None,
        }
    }

    /// The shipped flavour preset the defaults are written in, with their sources (one copy of
    /// each value), parsed once: the compare view lays flavours over runs every frame.
    fn defaults_source(self) -> Option<&'static ExperimentDraft> {
        static SOURCES: [OnceLock<Option<ExperimentDraft>>; 2] = [OnceLock::new(), OnceLock::new()];
        SOURCES[self as usize]
            .get_or_init(|| preset(&format!("fashion-mlp-{}", self.word())).ok())
            .as_ref()
    }

    /// `draft` with this framework's value of every setting in [`FRAMEWORK_DEFAULTS`] and its
    /// Adam ε, named for the flavour (`mine-keras`, or `-pytorch` swapped for `-keras`);
    /// everything else (model, data, optimizer, learning rate…) stays as it was.
    pub fn apply(self, draft: &ExperimentDraft) -> ExperimentDraft {
        // Both presets parse and every value a row shows reads back into it: the unit tests
        // below read each flavour onto each preset, so neither branch is left silently here.
        let Some(source) = self.defaults_source() else {
            return draft.clone();
        };
        let mut out = draft.clone();
        let stem = Flavour::ALL
            .iter()
            .find_map(|f| draft.name.strip_suffix(&format!("-{}", f.word())))
            .unwrap_or(&draft.name);
        out.name = format!("{stem}-{}", self.word());
        for row in FRAMEWORK_DEFAULTS.iter().filter_map(|s| s.row()) {
            let _ = row.read_into(&mut out, &row.show(source));
        }
        let epsilon = match self {
            Flavour::PyTorch => 1e-8,
            Flavour::Keras => 1e-7,
        };
        if let OptimizerSpec::Adam { epsilon: e, .. } | OptimizerSpec::AdamW { epsilon: e, .. } =
            &mut out.optimizer
        {
            *e = epsilon;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Setting;

    #[test]
    fn the_keras_flavour_of_the_pytorch_preset_differs_from_the_keras_preset_in_no_default() {
        for workload in ["fashion-mlp", "cifar-vgg16", "mnist-tiny-fullbatch"] {
            let pytorch = preset(&format!("{workload}-pytorch")).unwrap();
            let keras = preset(&format!("{workload}-keras")).unwrap();
            for (flavour, from, to) in [
                (Flavour::Keras, &pytorch, &keras),
                (Flavour::PyTorch, &keras, &pytorch),
            ] {
                let made = flavour.apply(from);
                assert_eq!(
                    made.to_toml(),
                    to.to_toml(),
                    "{workload}, {}",
                    flavour.name()
                );
            }
        }
    }

    #[test]
    fn a_flavour_leaves_what_is_no_framework_default_alone() {
        let mut draft = ExperimentDraft {
            lr: 0.03,
            batch_size: 32,
            ..ExperimentDraft::default()
        };
        draft.optimizer = OptimizerSpec::from_name("sgd").unwrap();
        let keras = Flavour::Keras.apply(&draft);
        assert_eq!((keras.lr, keras.batch_size), (0.03, 32));
        assert_eq!(keras.optimizer.name(), "sgd");
        let changed: Vec<Setting> = FRAMEWORK_DEFAULTS
            .iter()
            .copied()
            .filter(|s| {
                let row = s.row().unwrap();
                row.show(&keras) != row.show(&draft)
            })
            .collect();
        assert!(changed.contains(&Setting::Init) && changed.contains(&Setting::InputScaling));
    }

    #[test]
    fn a_log_names_its_framework_and_the_flavour_follows() {
        assert_eq!(Flavour::of_framework("Keras"), Some(Flavour::Keras));
        assert_eq!(Flavour::of_framework("Lightning"), Some(Flavour::PyTorch));
        assert_eq!(Flavour::of_framework("TensorBoard"), None);
        assert_eq!(Flavour::from_word("KERAS"), Ok(Flavour::Keras));
        assert!(
            Flavour::from_word("jax")
                .unwrap_err()
                .contains("pytorch or keras")
        );
    }
}
