//! Settings that are one number of the draft: how a number is typed and shown, the range the
//! engine accepts, and the row that ties both to the draft's field.

use crate::config::ExperimentDraft;

use super::{Section, Setting};

/// A number as a person types it in a field or after a flag, and as it is shown back.
pub trait TypedNumber: Sized {
    /// Reads `text` (trimmed); the error is a sentence for the field or the flag.
    fn read(text: &str) -> Result<Self, String>;
    /// The number as a person would type it.
    fn show(&self) -> String;
    /// The number on the real line, where its range is checked.
    fn as_f64(&self) -> f64;
}

impl TypedNumber for f64 {
    fn read(text: &str) -> Result<Self, String> {
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(_) => Err("must be a finite number".to_owned()),
            Err(_) => Err(format!("'{}' is not a number", text.trim())),
        }
    }

    fn show(&self) -> String {
        show_number(*self)
    }

    fn as_f64(&self) -> f64 {
        *self
    }
}

/// Whole numbers of any size their type holds: the range is the row's to check.
macro_rules! whole_number {
    ($($ty:ty),*) => {$(
        impl TypedNumber for $ty {
            fn read(text: &str) -> Result<Self, String> {
                text.trim()
                    .parse()
                    .map_err(|_| format!("'{}' is not a whole number", text.trim()))
            }

            fn show(&self) -> String {
                self.to_string()
            }

            // Ranges of whole numbers stay far below 2^53, where f64 is exact; a seed's is
            // every value, so its rounding is never looked at.
            fn as_f64(&self) -> f64 {
                *self as f64
            }
        }
    )*};
}

whole_number!(usize, u64, u32);

