//! `kiln explain --loop`: the speed side of "why": Kiln's loop against the naive user loop on
//! one workload and device, with each of the naive loop's habits taken up alone by Kiln's loop,
//! so the slowdown is split habit by habit on the person's own device.

use std::fmt::Write as _;

use anyhow::Context;
use kiln_core::config::ExperimentDraft;
use kiln_core::train::bench::{self, BenchReport, LoopDefects};

/// Steps of the untimed first round of each loop: the first loop in a process also pays for
/// its page faults and allocator growth (measured: 20–30 % on the CPU).
const WARM_STEPS: usize = 50;

/// Benches Kiln's loop, each habit alone, and the naive loop on `draft`'s workload (on
/// `device` when given), then prints the table and the sentence that splits the gap.
pub(super) fn run(
    mut draft: ExperimentDraft,
    device: Option<&str>,
    steps: usize,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        (1..=1_000_000).contains(&steps),
        "--steps {steps} must be from 1 to 1000000"
    );
    if let Some(device) = device {
        draft.set_devices(kiln_core::device::parse_devices(device).context("--device")?);
    }
    let experiment = draft.validate()?;
    anyhow::ensure!(
        experiment.data_parallel.is_empty(),
        "kiln explain --loop times the loop on one device; give one --device"
    );
    // The validation split is held out as in a run: the loops see only training images.
    let (data, target) = kiln_core::run::data_and_devices(&experiment)?;
    for defects in [LoopDefects::NONE, LoopDefects::ALL] {
        bench::bench_loop(&experiment, &data, &target, defects, steps.min(WARM_STEPS))?;
    }
    let mut loops: Vec<(String, LoopDefects)> = vec![("Kiln's loop".into(), LoopDefects::NONE)];
    for (name, defects) in LoopDefects::each() {
        loops.push((format!("+ {name}"), defects));
    }
    loops.push(("all of them: the naive loop".into(), LoopDefects::ALL));
    // Round after round of every loop, A B C … A B C …: a machine that speeds up or slows down
    // part-way shifts every loop alike rather than the ones measured late.
    let mut rounds: Vec<Vec<BenchReport>> = vec![Vec::new(); loops.len()];
    for round in 1..=ROUNDS {
        for (i, (name, defects)) in loops.iter().enumerate() {
            let report = bench::bench_loop(&experiment, &data, &target, *defects, steps)?;
            eprintln!(
                "round {round}, {name}: {:.3} ms/step",
                report.median_step_ms
            );
            rounds[i].push(report);
        }
    }
    let measured: Vec<(String, BenchReport)> = loops
        .into_iter()
        .zip(rounds)
        .filter_map(|((name, _), reports)| Some((name, median_round(reports)?)))
        .collect();
    print!("{}", table(&measured));
    Ok(())
}

/// Rounds of every loop, each loop's figures the median of its rounds.
const ROUNDS: usize = 3;

/// The round whose step time is the median of `reports`, with the median evaluation time.
fn median_round(mut reports: Vec<BenchReport>) -> Option<BenchReport> {
    let mut eval: Vec<f64> = reports.iter().map(|r| r.eval_secs).collect();
    eval.sort_by(f64::total_cmp);
    reports.sort_by(|a, b| a.median_step_ms.total_cmp(&b.median_step_ms));
    let middle = reports.len() / 2;
    let mut report = reports.into_iter().nth(middle)?;
    report.eval_secs = eval[middle];
    Some(report)
}

