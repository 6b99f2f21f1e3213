//! torchvision's ViT-B/16 (Dosovitskiy et al., 2021), layer for layer: 16×16 patches embedded by
//! a stride-16 convolution, a class token, learned position embeddings, twelve pre-norm encoder
//! blocks of multi-head self-attention and a GELU MLP, and a linear head on the class token.
//!
//! The attention keeps PyTorch's `nn.MultiheadAttention` parameters as they are
//! (`in_proj_weight` `[3D, D]`, `in_proj_bias`, `out_proj`), so torchvision's files load and
//! leave with no tensor split or renamed.

use burn::module::{Module, Param};
use burn::nn::conv::Conv2d;
use burn::nn::{Initializer, LayerNorm, Linear};
use burn::tensor::activation::{gelu, softmax};
use burn::tensor::module::interpolate;
use burn::tensor::ops::{InterpolateMode, InterpolateOptions};
use burn::tensor::{Device, Tensor};

use super::LayerDefaults;
use super::layers::{conv, layer_norm, linear};

/// One ViT's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VitSize {
    /// Side of a square patch in pixels.
    pub patch: usize,
    /// Encoder blocks.
    pub layers: usize,
    /// Attention heads per block.
    pub heads: usize,
    /// Width of every token.
    pub hidden: usize,
    /// Width of each block's MLP.
    pub mlp: usize,
}

impl VitSize {
    /// `vit_b_16`.
    pub const B16: VitSize = VitSize {
        patch: 16,
        layers: 12,
        heads: 12,
        hidden: 768,
        mlp: 3072,
    };
}

/// Multi-head self-attention with PyTorch's packed input projection.
#[derive(Module, Debug)]
pub struct SelfAttention {
    /// Query, key and value projections stacked, `[3D, D]`, PyTorch's layout.
    pub in_proj_weight: Param<Tensor<2>>,
    /// Their biases, `[3D]`.
    pub in_proj_bias: Param<Tensor<1>>,
    /// The projection of the joined heads.
    pub out_proj: Linear,
    /// Heads the width splits into.
    pub heads: usize,
}

impl SelfAttention {
    fn new(hidden: usize, heads: usize, layers: LayerDefaults, device: &Device) -> Self {
        // PyTorch draws in_proj_weight Xavier-uniform and zeroes both biases.
        let bound = (6.0 / (4 * hidden) as f64).sqrt();
        let uniform = Initializer::Uniform {
            min: -bound,
            max: bound,
        };
        let mut out_proj = linear(hidden, hidden, layers, device);
        out_proj.bias = Some(Initializer::Zeros.init([hidden], device));
        SelfAttention {
            in_proj_weight: uniform.init([3 * hidden, hidden], device),
            in_proj_bias: Initializer::Zeros.init([3 * hidden], device),
            out_proj,
            heads,
        }
    }

    /// `[batch, tokens, D]` attended to itself: softmax(QKᵀ/√d)V per head, heads joined and
    /// projected.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [batch, tokens, width] = x.dims();
        let head_width = width / self.heads;
        let packed = x
            .reshape([batch * tokens, width])
            .matmul(self.in_proj_weight.val().transpose())
            + self.in_proj_bias.val().reshape([1, 3 * width]);
        let heads = |part: usize| {
            packed
                .clone()
                .slice([0..batch * tokens, part * width..(part + 1) * width])
                .reshape([batch, tokens, self.heads, head_width])
                .swap_dims(1, 2)
        };
        let (query, key, value) = (heads(0), heads(1), heads(2));
        let scale = 1.0 / (head_width as f64).sqrt();
        let weights = softmax(query.matmul(key.swap_dims(2, 3)) * scale, 3);
        let joined = weights
            .matmul(value)
            .swap_dims(1, 2)
            .reshape([batch, tokens, width]);
        self.out_proj.forward(joined)
    }
}

/// A pre-norm encoder block: `x + attention(LN(x))`, then `+ MLP(LN(·))`.
#[derive(Module, Debug)]
pub struct EncoderBlock {
    /// Layer norm before the attention.
    pub ln_1: LayerNorm,
    /// Multi-head self-attention.
    pub self_attention: SelfAttention,
    /// Layer norm before the MLP.
    pub ln_2: LayerNorm,
    /// The MLP's first linear layer (torchvision's `mlp.0`), followed by GELU.
    pub mlp_in: Linear,
    /// The MLP's second linear layer (`mlp.3`).
    pub mlp_out: Linear,
}

impl EncoderBlock {
    pub(crate) fn new(size: VitSize, layers: LayerDefaults, device: &Device) -> Self {
        EncoderBlock {
            ln_1: layer_norm(size.hidden, device),
            self_attention: SelfAttention::new(size.hidden, size.heads, layers, device),
            ln_2: layer_norm(size.hidden, device),
            mlp_in: linear(size.hidden, size.mlp, layers, device),
            mlp_out: linear(size.mlp, size.hidden, layers, device),
        }
    }

    /// The block's output for `[batch, tokens, D]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let x = self.self_attention.forward(self.ln_1.forward(x.clone())) + x;
        let y = self
            .mlp_out
            .forward(gelu(self.mlp_in.forward(self.ln_2.forward(x.clone()))));
        x + y
    }
}

