//! A trained model written as an ONNX graph (opset 17), input scaling included: the file takes
//! raw 0–255 pixels `[N, C, H, W]` as `pixels`, as Kiln's own *Try* does, and gives `logits`
//! and `probabilities` `[N, classes]`. The graph is built from ONNX's own protobuf messages
//! ([`super::onnx_proto`], generated from onnx.proto), one node per layer.

use std::collections::HashMap;
use std::path::Path;

use burn::nn::conv::Conv2d;
use burn::nn::pool::MaxPool2d;
use burn::nn::{BatchNorm, Linear, PaddingConfig2d};
use burn_store::IdentityAdapter;
use prost::Message;

use super::onnx_proto as pb;

/// EfficientNet's, ConvNeXt's and ViT's graphs.
mod backbones;
use crate::model::{
    Activation, Block, Classifier, ConvNormAct, InvertedResidual, ModelCard, ModelSpec,
    TorchvisionNet,
};

/// The operator set the graph uses: the newest with every op here, and what onnxruntime and
/// tract both run.
pub const OPSET: i64 = 17;
/// ONNX IR version 8 goes with opset 17.
const IR_VERSION: i64 = 8;

/// A graph under construction: its nodes, the weights they read, and fresh names.
struct Graph {
    nodes: Vec<pb::NodeProto>,
    initializers: Vec<pb::TensorProto>,
    /// Every tensor of the model by its Kiln path: shape and little-endian f32 bytes.
    weights: HashMap<String, (Vec<usize>, Vec<u8>)>,
    counter: usize,
}

fn int(name: &str, value: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.to_owned()),
        r#type: Some(pb::attribute_proto::AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

fn ints(name: &str, values: &[usize]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.to_owned()),
        r#type: Some(pb::attribute_proto::AttributeType::Ints as i32),
        ints: values.iter().map(|&v| v as i64).collect(),
        ..Default::default()
    }
}

fn float(name: &str, value: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.to_owned()),
        r#type: Some(pb::attribute_proto::AttributeType::Float as i32),
        f: Some(value),
        ..Default::default()
    }
}

fn text(name: &str, value: &str) -> pb::AttributeProto {
    pb::AttributeProto {
        name: Some(name.to_owned()),
        r#type: Some(pb::attribute_proto::AttributeType::String as i32),
        s: Some(value.as_bytes().to_vec()),
        ..Default::default()
    }
}

/// The four paddings of a square convolution or pool, as ONNX orders them (top, left, bottom,
/// right, which is Burn's order too).
fn pads(padding: &PaddingConfig2d) -> Result<[usize; 4], String> {
    match padding {
        PaddingConfig2d::Explicit(top, left, bottom, right) => Ok([*top, *left, *bottom, *right]),
        PaddingConfig2d::Valid => Ok([0; 4]),
        PaddingConfig2d::Same => Err("a convolution with `same` padding".to_owned()),
    }
}

impl Graph {
    /// A name no other value has, for `what`.
    fn fresh(&mut self, what: &str) -> String {
        self.counter += 1;
        format!("{what}_{}", self.counter)
    }

    /// Adds `op` reading `inputs`; returns the name of its output.
    fn node(&mut self, op: &str, inputs: &[&str], attributes: Vec<pb::AttributeProto>) -> String {
        let output = self.fresh(&op.to_ascii_lowercase());
        self.nodes.push(pb::NodeProto {
            op_type: Some(op.to_owned()),
            name: Some(output.clone()),
            input: inputs.iter().map(|i| (*i).to_owned()).collect(),
            output: vec![output.clone()],
            attribute: attributes,
            ..Default::default()
        });
        output
    }

    /// A float initializer of `shape` holding `values`.
    fn constant(&mut self, what: &str, shape: &[usize], values: &[f32]) -> String {
        let name = self.fresh(what);
        self.initializers.push(pb::TensorProto {
            name: Some(name.clone()),
            dims: shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(pb::tensor_proto::DataType::Float as i32),
            raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
            ..Default::default()
        });
        name
    }

