//! The ONNX graphs of EfficientNet, ConvNeXt and ViT, one node per layer as the other networks'
//! are: layer norm as ONNX's `LayerNormalization`, GELU as `0.5·x·(1 + erf(x/√2))`, attention
//! as `MatMul` and `Softmax`.

use burn::nn::Linear;

use super::{Graph, int, ints, pb};
use crate::model::{
    Activation, ConvBnSilu, ConvNext, EfficientNet, LayerDefaults, SelfAttention, VisionTransformer,
};

impl Graph {
    /// An int64 initializer: a list of `values`, or a scalar where `scalar` says so.
    fn int_constant(&mut self, what: &str, values: &[i64], scalar: bool) -> String {
        let name = self.fresh(what);
        self.initializers.push(pb::TensorProto {
            name: Some(name.clone()),
            dims: if scalar {
                Vec::new()
            } else {
                vec![values.len() as i64]
            },
            data_type: Some(pb::tensor_proto::DataType::Int64 as i32),
            raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
            ..Default::default()
        });
        name
    }

    /// The model's tensor at `path` as numbers, with its shape.
    fn values_of(&self, path: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        let (shape, bytes) = self
            .weights
            .get(path)
            .ok_or_else(|| format!("the model has no tensor `{path}`"))?;
        let values = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok((shape.clone(), values))
    }

    fn silu(&mut self, x: &str) -> String {
        let gate = self.node("Sigmoid", &[x], Vec::new());
        self.node("Mul", &[x, &gate], Vec::new())
    }

    fn transpose(&mut self, x: &str, perm: &[usize]) -> String {
        self.node("Transpose", &[x], vec![ints("perm", perm)])
    }

    /// Layer norm over the last axis, with the ε every layer norm of these networks has.
    fn layer_norm(&mut self, x: &str, at: &str) -> Result<String, String> {
        let gamma = self.weight(&format!("{at}.gamma"))?;
        let beta = self.weight(&format!("{at}.beta"))?;
        Ok(self.node(
            "LayerNormalization",
            &[x, &gamma, &beta],
            vec![
                int("axis", -1),
                super::float("epsilon", LayerDefaults::LAYER_NORM_EPSILON as f32),
            ],
        ))
    }

    /// Layer norm over the channels of `[N, C, H, W]` (torchvision's `LayerNorm2d`).
    fn channel_norm(&mut self, x: &str, at: &str) -> Result<String, String> {
        let last = self.transpose(x, &[0, 2, 3, 1]);
        let normed = self.layer_norm(&last, at)?;
        Ok(self.transpose(&normed, &[0, 3, 1, 2]))
    }

    /// A linear layer on the last axis of a tensor of any rank: `MatMul`, then `Add`.
    fn dense(&mut self, x: &str, at: &str, linear: &Linear) -> Result<String, String> {
        // Burn keeps the weight as [inputs, outputs], the right way round for x·W.
        let weight = self.weight(&format!("{at}.weight"))?;
        let product = self.node("MatMul", &[x, &weight], Vec::new());
        match &linear.bias {
            Some(_) => {
                let bias = self.weight(&format!("{at}.bias"))?;
                Ok(self.node("Add", &[&product, &bias], Vec::new()))
            }
            None => Ok(product),
        }
    }

    /// Convolution, batch norm and SiLU.
    fn conv_bn_silu(&mut self, x: &str, at: &str, layer: &ConvBnSilu) -> Result<String, String> {
        let y = self.conv(x, &format!("{at}.conv"), &layer.conv)?;
        let y = self.batch_norm(&y, &format!("{at}.bn"), &layer.bn)?;
        Ok(self.silu(&y))
    }
}

