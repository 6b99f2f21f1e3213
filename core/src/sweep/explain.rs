//! `kiln explain A B`: the differences between two configs, defaults included, run as a sweep
//! along the one-at-a-time path (each difference applied alone to A, and each undone alone from
//! B, over seeds), and read back as each difference's effect with its interval, what is within
//! seed noise, and how much of the gap the single effects leave to their interaction.

use std::fmt::Write as _;

use plotters::prelude::*;

use crate::config::{Difference, ExperimentDraft};
use crate::export::{ExportError, encode_png, register_font};

use super::plan::{SWEEP_TABLE, Search, Sweep, get};
use super::report::{NOISE_P, SweepReport};
use super::stats::{mean_std, student_t_two_sided, welch_p};

/// The name of the explain sweep from A to B: `explain-<a>-vs-<b>`, with any character a folder
/// name should not hold made `_`.
pub fn explain_name(a: &ExperimentDraft, b: &ExperimentDraft) -> String {
    format!("explain-{}-vs-{}", a.name, b.name)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The sweep config of `kiln explain A B`: A's config with a `[sweep]` table that sets each of
/// B's values (search "explain", `seeds` per setting), named `name`.
pub fn explain_config(
    a: &ExperimentDraft,
    differences: &[Difference],
    seeds: usize,
    name: &str,
) -> String {
    let mut base = a.clone();
    base.name = name.to_string();
    let mut sweep = toml::Table::new();
    sweep.insert("search".into(), Search::Explain.word().into());
    sweep.insert("seeds".into(), toml::Value::Integer(seeds as i64));
    for difference in differences {
        sweep.insert(
            difference.key.clone(),
            toml::Value::Array(vec![difference.b.clone()]),
        );
    }
    let mut doc = toml::Table::new();
    doc.insert(SWEEP_TABLE.into(), toml::Value::Table(sweep));
    format!(
        "# kiln explain: A's config; [sweep] holds B's value of each setting in which B differs.\n{}\n{}",
        base.to_toml(),
        toml::to_string(&doc).unwrap_or_default()
    )
}

/// A change in a figure from one setting to another, over their seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Mean of the second minus mean of the first.
    pub mean: f64,
    /// Half the 95 % interval of that difference (Welch's); none with a single seed.
    pub half_width: Option<f64>,
    /// Welch's two-sided p-value; none with a single seed.
    pub p: Option<f64>,
}

impl Change {
    /// Between the samples `from` and `to`; none when either is empty.
    pub fn between(from: &[f64], to: &[f64]) -> Option<Self> {
        let (mean_from, std_from) = mean_std(from)?;
        let (mean_to, std_to) = mean_std(to)?;
        let p = welch_p(from, to);
        let half_width = (from.len() >= 2 && to.len() >= 2).then(|| {
            let (va, vb) = (
                std_from * std_from / from.len() as f64,
                std_to * std_to / to.len() as f64,
            );
            let se2 = va + vb;
            if se2 == 0.0 {
                return 0.0;
            }
            let df = se2 * se2
                / (va * va / (from.len() as f64 - 1.0) + vb * vb / (to.len() as f64 - 1.0));
            t_quantile_975(df) * se2.sqrt()
        });
        Some(Self {
            mean: mean_to - mean_from,
            half_width,
            p,
        })
    }

    /// Whether it is within seed noise by Welch's test (false where untested).
    pub fn within_noise(&self) -> bool {
        self.p.is_some_and(|p| p >= NOISE_P)
    }

    /// `+9.20 ± 0.40 points` of an accuracy (a fraction), `within seed noise` when it is.
    pub fn points(&self) -> String {
        let mut text = format!("{:+.2}", 100.0 * self.mean);
        if let Some(half) = self.half_width {
            let _ = write!(text, " ± {:.2}", 100.0 * half);
        }
        text.push_str(" points");
        match self.p {
            Some(_) if self.within_noise() => text.push_str(", within seed noise"),
            Some(_) => {}
            None => text.push_str(" (one seed: no interval)"),
        }
        text
    }
}

/// t such that P(|T| ≥ t) = 0.05 for `df` degrees of freedom, by bisection.
fn t_quantile_975(df: f64) -> f64 {
    let (mut low, mut high) = (0.0f64, 1000.0f64);
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if student_t_two_sided(mid, df) > 0.05 {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

/// One difference's effects.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// The setting and its two values.
    pub difference: Difference,
    /// On the validation figure, applied alone to A.
    pub alone: Option<Change>,
    /// On the validation figure, undone alone from B (B minus B without it).
    pub undone: Option<Change>,
    /// On test accuracy, applied alone to A.
    pub test_alone: Option<Change>,
    /// On training seconds per epoch, applied alone to A.
    pub secs_alone: Option<Change>,
}

/// An explain sweep read as effects.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainReport {
    /// A's mean validation figure.
    pub a_mean: Option<f64>,
    /// B's mean validation figure.
    pub b_mean: Option<f64>,
    /// B against A on the validation figure.
    pub gap: Option<Change>,
    /// B against A on test accuracy.
    pub test_gap: Option<Change>,
    /// B against A on seconds per epoch.
    pub secs_gap: Option<Change>,
    /// Each difference's effects, largest alone effect first.
    pub effects: Vec<Effect>,
    /// The gap less the sum of the alone effects: what the differences do only together.
    pub interaction: Option<f64>,
    /// Whether the runs validated on the test set (the "validation" figure is test's).
    pub validated_on_test: bool,
}

