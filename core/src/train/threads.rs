//! How a CPU run's arithmetic uses the cores.
//!
//! Burn's CPU backend (flex, with Kiln's patch in `patches/burn-flex`) cuts each large matrix
//! product into one strip per thread of the current rayon pool and each convolution into one
//! gemm per image. At a batch of 64 those pieces take tens of microseconds, less than a rayon
//! worker takes to wake from sleep (idle workers sleep after a few dozen rounds of looking for
//! work), so on a pool left idle between operations the second core gave back little: the
//! `fashion-mlp` step went from 2.78 ms on one thread to 2.54 ms on two. The workers of a pool
//! of all cores therefore look for work without sleeping for as long as an epoch's steps run
//! ([`CpuThreads::keep_awake`]), as OpenMP's workers spin between PyTorch's operations; each
//! step is then handed over once. Awake workers (then one step's) brought the step to 1.95 ms
//! beside PyTorch's 2.05 on two threads (2026-12-02, `kiln bench`); `bench/cpu_speed.sh`
//! measures whole epochs side by side.
//! An evaluation keeps them awake for its length.
//!
//! Every core, for every model: the choice reads the machine, never a timing, so a seeded run
//! repeats bit for bit on it. The strips and per-image gemms sum each element in the same order
//! on any number of threads; a few of flex's own reductions split by thread count, so a run on
//! a machine with another core count may differ in the last bits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

/// The engine behind CPU runs, as `summary.json` names it.
pub const CPU_ENGINE: &str = "flex (Burn 0.22.1's CPU backend) with Kiln's patch: im2col convolutions and their gradients as one gemm per image, matrix products and large element-wise ops cut into a piece per thread";

/// The threads a CPU run's steps ran on, and the engine, for `summary.json` and `kiln bench`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThreadChoice {
    /// Threads the step's arithmetic ran on.
    pub threads: usize,
    /// Runs from before every CPU run used all cores: the forward multiply-adds of an MLP's
    /// step, which chose one thread below 64 M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_multiply_adds: Option<u64>,
    /// The CPU engine that computed the steps ([`CPU_ENGINE`]); none in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

/// Runs a CPU run's steps and evaluations on a pool of every core, its workers kept awake.
pub(crate) struct CpuThreads {
    /// The pool, on a CPU with more than one core.
    pool: Option<rayon::ThreadPool>,
    choice: Option<CpuThreadChoice>,
    /// Live [`Awake`] sessions: while one lasts, every worker already looks for work.
    sessions: Arc<AtomicUsize>,
}

