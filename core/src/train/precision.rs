//! Mixed-precision steps: f32 master weights that the optimizer updates, f16 arithmetic in the
//! forward and backward passes, and a loss scale that keeps small f16 gradients from flushing to
//! zero.
//!
//! Each step casts the parameters to f16 on the autodiff graph ([`CastParams`]), so their
//! gradients reach the f32 masters as f32 (Burn's cast backward casts back). The loss is
//! multiplied by the scale before `backward` and the gradients are divided by it after, on the
//! device. A step whose gradients overflowed applies zero gradients instead, decided on the
//! device too, so no step waits for the host: the overflow count rides along with the metrics
//! readback, which then halves the scale. A long stretch without overflow doubles it.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{FloatDType, Int, Tensor};
use serde::{Deserialize, Serialize};

use crate::config::Precision;
use crate::model::Classifier;

/// The first loss scale: lifts gradients of 1e-6 well into f16's normal range (from 6.1e-5) while
/// a first step's logit gradients (at most 1 per sample) stay far below f16's 65 504.
pub const INITIAL_LOSS_SCALE: f64 = 4096.0;
/// Overflow-free steps after which the scale doubles (PyTorch's `GradScaler` waits 2000).
pub const GROWTH_INTERVAL_STEPS: u64 = 2000;
/// The scale never grows past 2^24: beyond it even f32 gradient sums lose their low bits.
const MAX_LOSS_SCALE: f64 = 16_777_216.0;
/// The scale never drops below 1: an overflow at scale 1 is the forward pass itself overflowing,
/// which the non-finite-loss check reports.
const MIN_LOSS_SCALE: f64 = 1.0;
/// At most 2^3 = 8× smaller per readback: the overflowed steps of one window all saw one scale.
const MAX_HALVINGS_PER_READBACK: u64 = 3;

/// How a run's steps compute, and in f16 the loss scale's state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StepPrecision {
    /// Everything in f32.
    Full,
    /// f16 arithmetic, f32 masters, a dynamic loss scale.
    Mixed(LossScale),
}

impl StepPrecision {
    /// A run's precision from its start, or from a checkpoint's loss scale.
    pub(crate) fn new(precision: Precision, resumed: Option<&LossScale>) -> Self {
        match precision {
            Precision::F32 => Self::Full,
            Precision::F16 => Self::Mixed(resumed.cloned().unwrap_or_else(LossScale::new)),
        }
    }

    /// The loss scale's state for a checkpoint; none in f32.
    pub(crate) fn loss_scale(&self) -> Option<LossScale> {
        match self {
            Self::Full => None,
            Self::Mixed(scale) => Some(scale.clone()),
        }
    }

    /// Logits in f32 whatever the arithmetic, so the loss and the metrics are always f32.
    pub(crate) fn forward(&self, model: &Classifier, images: Tensor<4>) -> Tensor<2> {
        match self {
            Self::Full => model.forward(images),
            Self::Mixed(_) => {
                let half = model.clone().map(&mut CastParams::to(FloatDType::F16));
                half.forward(images.cast(FloatDType::F16))
                    .cast(FloatDType::F32)
            }
        }
    }

    /// The gradients of `loss` for the optimizer. In f16 they are unscaled, and the second value
    /// is a `[1]` tensor that is 1 when this step overflowed (its gradients are then all zero).
    pub(crate) fn gradients(
        &self,
        loss: Tensor<1>,
        model: &Classifier,
    ) -> (GradientsParams, Option<Tensor<1, Int>>) {
        match self {
            Self::Full => (GradientsParams::from_grads(loss.backward(), model), None),
            Self::Mixed(scale) => {
                let scaled = loss.mul_scalar(scale.scale);
                let grads = GradientsParams::from_grads(scaled.backward(), model);
                unscale(grads, model, scale.scale)
            }
        }
    }

    /// Takes what a readback saw: `overflowed` of the last `steps` steps overflowed.
    pub(crate) fn observe(&mut self, overflowed: u64, steps: u64) {
        if let Self::Mixed(scale) = self {
            scale.observe(overflowed, steps);
        }
    }

    /// The loss scale's figures for the run summary; none in f32.
    pub(crate) fn report(&self) -> Option<LossScaleReport> {
        match self {
            Self::Full => None,
            Self::Mixed(scale) => Some(LossScaleReport {
                final_scale: scale.scale,
                overflowed_steps: scale.overflowed_steps,
            }),
        }
    }
}

/// The dynamic loss scale of an f16 run; kept in checkpoints so a resumed run scales as the
/// uninterrupted one would have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossScale {
    scale: f64,
    clean_steps: u64,
    overflowed_steps: u64,
}