impl ExplainReport {
    /// The effects of an explain sweep, from its table; none for another kind of sweep.
    pub fn of(sweep: &Sweep, report: &SweepReport) -> Option<Self> {
        if sweep.spec.search != Search::Explain {
            return None;
        }
        let row = |setting: &[(String, toml::Value)]| {
            report.rows.iter().find(|r| r.values.as_slice() == setting)
        };
        let all: Vec<(String, toml::Value)> = sweep
            .spec
            .axes
            .iter()
            .filter_map(|axis| match &axis.values {
                super::plan::Values::List(v) => Some((axis.key.clone(), v.first()?.clone())),
                super::plan::Values::Range { .. } => None,
            })
            .collect();
        let (a, b) = (row(&[])?, row(&all)?);
        let base_table = &sweep.base;
        let mut effects: Vec<Effect> = all
            .iter()
            .enumerate()
            .map(|(i, (key, value))| {
                let alone = row(&[(key.clone(), value.clone())]);
                let mut without = all.clone();
                without.remove(i);
                let undone = row(&without);
                let a_value = get(base_table, key)
                    .cloned()
                    .unwrap_or_else(|| toml::Value::String("(not set)".into()));
                Effect {
                    difference: Difference {
                        key: key.clone(),
                        a: a_value,
                        b: value.clone(),
                    },
                    alone: alone.and_then(|r| Change::between(&a.val_samples, &r.val_samples)),
                    undone: undone.and_then(|r| Change::between(&r.val_samples, &b.val_samples)),
                    test_alone: alone
                        .and_then(|r| Change::between(&a.test_samples, &r.test_samples)),
                    secs_alone: alone
                        .and_then(|r| Change::between(&a.secs_samples, &r.secs_samples)),
                }
            })
            .collect();
        effects.sort_by(|x, y| {
            let size = |e: &Effect| e.alone.map_or(0.0, |c| c.mean.abs());
            size(y).total_cmp(&size(x))
        });
        let gap = Change::between(&a.val_samples, &b.val_samples);
        let summed: Option<f64> = effects.iter().map(|e| e.alone.map(|c| c.mean)).sum();
        Some(Self {
            a_mean: a.val_accuracy.map(|s| s.mean),
            b_mean: b.val_accuracy.map(|s| s.mean),
            gap,
            test_gap: Change::between(&a.test_samples, &b.test_samples),
            secs_gap: Change::between(&a.secs_samples, &b.secs_samples),
            interaction: gap.zip(summed).map(|(gap, summed)| gap.mean - summed),
            effects,
            validated_on_test: report.validated_on_test,
        })
    }

    /// The report in sentences a person can act on: the gap, each difference's effect, the
    /// interaction.
    pub fn describe(&self) -> String {
        let figure = if self.validated_on_test {
            "test accuracy (the runs validate on test)"
        } else {
            "validation accuracy"
        };
        let mut text = String::new();
        match self.gap {
            Some(gap) => {
                let _ = writeln!(text, "B against A: {} of {figure}", gap.points());
            }
            None => {
                let _ = writeln!(
                    text,
                    "B against A: not known yet (A or B has no finished trial)"
                );
            }
        }
        if let Some(test) = self.test_gap
            && !self.validated_on_test
        {
            let _ = writeln!(text, "  test accuracy: {}", test.points());
        }
        if let Some(secs) = self.secs_gap {
            let _ = writeln!(text, "  seconds per epoch: {:+.3}", secs.mean);
        }
        let _ = writeln!(
            text,
            "each difference, applied alone to A and undone alone from B:"
        );
        for effect in &self.effects {
            let change = |c: Option<Change>| c.map_or("not run yet".to_string(), |c| c.points());
            let _ = write!(
                text,
                "  {}: alone {}; undone from B {}",
                effect.difference.describe(),
                change(effect.alone),
                change(effect.undone)
            );
            if let Some(secs) = effect.secs_alone {
                let _ = write!(text, "; {:+.3} s/epoch", secs.mean);
            }
            text.push('\n');
        }
        if let Some(interaction) = self.interaction {
            let _ = writeln!(
                text,
                "the single effects add up to {:+.2} points; the other {:+.2} come only from differences together (their interaction)",
                100.0 * (self.gap.map_or(0.0, |g| g.mean) - interaction),
                100.0 * interaction
            );
        }
        let _ = writeln!(
            text,
            "intervals: 95 % (Welch's t over the seeds); within seed noise: Welch's p ≥ {NOISE_P}"
        );
        text
    }