    /// The model's tensor at `path` as an initializer named after it.
    fn weight(&mut self, path: &str) -> Result<String, String> {
        let (shape, bytes) = self
            .weights
            .get(path)
            .cloned()
            .ok_or_else(|| format!("the model has no tensor `{path}`"))?;
        self.initializers.push(pb::TensorProto {
            name: Some(path.to_owned()),
            dims: shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(pb::tensor_proto::DataType::Float as i32),
            raw_data: Some(bytes),
            ..Default::default()
        });
        Ok(path.to_owned())
    }

    fn conv(&mut self, x: &str, at: &str, conv: &Conv2d) -> Result<String, String> {
        let weight = self.weight(&format!("{at}.weight"))?;
        let mut inputs = vec![x.to_owned(), weight];
        if conv.bias.is_some() {
            inputs.push(self.weight(&format!("{at}.bias"))?);
        }
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let attributes = vec![
            ints("kernel_shape", &conv.kernel_size),
            ints("strides", &conv.stride),
            ints("pads", &pads(&conv.padding)?),
            ints("dilations", &conv.dilation),
            int("group", conv.groups as i64),
        ];
        Ok(self.node("Conv", &inputs, attributes))
    }

    fn batch_norm(&mut self, x: &str, at: &str, norm: &BatchNorm) -> Result<String, String> {
        let names = ["gamma", "beta", "running_mean", "running_var"]
            .map(|part| self.weight(&format!("{at}.{part}")));
        let [gamma, beta, mean, var] = names;
        let (gamma, beta, mean, var) = (gamma?, beta?, mean?, var?);
        Ok(self.node(
            "BatchNormalization",
            &[x, &gamma, &beta, &mean, &var],
            vec![float("epsilon", norm.epsilon as f32)],
        ))
    }

    fn linear(&mut self, x: &str, at: &str, linear: &Linear) -> Result<String, String> {
        // Burn keeps a linear weight as [inputs, outputs]: Y = X·W + b, no transpose.
        let weight = self.weight(&format!("{at}.weight"))?;
        match &linear.bias {
            Some(_) => {
                let bias = self.weight(&format!("{at}.bias"))?;
                Ok(self.node("Gemm", &[x, &weight, &bias], Vec::new()))
            }
            None => Ok(self.node("Gemm", &[x, &weight], Vec::new())),
        }
    }

    fn max_pool(&mut self, x: &str, pool: &MaxPool2d) -> Result<String, String> {
        let attributes = vec![
            ints("kernel_shape", &pool.kernel_size),
            ints("strides", &pool.stride),
            ints("pads", &pads(&pool.padding)?),
            int("ceil_mode", i64::from(pool.ceil_mode)),
        ];
        Ok(self.node("MaxPool", &[x], attributes))
    }

    fn relu(&mut self, x: &str) -> String {
        self.node("Relu", &[x], Vec::new())
    }

    fn relu6(&mut self, x: &str) -> String {
        let low = self.constant("zero", &[], &[0.0]);
        let high = self.constant("six", &[], &[6.0]);
        self.node("Clip", &[x, &low, &high], Vec::new())
    }

    fn activation(&mut self, x: &str, activation: Activation) -> String {
        match activation {
            Activation::Relu => self.relu(x),
            Activation::Tanh => self.node("Tanh", &[x], Vec::new()),
            Activation::Gelu => {
                // Gelu is an op from opset 20; before it, 0.5·x·(1 + erf(x/√2)), which is
                // what Burn computes.
                let root = self.constant("sqrt2", &[], &[std::f32::consts::SQRT_2]);
                let scaled = self.node("Div", &[x, &root], Vec::new());
                let erf = self.node("Erf", &[&scaled], Vec::new());
                let one = self.constant("one", &[], &[1.0]);
                let shifted = self.node("Add", &[&erf, &one], Vec::new());
                let half = self.constant("half", &[], &[0.5]);
                let product = self.node("Mul", &[x, &shifted], Vec::new());
                self.node("Mul", &[&product, &half], Vec::new())
            }
        }
    }

