//! Decoupled weight decay for SGD: the weights shrink by `lr × decay` before each gradient step,
//! apart from the gradient, as Keras 3 applies `weight_decay` to every optimizer. Adam's
//! decoupled decay is Burn's AdamW and plain SGD's equals L2, so only SGD with momentum comes
//! here (through momentum an L2 term keeps pulling for steps after the gradient it joined).

use burn::module::{Module, ModuleMapper, Param, ParamGroup, ParamId};
use burn::tensor::Tensor;

use crate::model::Classifier;

/// `model` with every trainable weight multiplied by `1 - rate × decay`, each at its own rate:
/// `lr`, or `lr × scale` outside the head group of a pretrained network's scaled backbone.
pub(super) fn shrink_weights(
    model: Classifier,
    lr: f64,
    decay: f64,
    head_rate: Option<&(ParamGroup, f64)>,
) -> Classifier {
    model.map(&mut Shrink {
        lr,
        decay,
        head_rate,
    })
}

struct Shrink<'a> {
    lr: f64,
    decay: f64,
    head_rate: Option<&'a (ParamGroup, f64)>,
}

impl Shrink<'_> {
    fn factor(&self, id: &ParamId) -> f64 {
        let lr = match self.head_rate {
            Some((head, scale)) if !head.matches(id, None) => self.lr * scale,
            _ => self.lr,
        };
        1.0 - lr * self.decay
    }
}

impl ModuleMapper for Shrink<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let factor = self.factor(&param.id);
        param.map(|tensor| {
            if !tensor.is_require_grad() {
                return tensor;
            }
            // Detached before, so the product is no node of a graph, and after, so the weight
            // is a leaf again (as the optimizer leaves it) that the next backward pass tracks.
            tensor.detach().mul_scalar(factor).detach().require_grad()
        })
    }
}

#[cfg(test)]
mod tests {
    use burn::lr_scheduler::module_lr_scheduler::ModuleLearningRate;
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::optim::GradientsParams;
    use burn::tensor::{Device, Tensor};

    use super::super::step::{build_optimizer, sgd_shrink};
    use super::shrink_weights;
    use crate::config::{OptimizerSpec, WeightDecayMode};
    use crate::data::ImageShape;
    use crate::model::{Classifier, InitScheme, ModelSpec};

    fn model(device: &Device) -> Classifier {
        let shape = ImageShape {
            channels: 1,
            height: 2,
            width: 2,
        };
        "mlp:3"
            .parse::<ModelSpec>()
            .unwrap()
            .init(shape, 2, InitScheme::PytorchDefault, device)
            .unwrap()
    }

    /// Every weight of `model`, in order.
    fn weights(model: &Classifier) -> Vec<f32> {
        struct All(Vec<f32>);
        impl ModuleVisitor for All {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0.extend(param.val().into_data().iter::<f32>());
            }
        }
        let mut all = All(Vec::new());
        model.visit(&mut all);
        all.0
    }

    /// Two steps of `spec` under `mode` from `start` on a loss whose gradient is zero: only the
    /// decay moves the weights.
    fn two_flat_steps(
        start: &Classifier,
        spec: &OptimizerSpec,
        mode: WeightDecayMode,
        lr: f64,
    ) -> Vec<f32> {
        let device = Device::flex().autodiff();
        let mut model = start.clone();
        let mut optimizer = build_optimizer(spec, mode);
        for _ in 0..2 {
            let images = Tensor::<4>::ones([1, 1, 2, 2], &device);
            let loss = model.forward(images).sum().mul_scalar(0.0);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            if let Some(decay) = sgd_shrink(spec, mode) {
                model = shrink_weights(model, lr, decay, None);
            }
            model = optimizer.step(ModuleLearningRate::from(lr), model, grads);
        }
        weights(&model)
    }

    #[test]
    fn decoupled_sgd_decay_shrinks_the_weights_and_stays_out_of_the_momentum() {
        let start_model = model(&Device::flex().autodiff());
        let start = weights(&start_model);
        let (lr, decay) = (0.5, 0.1);
        let sgd = OptimizerSpec::Sgd {
            momentum: 0.9,
            nesterov: false,
            weight_decay: decay,
        };
        let shrink = (1.0 - lr * decay) as f32;
        let decoupled = two_flat_steps(&start_model, &sgd, WeightDecayMode::Decoupled, lr);
        for (w, w0) in decoupled.iter().zip(&start) {
            assert!((w - w0 * shrink * shrink).abs() < 1e-6, "{w} from {w0}");
        }
        // As L2 the decay enters the momentum: the second step also moves by 0.9 of the first.
        let l2 = two_flat_steps(&start_model, &sgd, WeightDecayMode::L2, lr);
        for (w, w0) in l2.iter().zip(&start) {
            let first = w0 * shrink;
            let expected = first - (lr * decay) as f32 * (0.9 * w0 + first);
            assert!((w - expected).abs() < 1e-6, "{w} against {expected}");
        }
    }

    #[test]
    fn decoupled_adam_is_adamw_and_plain_sgd_decay_is_the_same_either_way() {
        let start = model(&Device::flex().autodiff());
        let adam = OptimizerSpec::Adam {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-8,
            weight_decay: 0.1,
        };
        let adamw = OptimizerSpec::AdamW {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-8,
            weight_decay: 0.1,
        };
        assert_eq!(
            two_flat_steps(&start, &adam, WeightDecayMode::Decoupled, 0.5),
            two_flat_steps(&start, &adamw, WeightDecayMode::L2, 0.5)
        );
        assert_ne!(
            two_flat_steps(&start, &adam, WeightDecayMode::Decoupled, 0.5),
            two_flat_steps(&start, &adam, WeightDecayMode::L2, 0.5)
        );
        let plain = OptimizerSpec::Sgd {
            momentum: 0.0,
            nesterov: false,
            weight_decay: 0.1,
        };
        assert_eq!(sgd_shrink(&plain, WeightDecayMode::Decoupled), None);
        let (l2, decoupled) = (
            two_flat_steps(&start, &plain, WeightDecayMode::L2, 0.5),
            two_flat_steps(&start, &plain, WeightDecayMode::Decoupled, 0.5),
        );
        assert_eq!(l2, decoupled);
    }
}
