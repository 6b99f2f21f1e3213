//! The blocks of EfficientNet, ConvNeXt and ViT at a few channels wide, each against the same
//! arithmetic written out in plain Rust loops from torchvision's definitions.

// A child of the crate's test module: it exists only in the test build.
#![cfg(test)]

use burn::module::{Module, Param};
use burn::nn::LayerNorm;
use burn::nn::conv::Conv2d;
use burn::tensor::{Device, Distribution, Tensor};

use super::super::convnext::CnBlock;
use super::super::efficientnet::{MbConv, MbConvShape, SqueezeExcitation};
use super::super::vit::{EncoderBlock, SelfAttention, VitSize, resize_position_embedding};
use super::super::{LayerDefaults, ModelSpec, TorchvisionArch};
use crate::data::ImageShape;

fn device() -> Device {
    Device::flex()
}

fn values<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .try_into_vec_as::<f32>()
        .expect("f32 readback")
}

fn random<const D: usize>(dims: [usize; D], seed: u64) -> Tensor<D> {
    let device = device();
    device.seed(seed);
    Tensor::random(dims, Distribution::Uniform(-1.0, 1.0), &device)
}

fn assert_close(kiln: &[f32], reference: &[f64], what: &str) {
    assert_eq!(kiln.len(), reference.len(), "{what}: lengths");
    for (at, (k, r)) in kiln.iter().zip(reference).enumerate() {
        assert!(
            (f64::from(*k) - r).abs() < 1e-4,
            "{what}: element {at} is {k} in Kiln, {r} by hand"
        );
    }
}

