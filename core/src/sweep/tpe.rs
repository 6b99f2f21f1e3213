//! The tree-structured Parzen estimator (Bergstra et al., 2011), as Optuna's default sampler
//! runs it: the settings tried so far are split into the best tenth and the rest; each axis gets
//! a density over its values from each group (a Gaussian at every value tried, plus a broad
//! prior); of 24 values drawn from the good density, the one where good is likeliest against
//! rest is proposed. Axes are treated one at a time (univariate TPE).
//!
//! A range is searched on the scale it was written on (a log range in log space, mapped to
//! [0, 1]); a list is searched as categories, each weighted by how often it was among the best.

use crate::shuffle::ShuffleRng;

use super::plan::{Axis, Values, lerp, number, same_value, unit_of};

/// Values drawn from the good density per axis, the one likeliest under it against the rest
/// proposed (Optuna's `n_ei_candidates`).
pub const CANDIDATES: usize = 24;
/// Weight of the prior beside the settings tried (Optuna's `prior_weight`).
const PRIOR_WEIGHT: f64 = 1.0;

/// One setting tried and how good it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The value of each axis.
    pub setting: Vec<(String, toml::Value)>,
    /// Higher is better (the mean validation accuracy over its seeds).
    pub score: f64,
}

/// Of the `n` settings tried, how many count as good: a tenth, rounded up, at most 25
/// (Optuna's default `gamma`).
pub fn good_count(n: usize) -> usize {
    n.div_ceil(10).clamp(1, 25)
}

/// The next setting to try over `axes` given the settings `observed` so far; a random draw while
/// fewer than two are known. `avoid` lists settings already planned, which a proposal only
/// repeats after a few tries at something new. The same `seed` and results propose the same.
pub fn propose(
    axes: &[Axis],
    observed: &[Observation],
    avoid: &[Vec<(String, toml::Value)>],
    seed: u64,
) -> Vec<(String, toml::Value)> {
    let rng = &mut ShuffleRng(seed);
    let finite: Vec<&Observation> = observed.iter().filter(|o| o.score.is_finite()).collect();
    let mut proposal = Vec::new();
    for _attempt in 0..16 {
        proposal = if finite.len() < 2 {
            axes.iter()
                .map(|axis| (axis.key.clone(), axis.draw(rng)))
                .collect()
        } else {
            let mut ranked = finite.clone();
            ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
            let (good, rest) = ranked.split_at(good_count(ranked.len()));
            axes.iter()
                .map(|axis| (axis.key.clone(), propose_axis(axis, good, rest, rng)))
                .collect()
        };
        if !avoid.iter().any(|planned| same_setting(planned, &proposal)) {
            break;
        }
    }
    proposal
}

/// Whether two settings give every axis the same value (numbers compared by value).
fn same_setting(a: &[(String, toml::Value)], b: &[(String, toml::Value)]) -> bool {
    a.len() == b.len()
        && a.iter().all(|(key, value)| {
            b.iter()
                .any(|(other, theirs)| other == key && same_value(Some(value), theirs))
        })
}

/// One axis's value: of [`CANDIDATES`] draws from the good density, the likeliest against rest.
fn propose_axis(
    axis: &Axis,
    good: &[&Observation],
    rest: &[&Observation],
    rng: &mut ShuffleRng,
) -> toml::Value {
    let value_of = |o: &&Observation| {
        o.setting
            .iter()
            .find(|(key, _)| *key == axis.key)
            .map(|(_, v)| v.clone())
    };
    let (good, rest): (Vec<toml::Value>, Vec<toml::Value>) = (
        good.iter().filter_map(value_of).collect(),
        rest.iter().filter_map(value_of).collect(),
    );
    match &axis.values {
        Values::List(values) => {
            // Optuna's kernel per value tried: the prior's weight spread over every category,
            // plus 1 on its own; the prior is a kernel of its own, spread evenly.
            let weights = |tried: &[toml::Value]| -> Vec<f64> {
                let kernels = tried.len() as f64 + 1.0;
                let spread = PRIOR_WEIGHT / kernels;
                let own = 1.0 / (1.0 + values.len() as f64 * spread);
                let prior = 1.0 / values.len() as f64;
                values
                    .iter()
                    .map(|v| {
                        let count = tried.iter().filter(|t| same_value(Some(v), t)).count();
                        (count as f64 * own + (tried.len() as f64) * spread * own + prior) / kernels
                    })
                    .collect()
            };
            let (l, g) = (weights(&good), weights(&rest));
            let (l_sum, g_sum) = (l.iter().sum::<f64>(), g.iter().sum::<f64>());
            let mut best = (f64::NEG_INFINITY, 0);
            for _ in 0..CANDIDATES {
                let i = pick_weighted(&l, rng);
                let ratio = (l[i] / l_sum).ln() - (g[i] / g_sum).ln();
                if ratio > best.0 {
                    best = (ratio, i);
                }
            }
            values[best.1].clone()
        }
        Values::Range {
            min,
            max,
            log,
            integer,
            ..
        } => {
            let units = |tried: &[toml::Value]| -> Vec<f64> {
                tried.iter().filter_map(|v| unit_of(axis, v)).collect()
            };
            let (l, g) = (Parzen::over(&units(&good)), Parzen::over(&units(&rest)));
            let mut best = (f64::NEG_INFINITY, 0.5);
            for _ in 0..CANDIDATES {
                let u = l.draw(rng);
                let ratio = l.density(u).ln() - g.density(u).ln();
                if ratio > best.0 {
                    best = (ratio, u);
                }
            }
            number(lerp(*min, *max, best.1, *log), *integer)
        }
    }
}