/// EfficientNet from the scaled input `x` to its logits.
pub(super) fn efficientnet(
    graph: &mut Graph,
    net: &EfficientNet,
    x: &str,
) -> Result<String, String> {
    let mut x = graph.conv_bn_silu(x, "stem", &net.stem)?;
    for (stage, blocks) in net.stages.iter().enumerate() {
        for (index, block) in blocks.iter().enumerate() {
            let at = format!("stages.{stage}.{index}");
            let mut y = x.clone();
            if let Some(expand) = &block.expand {
                y = graph.conv_bn_silu(&y, &format!("{at}.expand"), expand)?;
            }
            y = graph.conv_bn_silu(&y, &format!("{at}.depthwise"), &block.depthwise)?;
            let pooled = graph.node("GlobalAveragePool", &[&y], Vec::new());
            let squeezed = graph.conv(&pooled, &format!("{at}.se.fc1"), &block.se.fc1)?;
            let squeezed = graph.silu(&squeezed);
            let gate = graph.conv(&squeezed, &format!("{at}.se.fc2"), &block.se.fc2)?;
            let gate = graph.node("Sigmoid", &[&gate], Vec::new());
            y = graph.node("Mul", &[&y, &gate], Vec::new());
            y = graph.conv(&y, &format!("{at}.project"), &block.project)?;
            y = graph.batch_norm(&y, &format!("{at}.project_bn"), &block.project_bn)?;
            x = if block.residual {
                graph.node("Add", &[&x, &y], Vec::new())
            } else {
                y
            };
        }
    }
    let x = graph.conv_bn_silu(&x, "last", &net.last)?;
    let x = graph.global_average(&x);
    graph.linear(&x, "classifier", &net.classifier)
}

/// ConvNeXt from the scaled input `x` to its logits.
pub(super) fn convnext(graph: &mut Graph, net: &ConvNext, x: &str) -> Result<String, String> {
    let x = graph.conv(x, "stem.conv", &net.stem.conv)?;
    let mut x = graph.channel_norm(&x, "stem.norm")?;
    for (stage, blocks) in net.stages.iter().enumerate() {
        if let Some(down) = stage.checked_sub(1).and_then(|d| net.downsamples.get(d)) {
            let at = format!("downsamples.{}", stage - 1);
            x = graph.channel_norm(&x, &format!("{at}.norm"))?;
            x = graph.conv(&x, &format!("{at}.conv"), &down.conv)?;
        }
        for (index, block) in blocks.iter().enumerate() {
            let at = format!("stages.{stage}.{index}");
            let y = graph.conv(&x, &format!("{at}.dwconv"), &block.dwconv)?;
            let y = graph.transpose(&y, &[0, 2, 3, 1]);
            let y = graph.layer_norm(&y, &format!("{at}.norm"))?;
            let y = graph.dense(&y, &format!("{at}.pwconv1"), &block.pwconv1)?;
            let y = graph.activation(&y, Activation::Gelu);
            let y = graph.dense(&y, &format!("{at}.pwconv2"), &block.pwconv2)?;
            let y = graph.transpose(&y, &[0, 3, 1, 2]);
            let scale = graph.weight(&format!("{at}.layer_scale"))?;
            let y = graph.node("Mul", &[&y, &scale], Vec::new());
            x = graph.node("Add", &[&x, &y], Vec::new());
        }
    }
    let x = graph.global_average(&x);
    let x = graph.layer_norm(&x, "norm")?;
    graph.linear(&x, "classifier", &net.classifier)
}