impl LossScale {
    fn new() -> Self {
        Self {
            scale: INITIAL_LOSS_SCALE,
            clean_steps: 0,
            overflowed_steps: 0,
        }
    }

    fn observe(&mut self, overflowed: u64, steps: u64) {
        if overflowed > 0 {
            self.overflowed_steps += overflowed;
            let halvings = overflowed.min(MAX_HALVINGS_PER_READBACK) as i32;
            self.scale = (self.scale / 2f64.powi(halvings)).max(MIN_LOSS_SCALE);
            self.clean_steps = 0;
            return;
        }
        self.clean_steps += steps;
        if self.clean_steps >= GROWTH_INTERVAL_STEPS {
            self.scale = (self.scale * 2.0).min(MAX_LOSS_SCALE);
            self.clean_steps = 0;
        }
    }
}

/// What an f16 run's loss scale did, for `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossScaleReport {
    /// The scale at the end of the run.
    pub final_scale: f64,
    /// Steps whose gradients overflowed f16 and were applied as zero.
    pub overflowed_steps: u64,
}

/// How Burn's derived `Module::map` names batch norm when it enters one of its fields.
const BATCH_NORM: &str = "Struct:BatchNorm";

/// Casts every float parameter outside batch norm to one float type. `Param::map` keeps the cast
/// on the autodiff graph, so the cast copy's gradients flow back to the original parameters.
struct CastParams {
    dtype: FloatDType,
    /// How deep the mapping is inside batch norm layers (0: outside every one).
    batch_norm_depth: usize,
}

impl CastParams {
    fn to(dtype: FloatDType) -> Self {
        Self {
            dtype,
            batch_norm_depth: 0,
        }
    }
}

impl ModuleMapper for CastParams {
    fn enter_module(&mut self, _name: &str, container_type: &str) {
        if container_type == BATCH_NORM {
            self.batch_norm_depth += 1;
        }
    }

    fn exit_module(&mut self, _name: &str, container_type: &str) {
        if container_type == BATCH_NORM {
            self.batch_norm_depth -= 1;
        }
    }

    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        // Batch norm stays f32 (`model::layers::normalize`); its running statistics are shared
        // state that a cast copy would overwrite.
        if self.batch_norm_depth > 0 {
            return param;
        }
        let dtype = self.dtype;
        param.map(|tensor| tensor.cast(dtype))
    }
}

/// Adds up every gradient into one `[1]` tensor: it is finite exactly when no gradient holds an
/// infinity or a NaN (short of finite sums past f32's range, which no real gradient reaches).
struct SumGradients<'a> {
    grads: &'a GradientsParams,
    total: Option<Tensor<1>>,
}

impl ModuleVisitor for SumGradients<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(grad) = self.grads.get::<D>(param.id) {
            let sum = grad.sum();
            self.total = Some(match self.total.take() {
                Some(total) => total + sum,
                None => sum,
            });
        }
    }
}

/// Multiplies every gradient by `factor` (`1/scale`, or 0 for an overflowed step), with its
/// non-finite elements zeroed first so that 0 × inf does not leave a NaN behind.
struct ScaleGradients<'a> {
    grads: &'a mut GradientsParams,
    factor: Tensor<1>,
}

impl ModuleVisitor for ScaleGradients<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(grad) = self.grads.remove::<D>(param.id) {
            let non_finite = grad.clone().is_finite().bool_not();
            let factor = self.factor.clone().reshape([1; D]);
            self.grads
                .register(param.id, grad.mask_fill(non_finite, 0.0) * factor);
        }
    }
}