/// Shows a value the way people type it: `0.001`, but `1e-8` rather than `0.00000001`.
pub fn show_number(value: f64) -> String {
    if value != 0.0 && value.abs() < 1e-4 {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A limit as people read it: an f32 constant of the kernels (0.08 as f32 is
/// 0.07999999821186066 as f64) shown with the digits it was written with.
fn show_limit(value: f64) -> String {
    show_number((value * 1e6).round() / 1e6)
}

/// The values a number setting accepts, and what to say when one is outside them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// The smallest value accepted (or, when `above`, the bound it must exceed).
    pub min: f64,
    /// Whether `min` itself is refused.
    pub above: bool,
    /// The largest value accepted.
    pub max: f64,
    /// Advice after the range in a refusal ("try 0.001 to 0.1"); empty for none.
    pub advice: &'static str,
}

impl Range {
    /// Every value the type holds (a seed).
    pub const ANY: Range = Range {
        min: f64::NEG_INFINITY,
        above: false,
        max: f64::INFINITY,
        advice: "",
    };

    /// From `min` (included) up.
    pub const fn at_least(min: f64) -> Self {
        Range {
            min,
            above: false,
            ..Self::ANY
        }
    }

    /// Above `min` (excluded).
    pub const fn above(min: f64) -> Self {
        Range {
            min,
            above: true,
            ..Self::ANY
        }
    }

    /// Up to `max` (included).
    pub const fn to(self, max: f64) -> Self {
        Range { max, ..self }
    }

    /// With advice after the range in a refusal.
    pub const fn advice(self, advice: &'static str) -> Self {
        Range { advice, ..self }
    }

    /// Whether `value` is in the range (never NaN).
    pub fn contains(&self, value: f64) -> bool {
        let low = if self.above {
            value > self.min
        } else {
            value >= self.min
        };
        low && value <= self.max
    }

    /// The range in words: "between 1 and 100000", "above 0 and at most 10", "at least 0".
    pub fn describe(&self) -> String {
        let low = match (self.min.is_finite(), self.above) {
            (false, _) => None,
            (true, false) => Some(show_limit(self.min)),
            (true, true) => Some(format!("above {}", show_limit(self.min))),
        };
        let high = self.max.is_finite().then(|| show_limit(self.max));
        match (low, high) {
            (Some(low), Some(high)) if !self.above => format!("between {low} and {high}"),
            (Some(low), Some(high)) => format!("{low} and at most {high}"),
            (Some(low), None) if !self.above => format!("at least {low}"),
            (Some(low), None) => low,
            (None, Some(high)) => format!("at most {high}"),
            (None, None) => "any value".to_owned(),
        }
    }

    /// Checks `value`; the refusal is a sentence: "must be between 1 and 100000".
    pub fn check(&self, value: f64) -> Result<(), String> {
        if self.contains(value) {
            return Ok(());
        }
        let mut reason = format!("must be {}", self.describe());
        if !self.advice.is_empty() {
            reason.push_str("; ");
            reason.push_str(self.advice);
        }
        Err(reason)
    }
}

/// A setting that is one number of [`ExperimentDraft`]: everything the window, the command
/// line, validation, the legends and the docs need to handle it without a line of their own.
#[derive(Debug, Clone, Copy)]
pub struct NumberSetting {
    /// Which setting: its key, label and help. Filled in by the settings table.
    pub setting: Setting,
    /// What the flag's help shows for its value (`--lr <RATE>`).
    pub value_name: &'static str,
    /// The values `validate` accepts.
    pub range: Range,
    /// Where the window shows it.
    pub section: Section,
    /// The word a legend and `kiln compare` name it by when runs differ in it (`lr 0.01`); none
    /// leaves it out of both (a setting that changes how a run is watched, not what it learns).
    pub legend: Option<&'static str>,
    /// Written after the value in a legend (`rotation 15°`).
    pub legend_unit: &'static str,
    /// Part of the training augmentation, whose flags `kiln data inspect` shares.
    pub augmentation: bool,
    /// When it matters: the window hides its field otherwise (a test split only for a folder).
    pub applies: fn(&ExperimentDraft) -> bool,
    show: fn(&ExperimentDraft) -> String,
    read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
    value: fn(&ExperimentDraft) -> f64,
}

/// A row's `applies` when the setting always matters.
pub(super) fn always(_: &ExperimentDraft) -> bool {
    true
}

impl NumberSetting {
    /// This row, of `setting` (the settings table's last step).
    pub(super) const fn row(self, setting: Setting) -> super::Row {
        super::Row::Number(NumberSetting { setting, ..self })
    }

    /// The row of the draft's field read and shown by these functions; the settings table
    /// makes them with `number!(field: type)` and sets the rest with the builders below.
    pub const fn new(
        show: fn(&ExperimentDraft) -> String,
        read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
        value: fn(&ExperimentDraft) -> f64,
    ) -> Self {
        NumberSetting {
            setting: Setting::Name,
            value_name: "N",
            range: Range::ANY,
            section: Section::Run,
            legend: None,
            legend_unit: "",
            augmentation: false,
            applies: always,
            show,
            read,
            value,
        }
    }

    /// With the value's name in the flag's help.
    pub const fn value_name(self, value_name: &'static str) -> Self {
        NumberSetting { value_name, ..self }
    }

    /// With the range `validate` accepts.
    pub const fn range(self, range: Range) -> Self {
        NumberSetting { range, ..self }
    }

    /// Shown in the window's `section`.
    pub const fn section(self, section: Section) -> Self {
        NumberSetting { section, ..self }
    }

    /// Named by `word` in legends and compare tables.
    pub const fn legend(self, word: &'static str) -> Self {
        NumberSetting {
            legend: Some(word),
            ..self
        }
    }

    /// With `unit` after its value in a legend.
    pub const fn unit(self, legend_unit: &'static str) -> Self {
        NumberSetting {
            legend_unit,
            ..self
        }
    }

    /// Part of the training augmentation.
    pub const fn augmentation(self) -> Self {
        NumberSetting {
            augmentation: true,
            ..self
        }
    }

    /// Shown in the window only when `applies` says it matters.
    pub const fn applies(self, applies: fn(&ExperimentDraft) -> bool) -> Self {
        NumberSetting { applies, ..self }
    }

    /// Its value in `draft`, as a person would type it.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        (self.show)(draft)
    }

    /// Sets it in `draft` from typed text; on an error `draft` keeps its value. Only reads:
    /// the range is `validate`'s to check, so a field shows the engine's own sentence.
    pub fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String> {
        (self.read)(draft, text)
    }

    /// Whether its value in `draft` is in its range; the refusal names the setting.
    pub fn check(&self, draft: &ExperimentDraft) -> Result<(), crate::config::ConfigError> {
        self.range
            .check((self.value)(draft))
            .map_err(|reason| crate::config::invalid(self.setting, self.show(draft), reason))
    }

    /// How a legend names its value in `draft`, when it names it at all.
    pub fn legend_entry(&self, draft: &ExperimentDraft) -> Option<(&'static str, String)> {
        self.legend
            .map(|word| (word, format!("{}{}", self.show(draft), self.legend_unit)))
    }
}

/// The row of a number field of the draft: `number!(lr: f64)`, then the builders.
macro_rules! number {
    ($field:ident : $ty:ty) => {
        $crate::settings::NumberSetting::new(
            |draft| $crate::settings::TypedNumber::show(&draft.$field),
            |draft, text| {
                draft.$field = <$ty as $crate::settings::TypedNumber>::read(text)?;
                Ok(())
            },
            |draft| $crate::settings::TypedNumber::as_f64(&draft.$field),
        )
    };
}

pub(crate) use number;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_values_read_as_typed() {
        assert_eq!(show_number(1e-8), "1e-8");
        assert_eq!(show_number(0.001), "0.001");
        assert_eq!(show_number(0.0), "0");
    }

    #[test]
    fn a_range_says_its_bounds_as_a_person_would_and_refuses_nan() {
        let batch = Range::at_least(1.0).to(1024.0);
        assert!(batch.contains(1.0) && batch.contains(1024.0) && !batch.contains(0.0));
        assert_eq!(batch.check(0.0).unwrap_err(), "must be between 1 and 1024");
        let lr = Range::above(0.0).to(10.0).advice("try 0.001 to 0.1");
        assert!(!lr.contains(0.0) && !lr.contains(f64::NAN));
        assert_eq!(
            lr.check(20.0).unwrap_err(),
            "must be above 0 and at most 10; try 0.001 to 0.1"
        );
        assert_eq!(Range::at_least(0.0).describe(), "at least 0");
        // An f32 limit of the kernels reads as it was written.
        assert_eq!(
            Range::at_least(f64::from(0.08_f32)).to(1.0).describe(),
            "between 0.08 and 1"
        );
        assert!(Range::ANY.contains(f64::MAX));
    }
}