    fn flatten(&mut self, x: &str) -> String {
        self.node("Flatten", &[x], vec![int("axis", 1)])
    }

    /// Average over height and width, then `[N, C]`.
    fn global_average(&mut self, x: &str) -> String {
        let pooled = self.node("GlobalAveragePool", &[x], Vec::new());
        self.flatten(&pooled)
    }

    /// An adaptive average pool from `side` to `target`, as ONNX can say it: a window of
    /// `side / target` when that divides evenly.
    fn adaptive_average(
        &mut self,
        x: &str,
        side: [usize; 2],
        target: [usize; 2],
    ) -> Result<String, String> {
        if side == target {
            return Ok(x.to_owned());
        }
        if target == [1, 1] {
            return Ok(self.node("GlobalAveragePool", &[x], Vec::new()));
        }
        if !side[0].is_multiple_of(target[0]) || !side[1].is_multiple_of(target[1]) {
            return Err(format!(
                "an adaptive average pool from {}×{} to {}×{}, which ONNX has no operator for; train at a size whose feature map divides evenly",
                side[0], side[1], target[0], target[1]
            ));
        }
        let window = [side[0] / target[0], side[1] / target[1]];
        Ok(self.node(
            "AveragePool",
            &[x],
            vec![ints("kernel_shape", &window), ints("strides", &window)],
        ))
    }
}

/// The spatial side after a convolution or pool of `kernel`, `stride` and `padding` on `side`.
fn out_side(side: usize, kernel: usize, stride: usize, padding: usize) -> usize {
    (side + 2 * padding).saturating_sub(kernel) / stride.max(1) + 1
}

/// Writes `model` (built from `spec`, fed as `card` says) to `path` as an ONNX file.
pub fn write_onnx(
    model: &Classifier,
    spec: &ModelSpec,
    card: &ModelCard,
    path: &Path,
) -> Result<(), String> {
    let bytes = onnx_bytes(model, spec, card)?;
    crate::atomic_file::write_atomically(path, &bytes)
        .map_err(|e| format!("could not write {}: {e}", path.display()))
}

/// [`write_onnx`]'s file as bytes (a page's download).
pub fn onnx_bytes(
    model: &Classifier,
    spec: &ModelSpec,
    card: &ModelCard,
) -> Result<Vec<u8>, String> {
    let tensors = crate::train::device_reads::module_tensors(model, Box::new(IdentityAdapter))?;
    let mut graph = Graph {
        nodes: Vec::new(),
        initializers: Vec::new(),
        weights: tensors
            .into_iter()
            .map(|(name, _, shape, bytes)| (name, (shape, bytes)))
            .collect(),
        counter: 0,
    };
    let [channels, height, width] = card.shape;
    // The input scaling: (pixel − offset) × scale, per channel.
    let offset = graph.constant("offset", &[1, channels, 1, 1], &card.offset);
    let scale = graph.constant("scale", &[1, channels, 1, 1], &card.scale);
    let shifted = graph.node("Sub", &["pixels", &offset], Vec::new());
    let input = graph.node("Mul", &[&shifted, &scale], Vec::new());
    let logits = network(&mut graph, model, spec, &input, [height, width])?;
    let logits_out = graph.node("Identity", &[&logits], Vec::new());
    let probabilities = match card.thresholds {
        Some(_) => graph.node("Sigmoid", &[&logits_out], Vec::new()),
        None => graph.node("Softmax", &[&logits_out], vec![int("axis", 1)]),
    };
    rename_output(&mut graph, &logits_out, "logits");
    rename_output(&mut graph, &probabilities, "probabilities");
    let classes = card.class_names.len();
    let model_proto = pb::ModelProto {
        ir_version: Some(IR_VERSION),
        opset_import: vec![pb::OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(OPSET),
        }],
        producer_name: Some("kiln".to_owned()),
        producer_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        doc_string: Some(format!(
            "{} trained by Kiln; input: raw 0–255 pixels [N, {channels}, {height}, {width}]; {}: {}",
            spec.title(),
            match card.thresholds {
                Some(_) => "several labels per image, probabilities a sigmoid per label; labels",
                None => "probabilities a softmax over classes; classes",
            },
            card.class_names.join(", ")
        )),
        metadata_props: metadata(card),
        graph: Some(pb::GraphProto {
            name: Some("kiln".to_owned()),
            node: graph.nodes,
            initializer: graph.initializers,
            input: vec![value_info(
                "pixels",
                &[None, Some(channels), Some(height), Some(width)],
            )],
            output: vec![
                value_info("logits", &[None, Some(classes)]),
                value_info("probabilities", &[None, Some(classes)]),
            ],
            ..Default::default()
        }),
        ..Default::default()
    };
    Ok(model_proto.encode_to_vec())
}

