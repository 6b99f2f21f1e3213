//! Fully connected network on flattened images.

use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::tensor::activation::{gelu, relu, tanh};
use burn::tensor::{Device, Tensor};

use super::layers::linear;
use super::{Activation, LayerDefaults};

/// Multilayer perceptron: flatten, then hidden Linear + activation (+ dropout) layers, then a
/// Linear to the class logits.
#[derive(Module, Debug)]
pub struct Mlp {
    /// Hidden layers, input side first.
    pub hidden: Vec<Linear>,
    /// Maps the last hidden layer (or the input) to class logits.
    pub output: Linear,
    /// Present only when the spec's dropout is above zero, so a plain MLP pays nothing for it.
    pub dropout: Option<Dropout>,
    /// Nonlinearity after each hidden layer.
    #[module(skip)]
    pub activation: Activation,
}

impl Mlp {
    /// Builds the layers for `inputs` features; the spec has been validated.
    pub(crate) fn new(
        inputs: usize,
        widths: &[usize],
        activation: Activation,
        dropout: f64,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let mut hidden = Vec::with_capacity(widths.len());
        let mut previous = inputs;
        for &width in widths {
            hidden.push(linear(previous, width, layers, device));
            previous = width;
        }
        Mlp {
            hidden,
            output: linear(previous, classes, layers, device),
            dropout: (dropout > 0.0).then(|| DropoutConfig::new(dropout).init()),
            activation,
        }
    }

    /// `[batch, C, H, W]` images to `[batch, classes]` logits.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x: Tensor<2> = images.flatten(1, 3);
        for layer in &self.hidden {
            x = apply(self.activation, layer.forward(x));
            if let Some(dropout) = &self.dropout {
                x = dropout.forward(x);
            }
        }
        self.output.forward(x)
    }
}

/// Applies `activation` element-wise.
pub(crate) fn apply<const D: usize>(activation: Activation, x: Tensor<D>) -> Tensor<D> {
    match activation {
        Activation::Relu => relu(x),
        Activation::Tanh => tanh(x),
        Activation::Gelu => gelu(x),
    }
}
