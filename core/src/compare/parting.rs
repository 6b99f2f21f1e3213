//! Where two runs' curves part: the first epoch from which one run's evaluated accuracy leads
//! the other's, epoch after epoch to the end, by more than seed noise. The question after "B
//! ends 5 points lower" is "from when", which tells a slow start (the learning rate, the
//! initialization) from a late drift (overfitting, augmentation).

use crate::run_folder::RunHistory;

/// How far apart two curves must be, in accuracy points, when no seed band says what the seed
/// alone moves them: a point, about what one seed moves a small model's accuracy on MNIST-sized
/// data.
pub const DEFAULT_NOISE_PCT: f64 = 1.0;

/// Where a run's evaluation curve parts from the reference run's ([`parting`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Parting {
    /// The run compared with the reference (the first run), by its index among the runs.
    pub run: usize,
    /// The first epoch (from 1) from which one run leads at every epoch to the end.
    pub from_epoch: usize,
    /// Whether the compared run is the one ahead (else the reference is).
    pub run_leads: bool,
    /// The smallest and the largest lead from that epoch on, in accuracy points.
    pub lead_pct: (f64, f64),
    /// The gap taken as noise, in accuracy points.
    pub noise_pct: f64,
    /// Whether the noise came from runs that differ only in their seed (else it is
    /// [`DEFAULT_NOISE_PCT`]).
    pub noise_from_seeds: bool,
}

impl Parting {
    /// One sentence: "from epoch 3 on, b leads a by 2.1 to 4.0 points of accuracy".
    pub fn describe(&self, labels: &[String]) -> String {
        let name = |index: usize| labels.get(index).map_or("?", String::as_str);
        let (ahead, behind) = match self.run_leads {
            true => (name(self.run), name(0)),
            false => (name(0), name(self.run)),
        };
        let noise = match self.noise_from_seeds {
            true => format!("twice the seed spread, {:.2} points", self.noise_pct),
            false => format!("{:.1} point: no seed band to measure it", self.noise_pct),
        };
        format!(
            "from epoch {} on, {ahead} leads {behind} by {:.1} to {:.1} points of evaluated accuracy (noise taken as {noise})",
            self.from_epoch, self.lead_pct.0, self.lead_pct.1
        )
    }
}

/// Where `run` parts from `reference`: over the epochs both evaluated, the earliest from which
/// the gap keeps one sign and stays above `noise_pct` to the last such epoch. None when the last
/// common epoch is within the noise (the curves end together) or they share no epoch.
pub fn parting(
    reference: &RunHistory,
    run: &RunHistory,
    index: usize,
    noise_pct: f64,
    noise_from_seeds: bool,
) -> Option<Parting> {
    let accuracy = |history: &RunHistory, epoch: usize| {
        history
            .epochs
            .iter()
            .rev()
            .find(|e| e.epoch == epoch)
            .and_then(|e| e.val_accuracy.or(e.test_accuracy))
            .map(|accuracy| accuracy * 100.0)
            .filter(|a| a.is_finite())
    };
    // (epoch, run − reference), over the epochs both evaluated, in order.
    let mut gaps: Vec<(usize, f64)> = run
        .epochs
        .iter()
        .filter_map(|e| {
            Some((
                e.epoch,
                accuracy(run, e.epoch)? - accuracy(reference, e.epoch)?,
            ))
        })
        .collect();
    gaps.sort_by_key(|&(epoch, _)| epoch);
    gaps.dedup_by_key(|&mut (epoch, _)| epoch);
    let &(_, last) = gaps.last()?;
    if last.abs() <= noise_pct {
        return None;
    }
    let holding = gaps
        .iter()
        .rev()
        .take_while(|&&(_, gap)| gap.abs() > noise_pct && gap.signum() == last.signum())
        .count();
    let held = &gaps[gaps.len() - holding..];
    let leads = held.iter().map(|&(_, gap)| gap.abs());
    Some(Parting {
        run: index,
        from_epoch: held[0].0,
        run_leads: last > 0.0,
        lead_pct: (
            leads.clone().fold(f64::INFINITY, f64::min),
            leads.fold(0.0, f64::max),
        ),
        noise_pct,
        noise_from_seeds,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::run_folder::EpochRow;

    /// A run whose epochs evaluated `accuracies` on validation, one per epoch from 1: what
    /// partings are found from (its config and folder are the caller's to set).
    pub(in crate::compare) fn run(accuracies: &[f64]) -> RunHistory {
        RunHistory {
            epochs: accuracies
                .iter()
                .enumerate()
                .map(|(i, &accuracy)| EpochRow {
                    epoch: i + 1,
                    train_loss: None,
                    train_accuracy: None,
                    val_loss: Some(1.0),
                    val_accuracy: Some(accuracy),
                    test_loss: None,
                    test_accuracy: None,
                    epoch_secs: None,
                    eval_secs: None,
                    samples_per_sec: None,
                })
                .collect(),
            ..RunHistory::default()
        }
    }

    #[test]
    fn curves_part_where_one_leads_by_more_than_the_noise_to_the_end() {
        // Even for two epochs (within a point), then the reference pulls ahead for good.
        let reference = run(&[0.80, 0.84, 0.87, 0.88, 0.89]);
        let other = run(&[0.805, 0.835, 0.85, 0.855, 0.86]);
        let found = parting(&reference, &other, 1, 1.0, false).expect("they part");
        assert_eq!(found.from_epoch, 3);
        assert!(!found.run_leads);
        assert!((found.lead_pct.0 - 2.0).abs() < 1e-9, "{found:?}");
        assert!((found.lead_pct.1 - 3.0).abs() < 1e-9, "{found:?}");
        let labels = ["kiln".to_owned(), "keras".to_owned()];
        assert!(
            found
                .describe(&labels)
                .starts_with("from epoch 3 on, kiln leads keras by 2.0 to 3.0 points"),
            "{}",
            found.describe(&labels)
        );
    }

    #[test]
    fn curves_that_cross_back_or_end_within_the_noise_do_not_part_before_the_crossing() {
        let reference = run(&[0.80, 0.84, 0.87, 0.88]);
        // Ahead early, behind from epoch 3 on.
        let crossing = run(&[0.83, 0.86, 0.85, 0.86]);
        assert_eq!(
            parting(&reference, &crossing, 1, 1.0, false).map(|p| p.from_epoch),
            Some(3)
        );
        // Apart in the middle, together at the end: no parting.
        let rejoining = run(&[0.80, 0.80, 0.80, 0.875]);
        assert_eq!(parting(&reference, &rejoining, 1, 1.0, false), None);
        // A wider noise (a seed band's) swallows a gap of two points.
        assert_eq!(parting(&reference, &crossing, 1, 2.5, true), None);
        // No common epoch, nothing to say.
        assert_eq!(
            parting(&reference, &RunHistory::default(), 1, 1.0, false),
            None
        );
    }
}