/// An `[d0, d1, …]` tensor's values as f64, row-major.
fn plain<const D: usize>(tensor: &Tensor<D>) -> Vec<f64> {
    values(tensor.clone()).into_iter().map(f64::from).collect()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn silu(x: f64) -> f64 {
    x * sigmoid(x)
}

/// erf by Abramowitz and Stegun 7.1.26 (error below 1.5e-7), enough for a 1e-4 comparison.
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x < 0.0 { -y } else { y }
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// `y = x·Wᵀ + b` for PyTorch-layout `weight` `[out, in]`.
fn affine(x: &[f64], weight: &[f64], bias: &[f64]) -> Vec<f64> {
    let inputs = x.len();
    bias.iter()
        .enumerate()
        .map(|(o, b)| {
            b + (0..inputs)
                .map(|i| weight[o * inputs + i] * x[i])
                .sum::<f64>()
        })
        .collect()
}

/// A Burn linear layer's `[in, out]` weight in PyTorch's `[out, in]` order, and its bias.
fn torch_linear(layer: &burn::nn::Linear) -> (Vec<f64>, Vec<f64>) {
    let weight = plain(&layer.weight.val().transpose());
    let bias = layer
        .bias
        .as_ref()
        .map(|b| plain(&b.val()))
        .unwrap_or_default();
    (weight, bias)
}

fn layer_norm_by_hand(x: &[f64], norm: &LayerNorm) -> Vec<f64> {
    let gamma = plain(&norm.gamma.val());
    let beta = norm
        .beta
        .as_ref()
        .map(|b| plain(&b.val()))
        .unwrap_or_default();
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64;
    x.iter()
        .enumerate()
        .map(|(i, v)| (v - mean) / (var + 1e-6).sqrt() * gamma[i] + beta[i])
        .collect()
}

/// Random γ and β, so a test sees them used.
fn randomized(mut norm: LayerNorm, seed: u64) -> LayerNorm {
    let [width] = norm.gamma.dims();
    norm.gamma = Param::from_tensor(random([width], seed) * 0.5 + 1.0);
    norm.beta = Some(Param::from_tensor(random([width], seed + 1) * 0.1));
    norm
}

/// A depthwise convolution of `[C, H, W]` with stride 1 and "same" zero padding.
fn depthwise_by_hand(x: &[f64], [c, h, w]: [usize; 3], conv: &Conv2d) -> Vec<f64> {
    let weight = plain(&conv.weight.val());
    let [_, _, k, _] = conv.weight.dims();
    let bias = conv.bias.as_ref().map(|b| plain(&b.val()));
    let half = (k / 2) as isize;
    let mut out = vec![0.0; c * h * w];
    for ch in 0..c {
        for y in 0..h {
            for x_at in 0..w {
                let mut sum = bias.as_ref().map_or(0.0, |b| b[ch]);
                for ky in 0..k {
                    for kx in 0..k {
                        let (sy, sx) = (
                            y as isize + ky as isize - half,
                            x_at as isize + kx as isize - half,
                        );
                        if sy >= 0 && sx >= 0 && (sy as usize) < h && (sx as usize) < w {
                            sum += weight[(ch * k + ky) * k + kx]
                                * x[(ch * h + sy as usize) * w + sx as usize];
                        }
                    }
                }
                out[(ch * h + y) * w + x_at] = sum;
            }
        }
    }
    out
}

#[test]
fn squeeze_excitation_gates_each_channel_by_a_sigmoid_of_all_channels_means() {
    let layers = LayerDefaults::default();
    let se = SqueezeExcitation {
        fc1: super::super::layers::conv([6, 2], 1, 1, 0, true, layers, &device()),
        fc2: super::super::layers::conv([2, 6], 1, 1, 0, true, layers, &device()),
    };
    let x = random([1, 6, 3, 3], 11);
    let kiln = values(se.forward(x.clone()));

    let x = plain(&x);
    let means: Vec<f64> = (0..6)
        .map(|c| x[c * 9..c * 9 + 9].iter().sum::<f64>() / 9.0)
        .collect();
    let weights = |conv: &Conv2d| {
        let [o, i, _, _] = conv.weight.dims();
        (
            plain(&conv.weight.val().reshape([o, i])),
            plain(&conv.bias.as_ref().expect("bias").val()),
        )
    };
    let (w1, b1) = weights(&se.fc1);
    let (w2, b2) = weights(&se.fc2);
    let squeezed: Vec<f64> = affine(&means, &w1, &b1).into_iter().map(silu).collect();
    let gate: Vec<f64> = affine(&squeezed, &w2, &b2)
        .into_iter()
        .map(sigmoid)
        .collect();
    let reference: Vec<f64> = (0..54).map(|i| x[i] * gate[i / 9]).collect();
    assert_close(&kiln, &reference, "squeeze-excitation");
}

#[test]
fn an_mbconv_at_stride_one_adds_its_input_and_at_stride_two_does_not() {
    let layers = LayerDefaults::default();
    let shape = |stride, outputs| MbConvShape {
        inputs: 8,
        outputs,
        expansion: 6,
        kernel: 3,
        stride,
    };
    let same = MbConv::new(shape(1, 8), 0.2, layers, &device());
    assert!(same.residual && same.expand.is_some());
    assert_eq!(same.depthwise.conv.weight.dims(), [48, 1, 3, 3]);
    assert_eq!(
        same.se.fc1.weight.dims(),
        [2, 48, 1, 1],
        "squeezed to a quarter of the input"
    );
    let down = MbConv::new(shape(2, 16), 0.0, layers, &device());
    assert!(!down.residual);
    let first = MbConv::new(
        MbConvShape {
            expansion: 1,
            ..shape(1, 8)
        },
        0.0,
        layers,
        &device(),
    );
    assert!(first.expand.is_none(), "expansion 1 has no 1×1 expansion");

    // In evaluation the block is its branch plus its input, stochastic depth or not.
    let x = random([2, 8, 5, 5], 3);
    let with_input = values(same.valid().forward(x.clone()));
    let branch_only = MbConv {
        residual: false,
        ..same.valid()
    };
    let branch = values(branch_only.forward(x.clone()));
    let x = values(x);
    for at in 0..x.len() {
        assert!((with_input[at] - (branch[at] + x[at])).abs() < 1e-5);
    }
    assert_eq!(
        values(down.valid().forward(Tensor::zeros([1, 8, 6, 6], &device()))).len(),
        16 * 9
    );
}

#[test]
fn a_convnext_block_is_its_input_plus_the_scaled_channels_last_mlp_of_its_depthwise_conv() {
    let (c, h, w) = (4, 5, 5);
    let mut block = CnBlock::new(c, 0.3, LayerDefaults::default(), &device());
    block.norm = randomized(block.norm, 5);
    block.layer_scale = Param::from_tensor(random([c, 1, 1], 6));
    let block = block.valid();
    let x = random([1, c, h, w], 7);
    let kiln = values(block.forward(x.clone()));

    let x = plain(&x);
    let conv = depthwise_by_hand(&x, [c, h, w], &block.dwconv);
    let (w1, b1) = torch_linear(&block.pwconv1);
    let (w2, b2) = torch_linear(&block.pwconv2);
    let scale = plain(&block.layer_scale.val());
    let mut reference = x.clone();
    for pixel in 0..h * w {
        let channels: Vec<f64> = (0..c).map(|ch| conv[ch * h * w + pixel]).collect();
        let normed = layer_norm_by_hand(&channels, &block.norm);
        let hidden: Vec<f64> = affine(&normed, &w1, &b1).into_iter().map(gelu).collect();
        let out = affine(&hidden, &w2, &b2);
        for ch in 0..c {
            reference[ch * h * w + pixel] += scale[ch] * out[ch];
        }
    }
    assert_close(&kiln, &reference, "ConvNeXt block");
}

/// Multi-head self-attention over `tokens` rows of `width`, by hand.
fn attention_by_hand(x: &[Vec<f64>], attention: &SelfAttention) -> Vec<Vec<f64>> {
    let width = x[0].len();
    let heads = attention.heads;
    let head_width = width / heads;
    let w = plain(&attention.in_proj_weight.val());
    let b = plain(&attention.in_proj_bias.val());
    let packed: Vec<Vec<f64>> = x.iter().map(|row| affine(row, &w, &b)).collect();
    let mut joined = vec![vec![0.0; width]; x.len()];
    for head in 0..heads {
        let part = |row: &Vec<f64>, which: usize| {
            let start = which * width + head * head_width;
            row[start..start + head_width].to_vec()
        };
        for (i, row) in packed.iter().enumerate() {
            let query = part(row, 0);
            let scores: Vec<f64> = packed
                .iter()
                .map(|other| {
                    let key = part(other, 1);
                    query.iter().zip(&key).map(|(q, k)| q * k).sum::<f64>()
                        / (head_width as f64).sqrt()
                })
                .collect();
            let top = scores.iter().cloned().fold(f64::MIN, f64::max);
            let exps: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
            let total: f64 = exps.iter().sum();
            for (j, other) in packed.iter().enumerate() {
                let value = part(other, 2);
                for d in 0..head_width {
                    joined[i][head * head_width + d] += exps[j] / total * value[d];
                }
            }
        }
    }
    let (wo, bo) = torch_linear(&attention.out_proj);
    joined.iter().map(|row| affine(row, &wo, &bo)).collect()
}

#[test]
fn a_vit_encoder_block_is_pre_norm_attention_then_a_gelu_mlp_each_added_back() {
    let size = VitSize {
        patch: 4,
        layers: 1,
        heads: 2,
        hidden: 6,
        mlp: 12,
    };
    let mut block = EncoderBlock::new(size, LayerDefaults::default(), &device());
    block.ln_1 = randomized(block.ln_1, 21);
    block.ln_2 = randomized(block.ln_2, 23);
    block.self_attention.in_proj_bias = Param::from_tensor(random([18], 25) * 0.1);
    let block = block.valid();
    let (batch, tokens) = (2, 3);
    let x = random([batch, tokens, 6], 27);
    let kiln = values(block.forward(x.clone()));

    let x = plain(&x);
    let mut reference = Vec::new();
    for image in 0..batch {
        let rows: Vec<Vec<f64>> = (0..tokens)
            .map(|t| x[(image * tokens + t) * 6..(image * tokens + t + 1) * 6].to_vec())
            .collect();
        let normed: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| layer_norm_by_hand(r, &block.ln_1))
            .collect();
        let attended = attention_by_hand(&normed, &block.self_attention);
        let (w1, b1) = torch_linear(&block.mlp_in);
        let (w2, b2) = torch_linear(&block.mlp_out);
        for (row, att) in rows.iter().zip(&attended) {
            let mid: Vec<f64> = row.iter().zip(att).map(|(a, b)| a + b).collect();
            let hidden: Vec<f64> = affine(&layer_norm_by_hand(&mid, &block.ln_2), &w1, &b1)
                .into_iter()
                .map(gelu)
                .collect();
            let out = affine(&hidden, &w2, &b2);
            reference.extend(mid.iter().zip(&out).map(|(a, b)| a + b));
        }
    }
    assert_close(&kiln, &reference, "ViT encoder block");
}