impl CpuThreads {
    /// For a run on the CPU (`on_cpu`); a GPU runs every step as it comes and chooses nothing.
    pub(crate) fn new(on_cpu: bool) -> Self {
        if !on_cpu {
            return Self {
                pool: None,
                choice: None,
                sessions: Arc::default(),
            };
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // A pool that cannot be built leaves the steps on the caller: slower, never wrong.
        let pool = (cores > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(cores)
                    .thread_name(|i| format!("kiln-cpu-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        let threads = pool
            .as_ref()
            .map_or(1, rayon::ThreadPool::current_num_threads);
        Self {
            pool,
            choice: Some(CpuThreadChoice {
                threads,
                forward_multiply_adds: None,
                engine: Some(CPU_ENGINE.to_owned()),
            }),
            sessions: Arc::default(),
        }
    }

    /// Keeps every worker of the pool looking for work, without sleeping, until the session is
    /// dropped: an epoch's steps then each cost one hand-over to the pool instead of three
    /// wake-ups (a worker for the step, another for its helper, the caller at the end). Drop it
    /// before anything slow on the caller (a pause, a checkpoint), or the workers burn the
    /// cores meanwhile. None on a GPU and on one core.
    pub(crate) fn keep_awake(&self) -> Option<Awake> {
        let pool = self.pool.as_ref()?;
        let workers = pool.current_num_threads();
        let stop = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicUsize::new(0));
        for _ in 0..workers {
            let (stop, running) = (Arc::clone(&stop), Arc::clone(&running));
            pool.spawn(move || {
                running.fetch_add(1, Ordering::AcqRel);
                // Nothing else is taken until every worker holds a spinner of its own: one that
                // took a second spinner from the queue would run it nested, forever, while
                // another worker slept.
                while running.load(Ordering::Acquire) < workers && !stop.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                while !stop.load(Ordering::Acquire) {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::hint::spin_loop();
                    }
                }
                running.fetch_sub(1, Ordering::AcqRel);
            });
        }
        self.sessions.fetch_add(1, Ordering::AcqRel);
        Some(Awake {
            stop,
            running,
            sessions: Arc::clone(&self.sessions),
        })
    }

    /// Runs `work` (a step, an evaluation) on the pool, its workers awake until it ends: in the
    /// live [`Awake`] session, or in one of its own.
    pub(crate) fn run<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        let Some(pool) = &self.pool else {
            return work();
        };
        let _own = match self.sessions.load(Ordering::Acquire) {
            0 => self.keep_awake(),
            _ => None,
        };
        // The awake workers take the work from the pool's queue at once.
        pool.install(work)
    }

    /// The choice of a CPU run; none on a GPU.
    pub(crate) fn choice(&self) -> Option<&CpuThreadChoice> {
        self.choice.as_ref()
    }
}

/// A session of [`CpuThreads::keep_awake`]: the pool's workers spin until it is dropped.
pub(crate) struct Awake {
    stop: Arc<AtomicBool>,
    running: Arc<AtomicUsize>,
    sessions: Arc<AtomicUsize>,
}

impl Drop for Awake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // The workers are idle once this returns: a spinner not yet started stops on arrival.
        while self.running.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
        self.sessions.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_run_uses_every_core_and_its_helpers_take_split_work() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = CpuThreads::new(true);
        let choice = threads.choice().expect("a CPU run chooses");
        assert_eq!(choice.threads, cores);
        assert_eq!(choice.engine.as_deref(), Some(CPU_ENGINE));
        // Work split inside a step runs on the pool and ends with the right answer.
        let sum: u64 = threads.run(|| {
            use rayon::prelude::*;
            (0..100_000u64).into_par_iter().map(|i| i % 7).sum()
        });
        assert_eq!(sum, (0..100_000u64).map(|i| i % 7).sum::<u64>());
        if cores > 1 {
            let caller = std::thread::current().id();
            assert_ne!(threads.run(|| std::thread::current().id()), caller);
        }
    }

    #[test]
    fn a_step_that_panics_stops_the_helpers_and_the_next_step_runs() {
        let threads = CpuThreads::new(true);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            threads.run(|| panic!("out of memory"));
        }));
        assert!(panicked.is_err());
        assert_eq!(threads.run(|| 6 * 7), 42);
    }

    #[test]
    fn a_gpu_runs_every_step_where_it_is_called_and_chooses_nothing() {
        let threads = CpuThreads::new(false);
        let caller = std::thread::current().id();
        assert_eq!(threads.run(|| std::thread::current().id()), caller);
        assert_eq!(threads.choice(), None);
    }

    /// Values in [-0.5, 0.5) drawn from `seed`, for tensors of `len` elements.
    fn drawn(len: usize, seed: u64) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect()
    }

    fn values<const D: usize>(tensor: burn::tensor::Tensor<D>) -> Vec<f32> {
        tensor.into_data().iter::<f32>().collect()
    }

    fn largest_gap(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .fold(0.0, |gap, (x, y)| gap.max((x - y).abs()))
    }

    /// A convolution's geometry: batch, input channels, side, output channels, kernel, stride,
    /// padding, dilation, groups.
    type Case = (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
    );

    /// Output, and the gradients of input, weight and bias for an output gradient `dy`, summed
    /// term by term as the convolution's definition has them.
    fn direct_conv(case: Case, x: &[f32], w: &[f32], bias: &[f32], dy_seed: u64) -> [Vec<f32>; 4] {
        let (batch, c_in, side, c_out, k, stride, pad, dilation, groups) = case;
        let out = (side + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
        let (cin_g, cout_g) = (c_in / groups, c_out / groups);
        let dy = drawn(batch * c_out * out * out, dy_seed);
        let mut y = vec![0.0f64; dy.len()];
        let (mut dx, mut dw) = (vec![0.0f64; x.len()], vec![0.0f64; w.len()]);
        let mut db = vec![0.0f64; c_out];
        for b in 0..batch {
            for co in 0..c_out {
                let g = co / cout_g;
                for oh in 0..out {
                    for ow in 0..out {
                        let at = ((b * c_out + co) * out + oh) * out + ow;
                        let grad = f64::from(dy[at]);
                        y[at] += f64::from(bias[co]);
                        db[co] += grad;
                        for ci in 0..cin_g {
                            for kh in 0..k {
                                for kw in 0..k {
                                    let ih = (oh * stride + kh * dilation) as isize - pad as isize;
                                    let iw = (ow * stride + kw * dilation) as isize - pad as isize;
                                    if ih < 0
                                        || iw < 0
                                        || ih >= side as isize
                                        || iw >= side as isize
                                    {
                                        continue;
                                    }
                                    let xi = ((b * c_in + g * cin_g + ci) * side + ih as usize)
                                        * side
                                        + iw as usize;
                                    let wi = ((co * cin_g + ci) * k + kh) * k + kw;
                                    y[at] += f64::from(x[xi]) * f64::from(w[wi]);
                                    dx[xi] += grad * f64::from(w[wi]);
                                    dw[wi] += grad * f64::from(x[xi]);
                                }
                            }
                        }
                    }
                }
            }
        }
        [y, dx, dw, db].map(|v| v.into_iter().map(|v| v as f32).collect())
    }

    /// Each window's first largest value (a NaN wins) and its index in the image plane, as
    /// PyTorch's max_pool2d_with_indices defines them: kernel, stride, padding, ceil mode.
    fn direct_max_pool(
        x: &[f32],
        [planes, height, width]: [usize; 3],
        (kernel, stride, pad, ceil): (usize, usize, usize, bool),
    ) -> (Vec<f32>, Vec<i64>) {
        let size = |input: usize| {
            let span = input + 2 * pad - kernel;
            let out = if ceil {
                span.div_ceil(stride)
            } else {
                span / stride
            } + 1;
            // A last window starting in the trailing padding is dropped.
            if ceil && (out - 1) * stride >= input + pad {
                out - 1
            } else {
                out
            }
        };
        let (out_h, out_w) = (size(height), size(width));
        let (mut values, mut indices) = (Vec::new(), Vec::new());
        for plane in x.chunks(height * width).take(planes) {
            for oh in 0..out_h {
                for ow in 0..out_w {
                    let (mut best, mut at) = (f32::NEG_INFINITY, -1i64);
                    for kh in 0..kernel {
                        for kw in 0..kernel {
                            let ih = (oh * stride + kh) as isize - pad as isize;
                            let iw = (ow * stride + kw) as isize - pad as isize;
                            if ih < 0 || iw < 0 || ih >= height as isize || iw >= width as isize {
                                continue;
                            }
                            let index = ih as usize * width + iw as usize;
                            let value = plane[index];
                            if at < 0 || value > best || value.is_nan() {
                                (best, at) = (value, index as i64);
                            }
                        }
                    }
                    values.push(best);
                    indices.push(at);
                }
            }
        }
        (values, indices)
    }

    #[test]
    fn the_cpu_engines_max_pool_keeps_each_windows_first_largest_value_and_its_index() {
        use burn::tensor::module::max_pool2d_with_indices;
        use burn::tensor::ops::MaxPoolOptions;
        use burn::tensor::{Device, Tensor, TensorData};
        let device = Device::flex();
        let threads = CpuThreads::new(true);
        let [batch, channels, height, width] = [2, 3, 7, 6];
        // Values in steps of 1/8, so windows hold ties, and one NaN.
        let mut x: Vec<f32> = drawn(batch * channels * height * width, 5)
            .into_iter()
            .map(|v| (v * 8.0).round() / 8.0)
            .collect();
        x[17] = f32::NAN;
        // The CNN's 2×2 pool, an overlapping 3×3 with padding, and ceil mode's partial windows.
        for geometry in [
            (2, 2, 0, false),
            (3, 1, 1, false),
            (3, 2, 1, true),
            (2, 2, 0, true),
        ] {
            let (kernel, stride, pad, ceil) = geometry;
            let mut options = MaxPoolOptions::new([kernel; 2]);
            options.stride = [stride; 2];
            options.padding = [(pad, pad); 2];
            options.ceil_mode = ceil;
            let input = Tensor::<4>::from_data(
                TensorData::new(x.clone(), [batch, channels, height, width]),
                &device,
            );
            let (values, indices) = threads.run(|| max_pool2d_with_indices(input, options));
            let values: Vec<f32> = values.into_data().iter::<f32>().collect();
            let indices: Vec<i64> = indices.into_data().iter::<i64>().collect();
            let (want_values, want_indices) =
                direct_max_pool(&x, [batch * channels, height, width], geometry);
            assert_eq!(indices, want_indices, "{geometry:?}");
            let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&values), bits(&want_values), "{geometry:?}");
        }
    }

    #[test]
    fn the_cpu_engines_convolutions_and_their_gradients_are_the_direct_sums() {
        use burn::tensor::module::conv2d;
        use burn::tensor::ops::ConvOptions;
        use burn::tensor::{Device, Tensor, TensorData};
        let device = Device::flex().autodiff();
        let threads = CpuThreads::new(true);
        // Kiln's 3×3 layers, a strided and dilated one, a wide kernel, a grey first layer, a
        // grouped one (the patch leaves other groups to Burn's own path), and depthwise ones
        // (the patch's direct convolution and gradients): MobileNet's 3×3 plain and strided, a
        // dilated one, ConvNeXt's 7×7 padded by 3, EfficientNet's 5×5 strided on an odd side.
        let cases: [Case; 11] = [
            (3, 8, 9, 6, 3, 1, 1, 1, 1),
            (2, 12, 11, 5, 3, 2, 1, 1, 1),
            (2, 6, 12, 4, 3, 1, 2, 2, 1),
            (2, 5, 13, 3, 5, 2, 2, 1, 1),
            (4, 1, 10, 8, 3, 1, 1, 1, 1),
            (2, 6, 8, 6, 3, 1, 1, 1, 3),
            (3, 6, 9, 6, 3, 1, 1, 1, 6),
            (2, 8, 12, 8, 3, 2, 1, 1, 8),
            (2, 5, 11, 5, 3, 1, 2, 2, 5),
            (2, 4, 14, 4, 7, 1, 3, 1, 4),
            (2, 6, 13, 6, 5, 2, 2, 1, 6),
        ];
        for (i, case) in cases.into_iter().enumerate() {
            let (batch, c_in, side, c_out, k, stride, pad, dilation, groups) = case;
            let seed = 10 * i as u64;
            let x = drawn(batch * c_in * side * side, seed + 1);
            let w = drawn(c_out * c_in / groups * k * k, seed + 2);
            let bias = drawn(c_out, seed + 3);
            let [y_ref, dx_ref, dw_ref, db_ref] = direct_conv(case, &x, &w, &bias, seed + 4);
            let tensor = |values: &[f32], shape: Vec<usize>| {
                Tensor::<4>::from_data(TensorData::new(values.to_vec(), shape), &device)
                    .require_grad()
            };
            let xt = tensor(&x, vec![batch, c_in, side, side]);
            let wt = tensor(&w, vec![c_out, c_in / groups, k, k]);
            let bt = Tensor::<1>::from_data(TensorData::new(bias.clone(), [c_out]), &device)
                .require_grad();
            let options = ConvOptions::new([stride; 2], [pad; 2], [dilation; 2], groups);
            let (y, dx, dw, db) = threads.run(|| {
                let y = conv2d(xt.clone(), wt.clone(), Some(bt.clone()), options);
                let dy = Tensor::<4>::from_data(
                    TensorData::new(drawn(y_ref.len(), seed + 4), y.dims().to_vec()),
                    &device,
                );
                let grads = (y.clone() * dy).sum().backward();
                let grad = |t: &Tensor<4>| values(t.grad(&grads).expect("a gradient"));
                let db = values(bt.grad(&grads).expect("a bias gradient"));
                (values(y), grad(&xt), grad(&wt), db)
            });
            for (what, got, want) in [
                ("output", y, y_ref),
                ("input gradient", dx, dx_ref),
                ("weight gradient", dw, dw_ref),
                ("bias gradient", db, db_ref),
            ] {
                let gap = largest_gap(&got, &want);
                assert!(gap < 1e-4, "case {i} {case:?}: {what} off by {gap}");
            }
        }
    }

    #[test]
    fn the_cpu_engines_products_are_the_same_bits_on_one_thread_and_on_every_core() {
        use burn::tensor::{Device, Tensor, TensorData};
        let device = Device::flex();
        // fashion-mlp's first layer and its gradients' shapes: cut into strips on a pool of
        // several threads, whole on one.
        let product = |m: usize, k: usize, n: usize, transposed: bool| {
            let a = Tensor::<2>::from_data(TensorData::new(drawn(m * k, 7), [m, k]), &device);
            let b = Tensor::<2>::from_data(TensorData::new(drawn(k * n, 8), [k, n]), &device);
            match transposed {
                false => values(a.matmul(b)),
                true => values(b.transpose().matmul(a.transpose())),
            }
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let every = CpuThreads::new(true);
        for (m, k, n) in [
            (64, 784, 512),
            (512, 64, 512),
            (784, 64, 512),
            (64, 512, 10),
        ] {
            for transposed in [false, true] {
                let alone = one.install(|| product(m, k, n, transposed));
                let cut = every.run(|| product(m, k, n, transposed));
                assert!(alone == cut, "[{m}×{k}]·[{k}×{n}], transposed {transposed}");
            }
        }
    }

    #[test]
    fn the_cpu_engines_element_wise_ops_on_large_tensors_are_the_same_bits_cut_or_whole() {
        use burn::tensor::activation::relu;
        use burn::tensor::{Device, Tensor, TensorData};
        let device = Device::flex();
        // Above the 128 K elements from which flex (patched) cuts a loop into one piece per
        // thread, and not a multiple of the piece length.
        let len = 300_007;
        let (a, b) = (drawn(len, 11), drawn(len, 12));
        let tensor =
            |v: &[f32]| Tensor::<1>::from_data(TensorData::new(v.to_vec(), [len]), &device);
        type Op = fn(Tensor<1>, Tensor<1>) -> Tensor<1>;
        type Direct = fn(f32, f32) -> f32;
        // Operands still held elsewhere make an op write a new tensor instead of updating one.
        let ops: [(&str, Op, Direct); 7] = [
            ("a - b", |a, b| a - b, |a, b| a - b),
            ("a * b", |a, b| a * b, |a, b| a * b),
            ("a * 0.01", |a, _| a.mul_scalar(0.01), |a, _| a * 0.01),
            (
                "relu(a)",
                |a, _| relu(a),
                |a, _| if a > 0.0 { a } else { 0.0 },
            ),
            (
                "a + b, both held",
                |a, b| (a.clone() + b.clone(), a, b).0,
                |a, b| a + b,
            ),
            (
                "a * 0.01, held",
                |a, _| (a.clone().mul_scalar(0.01), a).0,
                |a, _| a * 0.01,
            ),
            (
                "relu(a), held",
                |a, _| (relu(a.clone()), a).0,
                |a, _| if a > 0.0 { a } else { 0.0 },
            ),
        ];
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let every = CpuThreads::new(true);
        for (name, op, direct) in ops {
            let alone = one.install(|| values(op(tensor(&a), tensor(&b))));
            let cut = every.run(|| values(op(tensor(&a), tensor(&b))));
            let expected: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| direct(x, y)).collect();
            assert!(alone == cut, "{name}: one thread and every core differ");
            assert!(cut == expected, "{name}: not each element's own expression");
        }
    }

    #[test]
    fn a_summary_from_before_the_engine_was_named_still_reads() {
        let old: CpuThreadChoice =
            serde_json::from_str(r#"{"threads":1,"forward_multiply_adds":42795008}"#)
                .expect("an older choice");
        assert_eq!(old.engine, None);
        assert_eq!(old.forward_multiply_adds, Some(42_795_008));
    }
}