/// Divides the gradients by `scale`, or zeroes them all when any overflowed; also returns 1 for an
/// overflowed step and 0 for a clean one, on the device.
fn unscale(
    mut grads: GradientsParams,
    model: &Classifier,
    scale: f64,
) -> (GradientsParams, Option<Tensor<1, Int>>) {
    let mut sums = SumGradients {
        grads: &grads,
        total: None,
    };
    model.visit(&mut sums);
    let Some(total) = sums.total else {
        // No parameter has a gradient: nothing can have overflowed.
        return (grads, None);
    };
    let finite = total.clone().is_finite();
    let factor = total.zeros_like().mask_fill(finite.clone(), 1.0 / scale);
    model.visit(&mut ScaleGradients {
        grads: &mut grads,
        factor,
    });
    (grads, Some(finite.bool_not().int()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::loss::CrossEntropyLossConfig;
    use burn::tensor::{Device, Distribution, TensorData};

    use crate::data::ImageShape;
    use crate::model::{InitScheme, ModelSpec};

    /// Every parameter's gradient, flattened, in visiting order.
    struct Collect<'a> {
        grads: &'a GradientsParams,
        values: Vec<Vec<f32>>,
    }

    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(grad) = self.grads.get::<D>(param.id) {
                self.values.push(grad.into_data().iter::<f32>().collect());
            }
        }
    }

    /// One step's gradients and overflow flag for `model` on a fixed batch.
    fn step(
        precision: &StepPrecision,
        model: &Classifier,
        device: &Device,
    ) -> (Vec<Vec<f32>>, Option<i64>) {
        let images = Tensor::<4>::random([8, 1, 4, 4], Distribution::Default, device);
        let labels = Tensor::<1, Int>::from_data(
            TensorData::new(vec![0_i32, 1, 2, 0, 1, 2, 0, 1], [8]),
            device,
        );
        let logits = precision.forward(model, images);
        assert_eq!(
            logits.dtype(),
            burn::tensor::DType::F32,
            "the loss is taken in f32"
        );
        let loss = CrossEntropyLossConfig::new()
            .init(device)
            .forward(logits, labels);
        let (grads, overflowed) = precision.gradients(loss, model);
        let mut collect = Collect {
            grads: &grads,
            values: Vec::new(),
        };
        model.visit(&mut collect);
        let overflowed = overflowed.and_then(|flag| flag.into_data().iter::<i64>().next());
        (collect.values, overflowed)
    }

    #[test]
    fn mixed_gradients_match_f32_ones_and_an_overflow_zeroes_them() {
        let device = Device::flex().autodiff();
        let model = "mlp:16"
            .parse::<ModelSpec>()
            .expect("spec")
            .init(
                ImageShape {
                    channels: 1,
                    height: 4,
                    width: 4,
                },
                3,
                InitScheme::PytorchDefault,
                &device,
            )
            .expect("model");
        device.seed(7);
        let (full, none) = step(&StepPrecision::Full, &model, &device);
        assert_eq!(none, None, "f32 steps have no overflow flag");
        device.seed(7);
        let (mixed, clean) = step(&StepPrecision::new(Precision::F16, None), &model, &device);
        assert_eq!(clean, Some(0));
        assert_eq!(full.len(), 4, "two weights and two biases");
        for (f32_grad, f16_grad) in full.iter().zip(&mixed) {
            let largest = f32_grad.iter().fold(0f32, |m, g| m.max(g.abs()));
            for (a, b) in f32_grad.iter().zip(f16_grad) {
                // f16 keeps 11 significant bits: about 3 decimal digits of the largest gradient.
                assert!((a - b).abs() <= 2e-3 * largest + 1e-6, "{a} vs {b}");
            }
        }
        // A scale far past f16's range turns the logit gradients into infinities.
        let too_large = StepPrecision::Mixed(LossScale {
            scale: 1e30,
            clean_steps: 0,
            overflowed_steps: 0,
        });
        device.seed(7);
        let (zeroed, overflowed) = step(&too_large, &model, &device);
        assert_eq!(overflowed, Some(1));
        assert!(zeroed.iter().flatten().all(|g| *g == 0.0), "{zeroed:?}");
    }

    #[test]
    fn an_overflow_halves_the_scale_and_a_clean_stretch_doubles_it() {
        let mut scale = LossScale::new();
        scale.observe(1, 10);
        assert_eq!(scale.scale, INITIAL_LOSS_SCALE / 2.0);
        assert_eq!(scale.overflowed_steps, 1);
        // Many overflows in one window all saw the same scale: at most 8× smaller at once.
        scale.observe(50, 50);
        assert_eq!(scale.scale, INITIAL_LOSS_SCALE / 16.0);
        assert_eq!(scale.overflowed_steps, 51);
        scale.observe(0, GROWTH_INTERVAL_STEPS - 1);
        assert_eq!(scale.scale, INITIAL_LOSS_SCALE / 16.0);
        scale.observe(0, 1);
        assert_eq!(scale.scale, INITIAL_LOSS_SCALE / 8.0);
    }

    #[test]
    fn the_scale_stays_between_its_bounds() {
        let mut scale = LossScale::new();
        for _ in 0..100 {
            scale.observe(3, 3);
        }
        assert_eq!(scale.scale, MIN_LOSS_SCALE);
        for _ in 0..100 {
            scale.observe(0, GROWTH_INTERVAL_STEPS);
        }
        assert_eq!(scale.scale, MAX_LOSS_SCALE);
    }

    #[test]
    fn f32_runs_have_no_loss_scale() {
        let mut full = StepPrecision::new(Precision::F32, None);
        full.observe(5, 10);
        assert_eq!(full.report(), None);
        let mixed = StepPrecision::new(Precision::F16, None);
        assert_eq!(
            mixed.report(),
            Some(LossScaleReport {
                final_scale: INITIAL_LOSS_SCALE,
                overflowed_steps: 0
            })
        );
    }
}