/// ViT from the scaled input `x` to its logits.
pub(super) fn vit(graph: &mut Graph, net: &VisionTransformer, x: &str) -> Result<String, String> {
    let [hidden, ..] = net.conv_proj.weight.dims();
    let patches = graph.conv(x, "conv_proj", &net.conv_proj)?;
    let flat_shape = graph.int_constant("patch_rows", &[0, hidden as i64, -1], false);
    let patches = graph.node("Reshape", &[&patches, &flat_shape], Vec::new());
    let patches = graph.transpose(&patches, &[0, 2, 1]);
    // The class token, repeated for each image of the batch.
    let batch = graph.node("Shape", &[&patches], vec![int("start", 0), int("end", 1)]);
    let rest = graph.int_constant("token_shape", &[1, hidden as i64], false);
    let shape = graph.node("Concat", &[&batch, &rest], vec![int("axis", 0)]);
    let token = graph.weight("class_token")?;
    let tokens = graph.node("Expand", &[&token, &shape], Vec::new());
    let x = graph.node("Concat", &[&tokens, &patches], vec![int("axis", 1)]);
    let positions = graph.weight("encoder.pos_embedding")?;
    let mut x = graph.node("Add", &[&x, &positions], Vec::new());
    for (index, block) in net.encoder.layers.iter().enumerate() {
        let at = format!("encoder.layers.{index}");
        let y = graph.layer_norm(&x, &format!("{at}.ln_1"))?;
        let y = attention(graph, &y, &at, &block.self_attention, hidden)?;
        x = graph.node("Add", &[&x, &y], Vec::new());
        let y = graph.layer_norm(&x, &format!("{at}.ln_2"))?;
        let y = graph.dense(&y, &format!("{at}.mlp_in"), &block.mlp_in)?;
        let y = graph.activation(&y, Activation::Gelu);
        let y = graph.dense(&y, &format!("{at}.mlp_out"), &block.mlp_out)?;
        x = graph.node("Add", &[&x, &y], Vec::new());
    }
    let x = graph.layer_norm(&x, "encoder.ln")?;
    let first = graph.int_constant("class_row", &[0], true);
    let x = graph.node("Gather", &[&x, &first], vec![int("axis", 1)]);
    graph.linear(&x, "head", &net.head)
}

/// Multi-head self-attention of block `at` over `[N, T, D]`: the packed input projection split
/// into query, key and value weights here, so the graph has one `MatMul` for each.
fn attention(
    graph: &mut Graph,
    x: &str,
    at: &str,
    layer: &SelfAttention,
    hidden: usize,
) -> Result<String, String> {
    let at = format!("{at}.self_attention");
    let heads = layer.heads;
    let (_, weight) = graph.values_of(&format!("{at}.in_proj_weight"))?;
    let (_, bias) = graph.values_of(&format!("{at}.in_proj_bias"))?;
    let head_width = hidden / heads;
    let split = graph.int_constant(
        "head_split",
        &[0, 0, heads as i64, head_width as i64],
        false,
    );
    let mut parts = Vec::new();
    for (part, name) in ["query", "key", "value"].into_iter().enumerate() {
        // PyTorch's rows [part·D, (part+1)·D) of the [3D, D] weight, transposed for x·W.
        let transposed: Vec<f32> = (0..hidden * hidden)
            .map(|i| weight[(part * hidden + i % hidden) * hidden + i / hidden])
            .collect();
        let w = graph.constant(&format!("{name}_weight"), &[hidden, hidden], &transposed);
        let b = graph.constant(
            &format!("{name}_bias"),
            &[hidden],
            &bias[part * hidden..(part + 1) * hidden],
        );
        let projected = graph.node("MatMul", &[x, &w], Vec::new());
        let projected = graph.node("Add", &[&projected, &b], Vec::new());
        parts.push(graph.node("Reshape", &[&projected, &split], Vec::new()));
    }
    let query = graph.transpose(&parts[0], &[0, 2, 1, 3]);
    let key = graph.transpose(&parts[1], &[0, 2, 3, 1]);
    let value = graph.transpose(&parts[2], &[0, 2, 1, 3]);
    let scores = graph.node("MatMul", &[&query, &key], Vec::new());
    let scale = graph.constant("scale", &[], &[1.0 / (head_width as f32).sqrt()]);
    let scores = graph.node("Mul", &[&scores, &scale], Vec::new());
    let weights = graph.node("Softmax", &[&scores], vec![int("axis", -1)]);
    let joined = graph.node("MatMul", &[&weights, &value], Vec::new());
    let joined = graph.transpose(&joined, &[0, 2, 1, 3]);
    let shape = graph.int_constant("joined", &[0, 0, hidden as i64], false);
    let joined = graph.node("Reshape", &[&joined, &shape], Vec::new());
    graph.dense(&joined, &format!("{at}.out_proj"), &layer.out_proj)
}