    /// The waterfall from A to B as SVG text: A, each alone effect, the interaction, B.
    pub fn waterfall_svg(&self, width_px: u32, height_px: u32) -> Result<String, ExportError> {
        register_font()?;
        let mut text = String::new();
        {
            let root =
                SVGBackend::with_string(&mut text, (width_px, height_px)).into_drawing_area();
            self.draw_waterfall(&root)?;
        }
        Ok(text)
    }

    /// The waterfall as PNG bytes, the same drawing as [`ExplainReport::waterfall_svg`].
    pub fn waterfall_png(&self, width_px: u32, height_px: u32) -> Result<Vec<u8>, ExportError> {
        register_font()?;
        let mut pixels = vec![255u8; width_px as usize * height_px as usize * 3];
        {
            let root =
                BitMapBackend::with_buffer(&mut pixels, (width_px, height_px)).into_drawing_area();
            self.draw_waterfall(&root)?;
        }
        encode_png(&pixels, width_px, height_px)
    }

    /// The bars: (label, bottom, top, colour) in points of accuracy.
    fn bars(&self) -> Vec<(String, f64, f64, RGBColor)> {
        let (Some(a), Some(b)) = (self.a_mean, self.b_mean) else {
            return Vec::new();
        };
        let grey = RGBColor(120, 120, 120);
        let mut bars = vec![("A".to_string(), 0.0, 100.0 * a, grey)];
        let mut level = 100.0 * a;
        for effect in &self.effects {
            let Some(alone) = effect.alone else { continue };
            let next = level + 100.0 * alone.mean;
            let colour = if alone.within_noise() {
                RGBColor(170, 170, 170)
            } else if alone.mean >= 0.0 {
                RGBColor(46, 139, 87)
            } else {
                RGBColor(200, 60, 60)
            };
            bars.push((effect.difference.key.clone(), level, next, colour));
            level = next;
        }
        if let Some(interaction) = self.interaction {
            let next = level + 100.0 * interaction;
            bars.push(("interaction".into(), level, next, RGBColor(128, 90, 180)));
        }
        bars.push(("B".into(), 0.0, 100.0 * b, grey));
        bars
    }

    fn draw_waterfall<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), ExportError> {
        let draw = |e: &dyn std::fmt::Display| ExportError::Draw(e.to_string());
        root.fill(&WHITE).map_err(|e| draw(&e))?;
        let bars = self.bars();
        if bars.is_empty() {
            return Ok(());
        }
        let low = bars
            .iter()
            .skip(1)
            .take(bars.len().saturating_sub(2))
            .flat_map(|(_, bottom, top, _)| [*bottom, *top])
            .chain([bars[0].2, bars[bars.len() - 1].2])
            .fold(f64::INFINITY, f64::min);
        let high = bars
            .iter()
            .flat_map(|(_, bottom, top, _)| [*bottom, *top])
            .fold(f64::NEG_INFINITY, f64::max);
        // A and B stand on the axis's floor, a little below the lowest level reached.
        let floor = (low - 0.15 * (high - low).max(1.0)).max(0.0);
        let labels: Vec<String> = bars.iter().map(|(label, ..)| label.clone()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(
                "From A to B: each difference alone, then their interaction",
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(56)
            .build_cartesian_2d(
                -0.5f64..(bars.len() as f64 - 0.5),
                floor..high + 0.08 * (high - floor),
            )
            .map_err(|e| draw(&e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(bars.len())
            .x_label_formatter(&|x| {
                let index = x.round();
                if (x - index).abs() > 1e-6 || index < 0.0 {
                    return String::new();
                }
                labels
                    .get(index as usize)
                    .map(|l| l.chars().take(22).collect())
                    .unwrap_or_default()
            })
            .y_desc("accuracy (%)")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| draw(&e))?;
        chart
            .draw_series(
                bars.iter()
                    .enumerate()
                    .map(|(i, (_, bottom, top, colour))| {
                        let (bottom, top) = (bottom.max(floor), top.max(floor));
                        Rectangle::new(
                            [
                                (i as f64 - 0.35, bottom.min(top)),
                                (i as f64 + 0.35, bottom.max(top)),
                            ],
                            colour.filled(),
                        )
                    }),
            )
            .map_err(|e| draw(&e))?;
        // Each bar's figure above it: A's and B's level, each step's change.
        let last = bars.len() - 1;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, bottom, top, _))| {
                let text = if i == 0 || i == last {
                    format!("{top:.1} %")
                } else {
                    format!("{:+.1}", top - bottom)
                };
                // Text hangs below its point: raised by a line's height to sit above the bar.
                Text::new(
                    text,
                    (i as f64 - 0.2, bottom.max(*top) + 0.05 * (high - floor)),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
        Ok(())
    }
}