/// An index drawn with probability proportional to its weight.
fn pick_weighted(weights: &[f64], rng: &mut ShuffleRng) -> usize {
    let total: f64 = weights.iter().sum();
    let mut left = rng.unit() * total;
    for (i, w) in weights.iter().enumerate() {
        if left < *w {
            return i;
        }
        left -= w;
    }
    weights.len() - 1
}

/// A mixture of Gaussians cut to [0, 1]: one at each value tried, one broad prior in the middle.
#[derive(Debug, Clone)]
struct Parzen {
    /// (mean, standard deviation) of each part, every part weighted alike.
    parts: Vec<(f64, f64)>,
}

impl Parzen {
    /// The estimator over `points` in [0, 1]: each point's width is its distance to the farther
    /// neighbour (the ends of [0, 1] neighbour the outermost), clipped between 1 / min(100, n + 1)
    /// and 1, as hyperopt and Optuna clip it.
    fn over(points: &[f64]) -> Self {
        let mut mus: Vec<f64> = points.to_vec();
        mus.push(0.5);
        mus.sort_by(f64::total_cmp);
        let min_sigma = 1.0 / (points.len() as f64 + 1.0).min(100.0);
        let mut parts: Vec<(f64, f64)> = mus
            .iter()
            .enumerate()
            .map(|(i, &mu)| {
                let below = if i == 0 { 0.0 } else { mus[i - 1] };
                let above = mus.get(i + 1).copied().unwrap_or(1.0);
                (mu, (mu - below).max(above - mu).clamp(min_sigma, 1.0))
            })
            .collect();
        // The prior is broad whatever its neighbours: it keeps every value reachable.
        if let Some(prior) = parts.iter_mut().find(|(mu, _)| *mu == 0.5) {
            prior.1 = 1.0;
        }
        debug_assert!(
            (PRIOR_WEIGHT - 1.0).abs() < f64::EPSILON,
            "parts weigh alike"
        );
        Self { parts }
    }

    /// The mixture's density at `u`.
    fn density(&self, u: f64) -> f64 {
        let sum: f64 = self
            .parts
            .iter()
            .map(|&(mu, sigma)| {
                let mass = normal_cdf((1.0 - mu) / sigma) - normal_cdf(-mu / sigma);
                let z = (u - mu) / sigma;
                (-0.5 * z * z).exp() / (sigma * (2.0 * std::f64::consts::PI).sqrt() * mass)
            })
            .sum();
        (sum / self.parts.len() as f64).max(f64::MIN_POSITIVE)
    }