#[test]
fn a_position_embedding_keeps_its_class_token_and_corners_when_resampled() {
    let hidden = 3;
    let embedding = random([1, 1 + 9, hidden], 31);
    let same = resize_position_embedding(embedding.clone(), [3, 3]).expect("a 3×3 grid");
    assert_eq!(
        values(same),
        values(embedding.clone()),
        "the same grid is unchanged"
    );

    let bigger = resize_position_embedding(embedding.clone(), [5, 5]).expect("resampled");
    assert_eq!(bigger.dims(), [1, 26, hidden]);
    let (before, after) = (values(embedding), values(bigger));
    assert_eq!(
        before[..hidden],
        after[..hidden],
        "the class token is not resampled"
    );
    // Corners aligned: the grid's four corner patches keep their vectors exactly.
    for (old, new) in [(0, 0), (2, 4), (6, 20), (8, 24)] {
        for d in 0..hidden {
            let (a, b) = (
                before[(1 + old) * hidden + d],
                after[(1 + new) * hidden + d],
            );
            assert!((a - b).abs() < 1e-5, "corner {old}: {a} against {b}");
        }
    }
    let odd = random([1, 1 + 8, hidden], 33);
    let refused = resize_position_embedding(odd, [2, 2]).expect_err("8 patches are no square");
    assert!(refused.contains("square grid"), "{refused}");
}

