//! How many CPU threads a training step's arithmetic gets.
//!
//! Burn's CPU backend hands every large enough matrix product to rayon's pool of all cores. At
//! `fashion-mlp`'s sizes the hand-offs cost more than the second core gives back (measured on a
//! 2-core machine: 3.4 ms per step on both cores, 2.6 ms on one), while a CNN's larger products
//! run 1.6× faster on both. No size rule fits every machine, so a CPU run times its first steps
//! both ways and keeps the faster. The choice does not change the arithmetic: each output of a
//! product is summed in the same order on any number of threads.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Steps timed each way, after one untimed step each way (first-touch allocations).
const CALIBRATION_STEPS: usize = 5;
/// A step at least this slow has products large enough for every core; timing a one-thread
/// alternative would only waste the person's time.
const SLOW_STEP: Duration = Duration::from_millis(100);

/// What the calibration found, for `summary.json` and `kiln bench`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThreadChoice {
    /// Threads the steps run on after the calibration.
    pub threads: usize,
    /// Median milliseconds of a calibration step on all cores.
    pub all_threads_step_ms: f64,
    /// Median milliseconds of a calibration step on one thread; none when the all-core steps were
    /// slow enough to skip it.
    pub one_thread_step_ms: Option<f64>,
}

/// Runs steps on all cores or on one, timing the first few both ways to choose.
pub(crate) struct CpuThreads {
    /// The one-thread pool; none on a GPU or a one-core machine, where there is nothing to choose.
    one: Option<rayon::ThreadPool>,
    all_cores: usize,
    all_ms: Vec<f64>,
    one_ms: Vec<f64>,
    chosen: Option<CpuThreadChoice>,
}

impl CpuThreads {
    /// For a CPU run; `on_cpu` false (a GPU) runs every step as it comes.
    pub(crate) fn new(on_cpu: bool) -> Self {
        let all_cores = rayon::current_num_threads();
        let one = (on_cpu && all_cores > 1)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok())
            .flatten();
        Self {
            one,
            all_cores,
            all_ms: Vec::new(),
            one_ms: Vec::new(),
            chosen: None,
        }
    }

    /// Runs one step's arithmetic where the calibration says, timing it while it calibrates.
    /// The CPU backend computes as it is called, so a step's wall time is its compute time.
    pub(crate) fn run<R: Send>(&mut self, step: impl FnOnce() -> R + Send) -> R {
        let Some(one) = &self.one else {
            return step();
        };
        if let Some(chosen) = &self.chosen {
            return if chosen.threads == 1 {
                one.install(step)
            } else {
                step()
            };
        }
        // All cores first: if those steps are slow, the one-thread steps are never taken.
        let on_one = self.all_ms.len() > CALIBRATION_STEPS;
        let started = Instant::now();
        let result = if on_one { one.install(step) } else { step() };
        let ms = started.elapsed().as_secs_f64() * 1e3;
        if on_one {
            self.one_ms.push(ms);
        } else {
            self.all_ms.push(ms);
        }
        self.decide();
        result
    }

    /// The choice once made; none before, and none where there was nothing to choose.
    pub(crate) fn choice(&self) -> Option<&CpuThreadChoice> {
        self.chosen.as_ref()
    }

    fn decide(&mut self) {
        // The first step of each side pays first-touch costs and is left out.
        let all = median(self.all_ms.get(1..).unwrap_or_default());
        if self.all_ms.len() > CALIBRATION_STEPS && self.one_ms.is_empty() && all >= slow_ms() {
            self.chosen = Some(CpuThreadChoice {
                threads: self.all_cores,
                all_threads_step_ms: all,
                one_thread_step_ms: None,
            });
            return;
        }
        if self.one_ms.len() <= CALIBRATION_STEPS {
            return;
        }
        let one = median(&self.one_ms[1..]);
        self.chosen = Some(CpuThreadChoice {
            threads: if one < all { 1 } else { self.all_cores },
            all_threads_step_ms: all,
            one_thread_step_ms: Some(one),
        });
    }
}

fn slow_ms() -> f64 {
    SLOW_STEP.as_secs_f64() * 1e3
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(ms: u64) {
        let until = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn a_gpu_runs_every_step_where_it_is_called_and_chooses_nothing() {
        let mut threads = CpuThreads::new(false);
        let caller = std::thread::current().id();
        for _ in 0..20 {
            assert_eq!(threads.run(|| std::thread::current().id()), caller);
        }
        assert_eq!(threads.choice(), None);
    }

    #[test]
    fn the_faster_side_is_kept_after_timing_both() {
        let mut threads = CpuThreads::new(true);
        if threads.one.is_none() {
            eprintln!("skipped: one core, nothing to choose");
            return;
        }
        // Steps 20× slower on the one-thread pool's thread than on the caller's: far apart, so
        // a busy test machine preempting a few of them cannot swap the medians.
        let caller = std::thread::current().id();
        let mut ran_elsewhere = false;
        for _ in 0..2 * (CALIBRATION_STEPS + 1) {
            let elsewhere = threads.run(|| {
                let elsewhere = std::thread::current().id() != caller;
                busy(if elsewhere { 20 } else { 1 });
                elsewhere
            });
            ran_elsewhere |= elsewhere;
        }
        assert!(ran_elsewhere, "the one-thread side was timed");
        let choice = threads.choice().expect("decided after both sides");
        assert_eq!(choice.threads, threads.all_cores);
        assert!(
            choice
                .one_thread_step_ms
                .is_some_and(|ms| ms > choice.all_threads_step_ms)
        );
        // Decided: later steps stay on the caller's thread.
        assert!(!threads.run(|| std::thread::current().id() != caller));
    }

    #[test]
    fn slow_steps_skip_the_one_thread_side() {
        let mut threads = CpuThreads::new(true);
        if threads.one.is_none() {
            eprintln!("skipped: one core, nothing to choose");
            return;
        }
        threads.all_ms = vec![500.0; CALIBRATION_STEPS];
        threads.run(|| ());
        // The last step was fast, but the median of the rest decides.
        let choice = threads
            .choice()
            .expect("decided without the one-thread side");
        assert_eq!(choice.one_thread_step_ms, None);
        assert_eq!(choice.threads, threads.all_cores);
    }
}
