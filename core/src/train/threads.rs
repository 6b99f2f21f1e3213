//! How many CPU threads a training step's arithmetic gets.
//!
//! Burn's CPU backend hands every matrix product above 192³ multiply-adds to rayon's pool of all
//! cores. Below a few tens of millions of multiply-adds per step the hand-offs cost more than the
//! second core gives back. Measured on a 2-core machine, MLP 784-512-512-10, ms per step on one
//! thread against two:
//!
//! | batch | forward multiply-adds | one thread | two threads |
//! |---|---|---|---|
//! | 64 | 43 M | 2.64 | 3.12 |
//! | 128 | 86 M | 3.85 | 3.64 |
//! | 256 | 171 M | 6.22 | 5.63 |
//!
//! Convolutions' products are far larger (the small CNN: 230 ms on one thread, 142 on two). So
//! an MLP whose step is below [`ONE_THREAD_BELOW`] multiply-adds runs on one thread, and every
//! other model on all cores. The rule depends on the config alone, never on a timing: thread
//! counts change the order of some sums, and a seeded run must repeat bit for bit.

use serde::{Deserialize, Serialize};

use crate::config::Experiment;
use crate::data::ImageShape;
use crate::model::ModelSpec;

/// Forward multiply-adds per step under which an MLP trains faster on one thread.
pub const ONE_THREAD_BELOW: u64 = 64_000_000;

/// The threads a CPU run's steps ran on, and why, for `summary.json` and `kiln bench`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThreadChoice {
    /// Threads the step's arithmetic ran on.
    pub threads: usize,
    /// Forward multiply-adds of one step of an MLP; none for models with convolutions.
    pub forward_multiply_adds: Option<u64>,
}

/// Runs each step's arithmetic on one thread or on all cores, as [`CpuThreads::new`] decided.
pub(crate) struct CpuThreads {
    /// The one-thread pool, when the steps run there.
    one: Option<rayon::ThreadPool>,
    choice: Option<CpuThreadChoice>,
}

impl CpuThreads {
    /// For a run of `experiment` on images of `shape` with `classes` classes; `on_cpu` false (a
    /// GPU) runs every step as it comes and chooses nothing.
    pub(crate) fn new(
        on_cpu: bool,
        experiment: &Experiment,
        shape: ImageShape,
        classes: usize,
    ) -> Self {
        let all_cores = rayon::current_num_threads();
        if !on_cpu {
            return Self {
                one: None,
                choice: None,
            };
        }
        let macs = forward_multiply_adds(&experiment.model, shape, classes, experiment.batch_size);
        let small = macs.is_some_and(|macs| macs < ONE_THREAD_BELOW);
        // A pool that cannot be built leaves the steps where they are: slower, never wrong.
        let one = (small && all_cores > 1)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok())
            .flatten();
        let threads = if one.is_some() || all_cores == 1 {
            1
        } else {
            all_cores
        };
        Self {
            one,
            choice: Some(CpuThreadChoice {
                threads,
                forward_multiply_adds: macs,
            }),
        }
    }

    /// Runs one step's arithmetic on the chosen threads.
    pub(crate) fn run<R: Send>(&self, step: impl FnOnce() -> R + Send) -> R {
        match &self.one {
            Some(one) => one.install(step),
            None => step(),
        }
    }

    /// The choice of a CPU run; none on a GPU.
    pub(crate) fn choice(&self) -> Option<&CpuThreadChoice> {
        self.choice.as_ref()
    }
}

/// Multiply-adds of one forward pass of a batch through an MLP's layers; none for other models.
fn forward_multiply_adds(
    model: &ModelSpec,
    shape: ImageShape,
    classes: usize,
    batch: usize,
) -> Option<u64> {
    let ModelSpec::Mlp { widths, .. } = model else {
        return None;
    };
    let inputs = shape.channels * shape.height * shape.width;
    let mut fan_in = inputs as u64;
    let mut per_sample = 0u64;
    for &width in widths.iter().chain(std::iter::once(&classes)) {
        per_sample = per_sample.saturating_add(fan_in.saturating_mul(width as u64));
        fan_in = width as u64;
    }
    Some(per_sample.saturating_mul(batch as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;

    fn experiment(model: &str, batch_size: usize) -> Experiment {
        ExperimentDraft {
            model: model.parse().expect("model"),
            batch_size,
            ..ExperimentDraft::default()
        }
        .validate()
        .expect("experiment")
    }

    const FASHION: ImageShape = ImageShape {
        channels: 1,
        height: 28,
        width: 28,
    };

    #[test]
    fn small_mlp_steps_run_on_one_thread_and_the_rest_on_all_cores() {
        let cores = rayon::current_num_threads();
        // fashion-mlp: 64 × (784·512 + 512·512 + 512·10) = 42.8 M multiply-adds.
        let small = CpuThreads::new(true, &experiment("mlp:512,512", 64), FASHION, 10);
        let choice = small.choice().expect("a CPU run chooses");
        assert_eq!(choice.forward_multiply_adds, Some(42_795_008));
        assert_eq!(choice.threads, 1);
        if cores > 1 {
            let caller = std::thread::current().id();
            assert_ne!(small.run(|| std::thread::current().id()), caller);
        }
        let large = CpuThreads::new(true, &experiment("mlp:512,512", 256), FASHION, 10);
        assert_eq!(large.choice().map(|c| c.threads), Some(cores));
        let cnn = CpuThreads::new(true, &experiment("cnn", 64), FASHION, 10);
        let choice = cnn.choice().expect("a CPU run chooses");
        assert_eq!(
            (choice.threads, choice.forward_multiply_adds),
            (cores, None)
        );
        let caller = std::thread::current().id();
        assert_eq!(cnn.run(|| std::thread::current().id()), caller);
    }

    #[test]
    fn a_gpu_runs_every_step_where_it_is_called_and_chooses_nothing() {
        let threads = CpuThreads::new(false, &experiment("mlp:16", 8), FASHION, 10);
        let caller = std::thread::current().id();
        assert_eq!(threads.run(|| std::thread::current().id()), caller);
        assert_eq!(threads.choice(), None);
    }
}