#[test]
fn every_new_backbone_has_torchvisions_parameter_count() {
    // torchvision's sum(p.numel() for p in model.parameters()) at 1000 classes.
    let expected = [
        (TorchvisionArch::EfficientNetB0, 5_288_548),
        (TorchvisionArch::EfficientNetB1, 7_794_184),
        (TorchvisionArch::EfficientNetB2, 9_109_994),
        (TorchvisionArch::EfficientNetB3, 12_233_232),
        (TorchvisionArch::ConvNextTiny, 28_589_128),
        (TorchvisionArch::ConvNextSmall, 50_223_688),
        (TorchvisionArch::VitB16, 86_567_656),
    ];
    let colour = ImageShape {
        channels: 3,
        height: 224,
        width: 224,
    };
    for (arch, count) in expected {
        let spec: ModelSpec = arch.spec();
        let model = spec
            .init(colour, 1000, LayerDefaults::default(), &device())
            .expect("builds");
        assert_eq!(model.num_params(), count, "{arch}");
    }
}

#[test]
fn a_vit_takes_only_whole_patches() {
    let spec = TorchvisionArch::VitB16.spec();
    let shape = |side| ImageShape {
        channels: 3,
        height: side,
        width: side,
    };
    assert!(spec.validate(shape(64), 10).is_ok());
    let refused = spec
        .validate(shape(60), 10)
        .expect_err("60 is not a multiple of 16");
    assert!(refused.to_string().contains("multiple of 16"), "{refused}");
}