/// The model's metadata: `classes` (a JSON list of names, in output order), `output` (`softmax`,
/// or `sigmoid` for a multi-label model) and, for a multi-label model, `thresholds` (a JSON list
/// of each label's threshold), so a program reading the file alone can use it as Kiln does.
fn metadata(card: &ModelCard) -> Vec<pb::StringStringEntryProto> {
    let entry = |key: &str, value: String| pb::StringStringEntryProto {
        key: Some(key.to_owned()),
        value: Some(value),
    };
    let mut entries = vec![
        entry(
            "classes",
            serde_json::to_string(&card.class_names).unwrap_or_default(),
        ),
        entry(
            "output",
            match card.thresholds {
                Some(_) => "sigmoid",
                None => "softmax",
            }
            .to_owned(),
        ),
    ];
    if let Some(thresholds) = &card.thresholds {
        entries.push(entry(
            "thresholds",
            serde_json::to_string(thresholds).unwrap_or_default(),
        ));
    }
    entries
}

/// Names the output of the node that makes `value` `name`.
fn rename_output(graph: &mut Graph, value: &str, name: &str) {
    for node in &mut graph.nodes {
        for output in &mut node.output {
            if output == value {
                *output = name.to_owned();
            }
        }
        for input in &mut node.input {
            if input == value {
                *input = name.to_owned();
            }
        }
    }
}