/// The position embedding, the blocks and the closing layer norm.
#[derive(Module, Debug)]
pub struct Encoder {
    /// One learned vector per token, class token first, `[1, 1 + patches, D]`.
    pub pos_embedding: Param<Tensor<3>>,
    /// The encoder blocks (torchvision's `layers.encoder_layer_N`).
    pub layers: Vec<EncoderBlock>,
    /// Layer norm after the last block.
    pub ln: LayerNorm,
}

/// torchvision's VisionTransformer: `conv_proj`, `class_token`, `encoder`, `heads.head`.
#[derive(Module, Debug)]
pub struct VisionTransformer {
    /// Patch embedding: a `patch`×`patch` convolution of stride `patch`, with bias.
    pub conv_proj: Conv2d,
    /// The learned token whose final state the head reads, `[1, 1, D]`.
    pub class_token: Param<Tensor<3>>,
    /// The transformer encoder.
    pub encoder: Encoder,
    /// Class-token features to class logits (torchvision's `heads.head`).
    pub head: Linear,
    /// Patches along the height and the width of an image.
    pub grid: [usize; 2],
}

impl VisionTransformer {
    /// A ViT of `size` for `[channels, height, width]` images (sides multiples of the patch).
    pub(crate) fn new(
        size: VitSize,
        [channels, height, width]: [usize; 3],
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let grid = [height / size.patch, width / size.patch];
        let tokens = 1 + grid[0] * grid[1];
        let normal = Initializer::Normal {
            mean: 0.0,
            std: 0.02,
        };
        VisionTransformer {
            conv_proj: conv(
                [channels, size.hidden],
                size.patch,
                size.patch,
                0,
                true,
                layers,
                device,
            ),
            class_token: Initializer::Zeros.init([1, 1, size.hidden], device),
            encoder: Encoder {
                pos_embedding: normal.init([1, tokens, size.hidden], device),
                layers: (0..size.layers)
                    .map(|_| EncoderBlock::new(size, layers, device))
                    .collect(),
                ln: layer_norm(size.hidden, device),
            },
            head: linear(size.hidden, classes, layers, device),
            grid,
        }
    }

    /// The class token's final state, `[batch, D]`.
    pub fn features(&self, images: Tensor<4>) -> Tensor<2> {
        let patches = self.conv_proj.forward(images);
        let [batch, hidden, rows, columns] = patches.dims();
        let patches = patches
            .reshape([batch, hidden, rows * columns])
            .swap_dims(1, 2);
        let class = self.class_token.val().expand([batch, 1, hidden]);
        let mut x = Tensor::cat(vec![class, patches], 1) + self.encoder.pos_embedding.val();
        for block in &self.encoder.layers {
            x = block.forward(x);
        }
        let x = self.encoder.ln.forward(x);
        x.slice([0..batch, 0..1, 0..hidden])
            .reshape([batch, hidden])
    }

    /// The torchvision ↔ Kiln prefixes of a network of `size`.
    pub fn prefixes(size: VitSize) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        for layer in 0..size.layers {
            let torch = format!("encoder.layers.encoder_layer_{layer}.");
            let kiln = format!("encoder.layers.{layer}.");
            for (from, to) in [
                ("ln_1.", "ln_1."),
                ("self_attention.", "self_attention."),
                ("ln_2.", "ln_2."),
                ("mlp.0.", "mlp_in."),
                ("mlp.3.", "mlp_out."),
            ] {
                pairs.push((format!("{torch}{from}"), format!("{kiln}{to}")));
            }
        }
        pairs.push(("heads.head.".to_owned(), "head.".to_owned()));
        pairs
    }
}

/// A position embedding `[1, 1 + h·w, D]` for an `[h, w]` patch grid resized to `grid`: the class
/// token's row kept, the patches' rows resampled bicubically with corners aligned, as
/// torchvision's `interpolate_embeddings` does when a ViT meets another image size.
pub fn resize_position_embedding(
    embedding: Tensor<3>,
    grid: [usize; 2],
) -> Result<Tensor<3>, String> {
    let [one, tokens, hidden] = embedding.dims();
    let patches = tokens.saturating_sub(1);
    let side = (patches as f64).sqrt().round() as usize;
    if one != 1 || side * side != patches || side == 0 {
        return Err(format!(
            "its position embedding has shape [{one}, {tokens}, {hidden}], not one class token and a square grid of patches"
        ));
    }
    if [side, side] == grid {
        return Ok(embedding);
    }
    let class = embedding.clone().slice([0..1, 0..1, 0..hidden]);
    let image = embedding
        .slice([0..1, 1..tokens, 0..hidden])
        .swap_dims(1, 2)
        .reshape([1, hidden, side, side]);
    let options = InterpolateOptions::new(InterpolateMode::Bicubic)
        .with_align_corners(true)
        .with_output_size(grid);
    let resized = interpolate(image, options)
        .reshape([1, hidden, grid[0] * grid[1]])
        .swap_dims(1, 2);
    Ok(Tensor::cat(vec![class, resized], 1))
}