    /// A value drawn from the mixture: a part at random, then a normal draw inside [0, 1].
    fn draw(&self, rng: &mut ShuffleRng) -> f64 {
        let (mu, sigma) = self.parts[rng.below(self.parts.len())];
        for _ in 0..64 {
            let u = mu + sigma * standard_normal(rng);
            if (0.0..=1.0).contains(&u) {
                return u;
            }
        }
        mu.clamp(0.0, 1.0)
    }
}

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut ShuffleRng) -> f64 {
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Φ(z), through erf (Abramowitz and Stegun 7.1.26, within 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    0.5 * (1.0 + if x >= 0.0 { erf } else { -erf })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(key: &str, min: f64, max: f64, log: bool) -> Axis {
        Axis {
            key: key.to_string(),
            values: Values::Range {
                min,
                max,
                log,
                steps: None,
                integer: false,
            },
        }
    }

    /// A known optimum: lr = 10^-2.5, momentum = 0.3, and `act = "gelu"` worth half a point;
    /// the score falls off quadratically (in log space for lr).
    fn score(setting: &[(String, toml::Value)]) -> f64 {
        let get = |key: &str| &setting.iter().find(|(k, _)| k == key).unwrap().1;
        let lr = get("lr").as_float().unwrap();
        let momentum = get("momentum").as_float().unwrap();
        let act = if get("act").as_str() == Some("gelu") {
            0.0
        } else {
            0.5
        };
        -((lr.log10() + 2.5).powi(2) + ((momentum - 0.3) / 0.5).powi(2) + act)
    }

    fn axes() -> Vec<Axis> {
        vec![
            range("lr", 1e-5, 1.0, true),
            range("momentum", 0.0, 1.0, false),
            Axis {
                key: "act".into(),
                values: Values::List(vec!["relu".into(), "gelu".into(), "tanh".into()]),
            },
        ]
    }

    /// The best score of `budget` settings, the first `startup` drawn at random and the rest
    /// proposed by TPE (all random when `startup` is the budget).
    fn best_of(budget: usize, startup: usize, seed: u64) -> f64 {
        let axes = axes();
        let mut rng = ShuffleRng(seed);
        let mut observed: Vec<Observation> = Vec::new();
        for i in 0..budget {
            let setting = if i < startup {
                axes.iter()
                    .map(|a| (a.key.clone(), a.draw(&mut rng)))
                    .collect()
            } else {
                propose(&axes, &observed, &[], rng.next())
            };
            observed.push(Observation {
                score: score(&setting),
                setting,
            });
        }
        observed
            .iter()
            .map(|o| o.score)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn tpe_finds_a_known_optimum_closer_than_random_search_with_the_same_budget() {
        let seeds = 0..12u64;
        // A regret is how far below the optimum (which scores 0) the best setting found ends.
        let regrets = |startup: usize| -> Vec<f64> {
            let mut regrets: Vec<f64> = seeds.clone().map(|s| -best_of(50, startup, s)).collect();
            regrets.sort_by(f64::total_cmp);
            regrets
        };
        let (tpe, random) = (regrets(10), regrets(50));
        let median = |v: &[f64]| (v[5] + v[6]) / 2.0;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(
            median(&tpe) < median(&random) / 2.0 && median(&tpe) < 0.05,
            "TPE's median regret {:.4} should be under 0.05 and half random's {:.4}",
            median(&tpe),
            median(&random)
        );
        assert!(
            mean(&tpe) < mean(&random),
            "TPE's mean regret {:.4} should be under random's {:.4}",
            mean(&tpe),
            mean(&random)
        );
    }

    #[test]
    fn a_proposal_stays_inside_each_range_and_list() {
        let axes = axes();
        let mut rng = ShuffleRng(5);
        let observed: Vec<Observation> = (0..20)
            .map(|_| {
                let setting: Vec<_> = axes
                    .iter()
                    .map(|a| (a.key.clone(), a.draw(&mut rng)))
                    .collect();
                Observation {
                    score: score(&setting),
                    setting,
                }
            })
            .collect();
        for _ in 0..200 {
            let proposal = propose(&axes, &observed, &[], rng.next());
            let lr = proposal[0].1.as_float().unwrap();
            let momentum = proposal[1].1.as_float().unwrap();
            assert!((1e-5..=1.0).contains(&lr), "lr {lr}");
            assert!((0.0..=1.0).contains(&momentum), "momentum {momentum}");
            assert!(["relu", "gelu", "tanh"].contains(&proposal[2].1.as_str().unwrap()));
        }
    }

    #[test]
    fn a_proposal_avoids_settings_already_planned_while_others_remain() {
        let axes = vec![Axis {
            key: "act".into(),
            values: Values::List(vec!["relu".into(), "gelu".into()]),
        }];
        let relu = vec![("act".to_string(), toml::Value::from("relu"))];
        let observed = vec![
            Observation {
                setting: relu.clone(),
                score: 0.9,
            },
            Observation {
                setting: relu.clone(),
                score: 0.8,
            },
        ];
        let proposal = propose(&axes, &observed, std::slice::from_ref(&relu), 1);
        assert_eq!(proposal[0].1.as_str(), Some("gelu"));
    }

    #[test]
    fn the_good_group_is_a_tenth_rounded_up_and_at_most_25() {
        assert_eq!([1, 10, 11, 100, 400].map(good_count), [1, 1, 2, 10, 25]);
    }

    #[test]
    fn the_normal_cdf_matches_printed_tables() {
        for (z, phi) in [
            (0.0, 0.5),
            (1.0, 0.841_344_7),
            (-1.96, 0.024_997_9),
            (3.0, 0.998_650_1),
        ] {
            assert!((normal_cdf(z) - phi).abs() < 1e-6, "Φ({z})");
        }
    }
}
