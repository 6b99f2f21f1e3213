//! Times training steps of Kiln's two reference workloads on one of Burn's CPU engines, the same
//! modules, optimizer and batch as `kiln bench` (random data, so no file is read).
//!
//! usage: kiln-cpu-engines flex|ndarray mlp|cnn [STEPS]
//!        kiln-cpu-engines gemm
//! Prints one line: engine, workload, rayon threads, median and mean ms per step (after three
//! warm-up steps; the loss is read back once per ten steps, as the Kiln loop reads its sums).
//!
//! `gemm` times the gemm crate on one thread, as the patched flex calls it for the CNN's
//! convolutions (one image's forward product per call), beside a large square product: how
//! far these shapes are from the best gemm does on this CPU.

use std::time::Instant;

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d};
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Distribution, Int, Tensor};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: usize = 64;

/// `fashion-mlp`: 784-512-512-10, ReLU.
#[derive(Module, Debug)]
struct Mlp {
    layers: Vec<Linear>,
}

impl Mlp {
    fn new(device: &Device) -> Self {
        let sizes = [784, 512, 512, 10];
        let layers = sizes
            .windows(2)
            .map(|w| LinearConfig::new(w[0], w[1]).init(device))
            .collect();
        Self { layers }
    }

    fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x: Tensor<2> = images.flatten(1, 3);
        let last = self.layers.len() - 1;
        for (i, layer) in self.layers.iter().enumerate() {
            x = layer.forward(x);
            if i < last {
                x = relu(x);
            }
        }
        x
    }
}

/// Kiln's `cnn`: conv3x3 32, 32, pool, conv3x3 64, 64, pool, fc 128, fc 10.
#[derive(Module, Debug)]
struct Cnn {
    convs: Vec<Conv2d>,
    pool: MaxPool2d,
    fc1: Linear,
    fc2: Linear,
}

impl Cnn {
    fn new(device: &Device) -> Self {
        let conv = |i, o| {
            Conv2dConfig::new([i, o], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(device)
        };
        Self {
            convs: vec![conv(1, 32), conv(32, 32), conv(32, 64), conv(64, 64)],
            pool: MaxPool2dConfig::new([2, 2]).init(),
            fc1: LinearConfig::new(64 * 7 * 7, 128).init(device),
            fc2: LinearConfig::new(128, 10).init(device),
        }
    }

    fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = images;
        for (i, layer) in self.convs.iter().enumerate() {
            x = relu(layer.forward(x));
            if i % 2 == 1 {
                x = self.pool.forward(x);
            }
        }
        let x: Tensor<2> = x.flatten(1, 3);
        self.fc2.forward(relu(self.fc1.forward(x)))
    }
}

/// Steps `model` `steps` times and returns each step's seconds.
fn time_steps<M>(
    mut model: M,
    forward: impl Fn(&M, Tensor<4>) -> Tensor<2>,
    mut optimizer: ModuleOptimizer,
    lr: f64,
    device: &Device,
    steps: usize,
) -> Vec<f64>
where
    M: Module,
{
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    let images = Tensor::<4>::random([BATCH, 1, 28, 28], Distribution::Default, device);
    let labels = Tensor::<1, Int>::random([BATCH], Distribution::Uniform(0.0, 10.0), device);
    let mut secs = Vec::with_capacity(steps);
    let mut total = Tensor::<1>::zeros([1], device);
    for step in 0..steps + 3 {
        let started = Instant::now();
        let logits = forward(&model, images.clone());
        let loss = loss_fn.forward(logits, labels.clone());
        total = total + loss.clone().detach();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optimizer.step(lr, model, grads);
        if step % 10 == 9 {
            let _: Vec<f32> = total.clone().into_data().to_vec().unwrap();
        }
        if step >= 3 {
            secs.push(started.elapsed().as_secs_f64());
        }
    }
    let _: Vec<f32> = total.into_data().to_vec().unwrap();
    secs
}

/// GFLOP/s of `dst[m, n] = lhs[m, k] · rhs[k, n]` (row-major) on one thread, best of a few
/// timed rounds of `calls` products.
fn gemm_gflops(m: usize, n: usize, k: usize, calls: usize) -> f64 {
    let lhs: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.1).collect();
    let rhs: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.1).collect();
    let mut dst = vec![0.0f32; m * n];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let started = Instant::now();
        for _ in 0..calls {
            // SAFETY: each slice holds exactly the elements its strides reach.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    dst.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    lhs.as_ptr(),
                    1,
                    k as isize,
                    rhs.as_ptr(),
                    1,
                    n as isize,
                    1.0f32,
                    1.0f32,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    2.0 * (m * n * k * calls) as f64 / best / 1e9
}

/// The `gemm` mode: the CNN's per-image forward products and a square one.
fn gemm_floor() {
    let shapes = [
        ("conv2 forward, one image (32 x 784 x 288)", 32, 784, 288, 64),
        ("conv3 forward, one image (64 x 196 x 288)", 64, 196, 288, 64),
        ("conv4 forward, one image (64 x 196 x 576)", 64, 196, 576, 64),
        ("conv2 weight gradient, one image (32 x 288 x 784)", 32, 288, 784, 64),
        ("conv2 input gradient, one image (784 x 288 x 32)", 784, 288, 32, 64),
        ("square 1024 x 1024 x 1024", 1024, 1024, 1024, 1),
    ];
    for (name, m, n, k, calls) in shapes {
        let gflops = gemm_gflops(m, n, k, calls);
        println!("{{\"gemm\":\"{name}\",\"threads\":1,\"gflops\":{gflops:.1}}}");
    }
}

#[allow(deprecated)] // burn-ndarray is deprecated in 0.22; measuring it is the point.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("gemm") {
        gemm_floor();
        return;
    }
    let usage = "usage: kiln-cpu-engines flex|ndarray mlp|cnn [STEPS]";
    let (Some(engine), Some(workload)) = (args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let steps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let device = match engine.as_str() {
        "flex" => Device::flex(),
        "ndarray" => Device::ndarray(),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    .autodiff();
    let secs = match workload.as_str() {
        "mlp" => time_steps(
            Mlp::new(&device),
            Mlp::forward,
            SgdConfig::new().init(),
            0.01,
            &device,
            steps,
        ),
        "cnn" => time_steps(
            Cnn::new(&device),
            Cnn::forward,
            AdamConfig::new().init(),
            1e-3,
            &device,
            steps,
        ),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let mut sorted = secs.clone();
    sorted.sort_by(f64::total_cmp);
    let median_ms = sorted[sorted.len() / 2] * 1e3;
    let mean_ms = secs.iter().sum::<f64>() / secs.len() as f64 * 1e3;
    let blas = if cfg!(feature = "openblas") { "+openblas" } else { "" };
    println!(
        "{{\"engine\":\"{engine}{blas}\",\"workload\":\"{workload}\",\"threads\":{},\"steps\":{},\"median_step_ms\":{median_ms:.3},\"mean_step_ms\":{mean_ms:.3}}}",
        rayon_threads(),
        secs.len()
    );
}

fn rayon_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