/// The sentence that splits the naive loop's `gap_ms` against Kiln's `kiln_ms` per step, of
/// which the habits taken up alone add `alone_ms`. On a quiet device the naive loop can time
/// within the noise of Kiln's or below it, and the sentence says so rather than splitting noise.
fn verdict(kiln_ms: f64, gap_ms: f64, alone_ms: f64, largest: &str) -> String {
    let within = 0.05 * kiln_ms;
    if gap_ms.abs() <= within {
        format!(
            "on this device the naive loop's step is within 5 % of Kiln's ({gap_ms:+.3} ms): none of its habits costs much here. The largest alone: {largest}."
        )
    } else if gap_ms < 0.0 {
        format!(
            "on this device the naive loop's step timed {:.3} ms below Kiln's: more than the 5 % these timings wander, so rerun with more --steps before reading the habits. The largest alone: {largest}.",
            -gap_ms
        )
    } else {
        format!(
            "per training step the habits alone add {alone_ms:.3} ms of the naive loop's {gap_ms:+.3} ms against Kiln's; the other {:.3} ms is how they compound. The largest alone: {largest}.",
            gap_ms - alone_ms
        )
    }
}

/// The table of every loop against Kiln's, and the sentence splitting the naive loop's gap.
fn table(measured: &[(String, BenchReport)]) -> String {
    let (Some((_, kiln)), Some((_, naive))) = (measured.first(), measured.last()) else {
        return String::new();
    };
    let mut text = format!(
        "{} on {}: {} steps of {} images each, then one evaluation of {} images\n",
        kiln.workload, kiln.device, kiln.steps, kiln.batch_size, kiln.eval_images
    );
    let width = measured
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        text,
        "{:width$}  {:>9}  {:>8}  {:>9}  {:>8}",
        "loop", "ms/step", "× Kiln's", "eval ms", "× Kiln's"
    );
    let ratio = |a: f64, b: f64| a / b.max(1e-12);
    for (name, report) in measured {
        let _ = writeln!(
            text,
            "{name:width$}  {:>9.3}  {:>8.2}  {:>9.1}  {:>8.2}",
            report.median_step_ms,
            ratio(report.median_step_ms, kiln.median_step_ms),
            report.eval_secs * 1e3,
            ratio(report.eval_secs, kiln.eval_secs),
        );
    }
    let singles = &measured[1..measured.len() - 1];
    let extra = |report: &BenchReport| report.median_step_ms - kiln.median_step_ms;
    let alone: f64 = singles.iter().map(|(_, r)| extra(r).max(0.0)).sum();
    let gap = extra(naive);
    let largest = singles
        .iter()
        .max_by(|a, b| extra(&a.1).total_cmp(&extra(&b.1)))
        .map(|(name, r)| format!("{} ({:+.3} ms)", name.trim_start_matches("+ "), extra(r)))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "{}",
        verdict(kiln.median_step_ms, gap, alone, &largest)
    );
    let _ = writeln!(
        text,
        "(each loop's median over {ROUNDS} rounds of every loop in turn, each round's step time the median of windows of {} steps closed by one device sync)",
        bench::WINDOW_STEPS
    );
    text
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn a_gap_within_five_percent_of_kilns_step_is_called_noise_not_split() {
        let said = verdict(10.0, 0.3, 0.8, "x (+0.4 ms)");
        assert!(said.contains("within 5 % of Kiln's (+0.300 ms)"), "{said}");
        assert!(said.ends_with("The largest alone: x (+0.4 ms)."), "{said}");
    }

    #[test]
    fn a_naive_loop_faster_than_kilns_asks_for_more_steps_rather_than_splitting() {
        let said = verdict(10.0, -1.2, 0.0, "x (-0.1 ms)");
        assert!(said.contains("1.200 ms below Kiln's"), "{said}");
        assert!(said.contains("more --steps"), "{said}");
    }

    #[test]
    fn a_real_gap_is_split_into_the_habits_alone_and_their_compounding() {
        let said = verdict(10.0, 6.0, 4.5, "x (+3.0 ms)");
        assert!(
            said.starts_with(
                "per training step the habits alone add 4.500 ms of the naive loop's +6.000 ms"
            ),
            "{said}"
        );
        assert!(
            said.contains("the other 1.500 ms is how they compound"),
            "{said}"
        );
    }
}