/// A float tensor value of `dims` (none: any size, the batch).
fn value_info(name: &str, dims: &[Option<usize>]) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{Dimension, dimension::Value};
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Some(size) => Value::DimValue(*size as i64),
                None => Value::DimParam("N".to_owned()),
            }),
            ..Default::default()
        })
        .collect();
    pb::ValueInfoProto {
        name: Some(name.to_owned()),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Some(pb::tensor_proto::DataType::Float as i32),
                shape: Some(pb::TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The nodes of `model` from the scaled input `x` (`side` pixels high and wide) to its logits.
fn network(
    graph: &mut Graph,
    model: &Classifier,
    spec: &ModelSpec,
    x: &str,
    side: [usize; 2],
) -> Result<String, String> {
    match model {
        Classifier::Mlp(mlp) => {
            let mut x = graph.flatten(x);
            for (index, layer) in mlp.hidden.iter().enumerate() {
                x = graph.linear(&x, &format!("hidden.{index}"), layer)?;
                x = graph.activation(&x, mlp.activation);
            }
            graph.linear(&x, "output", &mlp.output)
        }
        Classifier::Cnn(cnn) => {
            let mut x = x.to_owned();
            let mut side = side;
            for (index, conv) in cnn.convs.iter().enumerate() {
                x = graph.conv(&x, &format!("convs.{index}"), conv)?;
                x = graph.relu(&x);
                if index % 2 == 1 {
                    x = graph.max_pool(&x, &cnn.pool)?;
                    side = side.map(|s| out_side(s, 2, 2, 0));
                }
            }
            if let Some(shrink) = &cnn.shrink {
                x = graph.adaptive_average(&x, side, shrink.output_size)?;
            }
            let x = graph.flatten(&x);
            let x = graph.linear(&x, "fc1", &cnn.fc1)?;
            let x = graph.relu(&x);
            graph.linear(&x, "fc2", &cnn.fc2)
        }
        Classifier::Vgg16(vgg) => {
            let mut x = x.to_owned();
            let mut side = side;
            if let Some(target) = vgg.resize_to
                && side != [target, target]
            {
                // Bilinear with half-pixel centres, as Burn's and PyTorch's interpolate.
                let none = graph.constant("roi", &[0], &[]);
                let scales = graph.constant(
                    "scales",
                    &[4],
                    &[
                        1.0,
                        1.0,
                        target as f32 / side[0] as f32,
                        target as f32 / side[1] as f32,
                    ],
                );
                x = graph.node(
                    "Resize",
                    &[&x, &none, &scales],
                    vec![
                        text("mode", "linear"),
                        text("coordinate_transformation_mode", "half_pixel"),
                    ],
                );
                side = [target, target];
            }
            for (stage, layers) in vgg.stages.iter().enumerate() {
                for (index, layer) in layers.iter().enumerate() {
                    let at = format!("stages.{stage}.{index}");
                    x = graph.conv(&x, &format!("{at}.conv"), &layer.conv)?;
                    if let Some(norm) = &layer.norm {
                        x = graph.batch_norm(&x, &format!("{at}.norm"), norm)?;
                    }
                    x = graph.relu(&x);
                }
                x = graph.max_pool(&x, &vgg.pool)?;
                side = side.map(|s| out_side(s, 2, 2, 0));
            }
            x = graph.adaptive_average(&x, side, vgg.avgpool.output_size)?;
            let mut x = graph.flatten(&x);
            let last = vgg.classifier.len().saturating_sub(1);
            for (index, layer) in vgg.classifier.iter().enumerate() {
                x = graph.linear(&x, &format!("classifier.{index}"), layer)?;
                if index < last {
                    x = graph.relu(&x);
                }
            }
            Ok(x)
        }
        Classifier::ResNet18(net) => {
            let x = graph.conv(x, "stem", &net.stem)?;
            let x = graph.batch_norm(&x, "stem_norm", &net.stem_norm)?;
            let mut x = graph.relu(&x);
            for (index, block) in net.blocks.iter().enumerate() {
                let at = format!("blocks.{index}");
                let shortcut = match &block.downsample {
                    Some(down) => {
                        let s = graph.conv(&x, &format!("{at}.downsample.conv"), &down.conv)?;
                        graph.batch_norm(&s, &format!("{at}.downsample.norm"), &down.norm)?
                    }
                    None => x.clone(),
                };
                let y = graph.conv(&x, &format!("{at}.conv1"), &block.conv1)?;
                let y = graph.batch_norm(&y, &format!("{at}.norm1"), &block.norm1)?;
                let y = graph.relu(&y);
                let y = graph.conv(&y, &format!("{at}.conv2"), &block.conv2)?;
                let y = graph.batch_norm(&y, &format!("{at}.norm2"), &block.norm2)?;
                let sum = graph.node("Add", &[&y, &shortcut], Vec::new());
                x = graph.relu(&sum);
            }
            let x = graph.global_average(&x);
            graph.linear(&x, "fc", &net.fc)
        }
        Classifier::Torchvision(TorchvisionNet::ResNet(net)) => {
            let x = graph.conv(x, "conv1", &net.conv1)?;
            let x = graph.batch_norm(&x, "bn1", &net.bn1)?;
            let x = graph.relu(&x);
            let mut x = graph.max_pool(&x, &net.maxpool)?;
            let stages = [&net.layer1, &net.layer2, &net.layer3, &net.layer4];
            for (stage, blocks) in stages.into_iter().enumerate() {
                for (index, block) in blocks.iter().enumerate() {
                    x = resnet_block(graph, &x, &format!("layer{}.{index}", stage + 1), block)?;
                }
            }
            let x = graph.global_average(&x);
            graph.linear(&x, "fc", &net.fc)
        }
        Classifier::Torchvision(TorchvisionNet::MobileNetV2(net)) => {
            let mut x = conv_norm_act(graph, x, "stem", &net.stem)?;
            for (index, block) in net.blocks.iter().enumerate() {
                x = inverted_residual(graph, &x, &format!("blocks.{index}"), block)?;
            }
            let x = conv_norm_act(graph, &x, "last", &net.last)?;
            let x = graph.global_average(&x);
            graph.linear(&x, "classifier", &net.classifier)
        }
        Classifier::Torchvision(TorchvisionNet::EfficientNet(net)) => {
            backbones::efficientnet(graph, net, x)
        }
        Classifier::Torchvision(TorchvisionNet::ConvNext(net)) => {
            backbones::convnext(graph, net, x)
        }
        Classifier::Torchvision(TorchvisionNet::Vit(net)) => backbones::vit(graph, net, x),
        Classifier::Head(_) => Err(format!(
            "{} is a linear probe's head alone; export the run, whose model is the whole network",
            spec.title()
        )),
    }
}

fn resnet_block(graph: &mut Graph, x: &str, at: &str, block: &Block) -> Result<String, String> {
    let shortcut = match &block.downsample {
        Some(down) => {
            let s = graph.conv(x, &format!("{at}.downsample.conv"), &down.conv)?;
            graph.batch_norm(&s, &format!("{at}.downsample.bn"), &down.bn)?
        }
        None => x.to_owned(),
    };
    let y = graph.conv(x, &format!("{at}.conv1"), &block.conv1)?;
    let y = graph.batch_norm(&y, &format!("{at}.bn1"), &block.bn1)?;
    let y = graph.relu(&y);
    let y = graph.conv(&y, &format!("{at}.conv2"), &block.conv2)?;
    let mut y = graph.batch_norm(&y, &format!("{at}.bn2"), &block.bn2)?;
    if let (Some(conv3), Some(bn3)) = (&block.conv3, &block.bn3) {
        let z = graph.relu(&y);
        let z = graph.conv(&z, &format!("{at}.conv3"), conv3)?;
        y = graph.batch_norm(&z, &format!("{at}.bn3"), bn3)?;
    }
    let sum = graph.node("Add", &[&y, &shortcut], Vec::new());
    Ok(graph.relu(&sum))
}

fn conv_norm_act(
    graph: &mut Graph,
    x: &str,
    at: &str,
    layer: &ConvNormAct,
) -> Result<String, String> {
    let y = graph.conv(x, &format!("{at}.conv"), &layer.conv)?;
    let y = graph.batch_norm(&y, &format!("{at}.bn"), &layer.bn)?;
    Ok(graph.relu6(&y))
}

fn inverted_residual(
    graph: &mut Graph,
    x: &str,
    at: &str,
    block: &InvertedResidual,
) -> Result<String, String> {
    let mut y = x.to_owned();
    if let Some(expand) = &block.expand {
        y = conv_norm_act(graph, &y, &format!("{at}.expand"), expand)?;
    }
    let y = conv_norm_act(graph, &y, &format!("{at}.depthwise"), &block.depthwise)?;
    let y = graph.conv(&y, &format!("{at}.project"), &block.project)?;
    let y = graph.batch_norm(&y, &format!("{at}.project_bn"), &block.project_bn)?;
    if block.residual() {
        Ok(graph.node("Add", &[x, &y], Vec::new()))
    } else {
        Ok(y)
    }
}
