//! Weights files written the way torchvision names its state dicts, independently of the
//! prefix tables the loader uses, so a wrong table fails here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use burn::tensor::{Device, Tensor};
use safetensors::Dtype;
use safetensors::tensor::TensorView;

use super::*;

/// The newer backbones' keys and shapes against torchvision's.
mod backbone_keys;
use crate::data::ImageShape;
use crate::model::{InitScheme, TorchvisionNet};

/// torchvision's names and shapes of a state dict, in its order.
type StateDict = Vec<(String, Vec<usize>)>;

fn batch_norm(dict: &mut StateDict, prefix: &str, features: usize) {
    for name in ["weight", "bias", "running_mean", "running_var"] {
        dict.push((format!("{prefix}.{name}"), vec![features]));
    }
    dict.push((format!("{prefix}.num_batches_tracked"), vec![]));
}

/// `torchvision.models.resnet18/34/50(num_classes=classes).state_dict()`'s keys and shapes.
fn resnet_state_dict(blocks: [usize; 4], bottleneck: bool, classes: usize) -> StateDict {
    let mut dict = vec![("conv1.weight".to_owned(), vec![64, 3, 7, 7])];
    batch_norm(&mut dict, "bn1", 64);
    let expansion = if bottleneck { 4 } else { 1 };
    let mut inputs = 64;
    for (stage, (&count, width)) in blocks.iter().zip([64, 128, 256, 512]).enumerate() {
        for block in 0..count {
            let at = format!("layer{}.{block}", stage + 1);
            let stride = if stage > 0 && block == 0 { 2 } else { 1 };
            let outputs = width * expansion;
            if bottleneck {
                dict.push((format!("{at}.conv1.weight"), vec![width, inputs, 1, 1]));
                batch_norm(&mut dict, &format!("{at}.bn1"), width);
                dict.push((format!("{at}.conv2.weight"), vec![width, width, 3, 3]));
                batch_norm(&mut dict, &format!("{at}.bn2"), width);
                dict.push((format!("{at}.conv3.weight"), vec![outputs, width, 1, 1]));
                batch_norm(&mut dict, &format!("{at}.bn3"), outputs);
            } else {
                dict.push((format!("{at}.conv1.weight"), vec![width, inputs, 3, 3]));
                batch_norm(&mut dict, &format!("{at}.bn1"), width);
                dict.push((format!("{at}.conv2.weight"), vec![width, width, 3, 3]));
                batch_norm(&mut dict, &format!("{at}.bn2"), width);
            }
            if stride != 1 || inputs != outputs {
                dict.push((
                    format!("{at}.downsample.0.weight"),
                    vec![outputs, inputs, 1, 1],
                ));
                batch_norm(&mut dict, &format!("{at}.downsample.1"), outputs);
            }
            inputs = outputs;
        }
    }
    dict.push(("fc.weight".to_owned(), vec![classes, inputs]));
    dict.push(("fc.bias".to_owned(), vec![classes]));
    dict
}

/// `torchvision.models.mobilenet_v2(num_classes=classes).state_dict()`'s keys and shapes.
fn mobilenet_state_dict(classes: usize) -> StateDict {
    let mut dict = vec![("features.0.0.weight".to_owned(), vec![32, 3, 3, 3])];
    batch_norm(&mut dict, "features.0.1", 32);
    let mut inputs = 32;
    let mut index = 1;
    for (t, c, n) in [
        (1, 16, 1),
        (6, 24, 2),
        (6, 32, 3),
        (6, 64, 4),
        (6, 96, 3),
        (6, 160, 3),
        (6, 320, 1),
    ] {
        for _ in 0..n {
            let at = format!("features.{index}.conv");
            let hidden = inputs * t;
            let mut part = 0;
            if t != 1 {
                dict.push((format!("{at}.0.0.weight"), vec![hidden, inputs, 1, 1]));
                batch_norm(&mut dict, &format!("{at}.0.1"), hidden);
                part = 1;
            }
            dict.push((format!("{at}.{part}.0.weight"), vec![hidden, 1, 3, 3]));
            batch_norm(&mut dict, &format!("{at}.{part}.1"), hidden);
            dict.push((format!("{at}.{}.weight", part + 1), vec![c, hidden, 1, 1]));
            batch_norm(&mut dict, &format!("{at}.{}", part + 2), c);
            inputs = c;
            index += 1;
        }
    }
    dict.push((format!("features.{index}.0.weight"), vec![1280, 320, 1, 1]));
    batch_norm(&mut dict, &format!("features.{index}.1"), 1280);
    dict.push(("classifier.1.weight".to_owned(), vec![classes, 1280]));
    dict.push(("classifier.1.bias".to_owned(), vec![classes]));
    dict
}

/// The value the file holds at `element` of its `tensor`-th entry: distinct enough that a
/// transposed or swapped tensor reads differently, positive for running variances.
fn value(tensor: usize, element: usize, key: &str) -> f32 {
    let v = ((tensor * 131 + element * 17) % 1009) as f32 / 1009.0 - 0.5;
    if key.ends_with("running_var") {
        v.abs() + 0.5
    } else {
        v
    }
}

/// Writes `dict` as a safetensors file, f32 throughout but the i64 batch counters.
fn write_safetensors(dict: &StateDict, path: &Path) {
    write_safetensors_of(dict, path, |t, e, key, _| value(t, e, key));
}

/// [`value`] rescaled so that a deep network's activations stay near 1, as a trained
/// network's do: convolution and dense weights at Kaiming's scale for their fan-in, batch norm
/// scales near 1 and shifts and means near 0.
fn well_scaled(tensor: usize, element: usize, key: &str, shape: &[usize]) -> f32 {
    let v = value(tensor, element, key);
    let fan_in: usize = shape.iter().skip(1).product();
    if key.ends_with("running_var") {
        v
    } else if shape.len() > 1 {
        2.0 * v * (6.0 / fan_in as f32).sqrt()
    } else if key.ends_with("weight") {
        // Only batch norm scales are weights of one dimension.
        0.6 + 0.2 * v
    } else {
        0.1 * v
    }
}

/// Writes `dict` with the values `value_at(tensor, element, key, shape)`.
fn write_safetensors_of(
    dict: &StateDict,
    path: &Path,
    value_at: impl Fn(usize, usize, &str, &[usize]) -> f32,
) {
    let bytes: Vec<Vec<u8>> = dict
        .iter()
        .enumerate()
        .map(|(t, (key, shape))| {
            let count: usize = shape.iter().product();
            if key.ends_with("num_batches_tracked") {
                7_i64.to_le_bytes().to_vec()
            } else {
                (0..count)
                    .flat_map(|e| value_at(t, e, key, shape).to_le_bytes())
                    .collect()
            }
        })
        .collect();
    let views = dict.iter().zip(&bytes).map(|((key, shape), data)| {
        let dtype = if key.ends_with("num_batches_tracked") {
            Dtype::I64
        } else {
            Dtype::F32
        };
        let view = TensorView::new(dtype, shape.clone(), data).expect("a consistent tensor");
        (key.clone(), view)
    });
    safetensors::serialize_to_file(views, None, path).expect("the file is written");
}

fn device() -> Device {
    Device::flex()
}

fn build(spec: &ModelSpec, channels: usize, classes: usize) -> Classifier {
    let shape = ImageShape {
        channels,
        height: 32,
        width: 32,
    };
    spec.init(shape, classes, InitScheme::PytorchDefault, &device())
        .expect("the model builds")
}

fn file(name: &str) -> kiln_test_support::ScratchFile {
    kiln_test_support::scratch_file(name)
}

fn values<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .expect("f32 values")
}

fn resnet18_dict(classes: usize) -> StateDict {
    resnet_state_dict([2, 2, 2, 2], false, classes)
}

#[test]
fn the_state_dicts_written_here_have_torchvisions_key_counts() {
    // Counted from torchvision 0.29's state_dict() of each model, batch counters included.
    assert_eq!(resnet18_dict(10).len(), 122);
    assert_eq!(resnet_state_dict([3, 4, 6, 3], false, 10).len(), 218);
    assert_eq!(resnet_state_dict([3, 4, 6, 3], true, 10).len(), 320);
    assert_eq!(mobilenet_state_dict(10).len(), 314);
}

#[test]
fn torchvision_resnet18_keys_land_where_torchvision_has_them() {
    let dict = resnet18_dict(5);
    let path = file("resnet18.safetensors");
    write_safetensors(&dict, &path);
    let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 5);
    let loaded = load(&mut model, &ModelSpec::ResNet18ImageNet, &path).expect("it fits");
    // Every tensor but the batch counters Kiln has no place for.
    let counters = dict.iter().filter(|(k, _)| k.ends_with("tracked")).count();
    assert_eq!(loaded.tensors, dict.len() - counters);
    assert!(!loaded.fresh_head);
    let Classifier::Torchvision(TorchvisionNet::ResNet(net)) = &model else {
        panic!("resnet18-imagenet builds a torchvision ResNet");
    };
    let index = |key: &str| {
        dict.iter()
            .position(|(k, _)| k == key)
            .expect("a torchvision key")
    };
    // A convolution keeps PyTorch's [out, in, kh, kw] layout.
    let conv = values(
        net.layer2[0]
            .downsample
            .as_ref()
            .expect("a projection")
            .conv
            .weight
            .val(),
    );
    let t = index("layer2.0.downsample.0.weight");
    assert_eq!(
        conv[..3],
        [value(t, 0, ""), value(t, 1, ""), value(t, 2, "")]
    );
    // Batch norm: weight is γ, and the running statistics come along.
    let t = index("layer4.1.bn2.weight");
    assert_eq!(values(net.layer4[1].bn2.gamma.val())[3], value(t, 3, ""));
    let t = index("bn1.running_var");
    assert_eq!(
        values(net.bn1.running_var.value())[9],
        value(t, 9, "running_var")
    );
    // A linear weight is [out, in] in PyTorch and [in, out] in Burn.
    let t = index("fc.weight");
    let fc = values(net.fc.weight.val());
    for (output, input) in [(0, 1), (4, 511), (2, 100)] {
        assert_eq!(fc[input * 5 + output], value(t, output * 512 + input, ""));
    }
}

#[test]
fn a_file_with_another_class_count_loads_all_but_the_head() {
    let path = file("resnet18-imagenet-head.safetensors");
    write_safetensors(&resnet18_dict(1000), &path);
    let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 4);
    let loaded = load(&mut model, &ModelSpec::ResNet18ImageNet, &path).expect("it fits");
    assert!(loaded.fresh_head);
    assert!(loaded.to_string().contains("head starts fresh"), "{loaded}");
}

#[test]
fn mobilenet_v2_and_resnet50_take_their_torchvision_files() {
    for (spec, dict) in [
        (
            ModelSpec::ResNet50,
            resnet_state_dict([3, 4, 6, 3], true, 3),
        ),
        (
            ModelSpec::ResNet34,
            resnet_state_dict([3, 4, 6, 3], false, 3),
        ),
        (ModelSpec::MobileNetV2, mobilenet_state_dict(3)),
    ] {
        let path = file(&format!("{spec}.safetensors"));
        write_safetensors(&dict, &path);
        let mut model = build(&spec, 3, 3);
        let loaded = load(&mut model, &spec, &path).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let counters = dict.iter().filter(|(k, _)| k.ends_with("tracked")).count();
        assert_eq!(loaded.tensors, dict.len() - counters, "{spec}");
    }
    // The last block of MobileNetV2 in Kiln is torchvision's features.17.
    let dict = mobilenet_state_dict(3);
    let path = file("mobilenet-v2.safetensors");
    write_safetensors(&dict, &path);
    let mut model = build(&ModelSpec::MobileNetV2, 3, 3);
    load(&mut model, &ModelSpec::MobileNetV2, &path).expect("it fits");
    let Classifier::Torchvision(TorchvisionNet::MobileNetV2(net)) = &model else {
        panic!("mobilenet-v2 builds a MobileNetV2");
    };
    let t = dict
        .iter()
        .position(|(k, _)| k == "features.17.conv.3.bias")
        .expect("a torchvision key");
    assert_eq!(
        values(net.blocks[16].project_bn.beta.val())[7],
        value(t, 7, "")
    );
}

/// The sentence loading `dict` after `change` into `spec` gives.
fn refusal(spec: &ModelSpec, channels: usize, dict: StateDict, name: &str) -> String {
    let path = file(name);
    write_safetensors(&dict, &path);
    let mut model = build(spec, channels, 5);
    load(&mut model, spec, &path)
        .expect_err("the file does not fit")
        .to_string()
}

#[test]
fn a_missing_key_is_named_with_torchvisions_name() {
    let mut dict = resnet18_dict(5);
    dict.retain(|(k, _)| k != "layer3.0.downsample.1.running_mean");
    let sentence = refusal(&ModelSpec::ResNet18ImageNet, 3, dict, "missing.safetensors");
    assert!(
        sentence.contains("no `layer3.0.downsample.1.running_mean`"),
        "{sentence}"
    );
}

#[test]
fn an_extra_key_is_named() {
    let mut dict = resnet18_dict(5);
    dict.push(("layer5.0.conv1.weight".to_owned(), vec![8, 8, 3, 3]));
    let sentence = refusal(&ModelSpec::ResNet18ImageNet, 3, dict, "extra.safetensors");
    assert!(
        sentence.contains("`layer5.0.conv1.weight` is no part of resnet18"),
        "{sentence}"
    );
}

#[test]
fn a_wrong_shape_names_the_key_and_both_shapes() {
    let mut dict = resnet18_dict(5);
    let at = dict
        .iter()
        .position(|(k, _)| k == "layer1.1.conv2.weight")
        .expect("a torchvision key");
    dict[at].1 = vec![64, 64, 1, 1];
    let sentence = refusal(&ModelSpec::ResNet18ImageNet, 3, dict, "shape.safetensors");
    assert!(
        sentence.contains("`layer1.1.conv2.weight` has shape [64, 64, 1, 1]"),
        "{sentence}"
    );
    assert!(
        sentence.contains("[64, 64, 3, 3] in the network"),
        "{sentence}"
    );
}

#[test]
fn another_architectures_file_is_refused() {
    let dict = resnet_state_dict([3, 4, 6, 3], true, 5);
    let sentence = refusal(
        &ModelSpec::ResNet18ImageNet,
        3,
        dict,
        "resnet50-into-18.safetensors",
    );
    assert!(sentence.contains("does not fit resnet18"), "{sentence}");
    let sentence = refusal(
        &ModelSpec::MobileNetV2,
        3,
        resnet18_dict(5),
        "resnet-into-mobilenet.safetensors",
    );
    assert!(sentence.contains("does not fit mobilenet_v2"), "{sentence}");
}

#[test]
fn grey_images_take_a_colour_file_with_its_first_filters_summed() {
    let dict = resnet18_dict(5);
    let path = file("colour-for-grey.safetensors");
    write_safetensors(&dict, &path);
    let mut model = build(&ModelSpec::ResNet18ImageNet, 1, 5);
    let loaded = load(&mut model, &ModelSpec::ResNet18ImageNet, &path).expect("it adapts");
    assert!(loaded.grey_stem, "{loaded}");
    let stem = values(resnet(&model).conv1.weight.val());
    assert_eq!(stem.len(), 64 * 49);
    let t = dict
        .iter()
        .position(|(k, _)| k == "conv1.weight")
        .expect("a key");
    // Output filter 2, kernel position 10: the sum of its red, green and blue weights.
    let summed: f32 = (0..3).map(|c| value(t, 2 * 147 + c * 49 + 10, "")).sum();
    assert!((stem[2 * 49 + 10] - summed).abs() < 1e-6);
    // The rest of the network is the file's.
    let t = dict
        .iter()
        .position(|(k, _)| k == "layer1.0.bn1.weight")
        .expect("a key");
    assert_eq!(
        values(resnet(&model).layer1[0].bn1.gamma.val())[4],
        value(t, 4, "")
    );
}

#[test]
fn a_pages_file_bytes_load_as_the_file_does_and_a_pth_in_memory_names_its_way_out() {
    // A grey network from a colour file: the path that reads the file twice.
    let path = file("bytes-for-grey.safetensors");
    write_safetensors(&resnet18_dict(5), &path);
    let bytes = std::fs::read(&path).expect("just written");
    let spec = ModelSpec::ResNet18ImageNet;
    let mut from_disk = build(&spec, 1, 5);
    let mut from_bytes = build(&spec, 1, 5);
    let on_disk = load(&mut from_disk, &spec, &path).expect("it adapts");
    let in_memory = load_bytes(
        &mut from_bytes,
        &spec,
        Path::new("chosen weights/bytes-for-grey.safetensors"),
        &bytes,
    )
    .expect("it adapts");
    assert_eq!(on_disk, in_memory);
    assert!(in_memory.grey_stem);
    let weights = |model: &Classifier| export::safetensors_bytes(model, &spec).expect("exported");
    assert_eq!(weights(&from_disk), weights(&from_bytes));

    let mut model = build(&spec, 3, 5);
    let cut = load_bytes(
        &mut model,
        &spec,
        Path::new("cut.safetensors"),
        &bytes[..bytes.len() / 2],
    )
    .expect_err("half a file");
    assert!(matches!(cut, WeightsError::Unreadable { .. }), "{cut}");
    let pth = load_bytes(
        &mut model,
        &spec,
        Path::new("chosen weights/resnet18-f37072fd.pth"),
        &bytes,
    )
    .expect_err("a .pth from memory");
    let sentence = pth.to_string();
    assert!(
        sentence.contains("torch.load(\"resnet18-f37072fd.pth\")"),
        "{sentence}"
    );
    assert!(sentence.contains("desktop app"), "{sentence}");
}

#[test]
fn colour_images_and_a_grey_file_are_told_apart() {
    let mut dict = resnet18_dict(5);
    dict[0].1 = vec![64, 1, 7, 7];
    let sentence = refusal(
        &ModelSpec::ResNet18ImageNet,
        3,
        dict,
        "grey-file.safetensors",
    );
    assert!(sentence.contains("`conv1.weight`"), "{sentence}");
    assert!(sentence.contains("channel count"), "{sentence}");
}

#[test]
fn corrupt_truncated_and_absent_files_get_a_sentence() {
    let good = file("whole.safetensors");
    write_safetensors(&resnet18_dict(5), &good);
    let bytes = std::fs::read(&good).expect("just written");
    let truncated = file("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).expect("writable");
    let garbage = file("garbage.pth");
    std::fs::write(&garbage, b"this is not a zip archive, nor a pickle").expect("writable");
    let header = file("absurd-header.safetensors");
    let mut absurd = u64::MAX.to_le_bytes().to_vec();
    absurd.extend_from_slice(b"{}");
    std::fs::write(&header, absurd).expect("writable");
    let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 5);
    let absent = load(
        &mut model,
        &ModelSpec::ResNet18ImageNet,
        &file("absent.pth"),
    );
    assert!(
        matches!(absent, Err(WeightsError::NoFile { .. })),
        "{absent:?}"
    );
    for path in [truncated, garbage, header] {
        let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 5);
        let error =
            load(&mut model, &ModelSpec::ResNet18ImageNet, &path).expect_err("nothing to load");
        assert!(
            matches!(error, WeightsError::Unreadable { .. }),
            "{}: {error}",
            path.display()
        );
        assert!(error.to_string().contains("is not a readable"), "{error}");
    }
}

#[test]
fn models_without_torchvision_weights_refuse_a_file() {
    let mut model = build(&ModelSpec::Cnn, 3, 5);
    let error = load(&mut model, &ModelSpec::Cnn, Path::new("any.pth")).expect_err("a CNN");
    assert!(
        error.to_string().contains("CNN has no pretrained weights"),
        "{error}"
    );
}

#[test]
fn kiln_paths_read_back_as_torchvision_keys() {
    let arch = TorchvisionArch::MobileNetV2;
    assert_eq!(
        to_torchvision(arch, "stem.conv.weight"),
        "features.0.0.weight"
    );
    assert_eq!(
        to_torchvision(arch, "blocks.0.project_bn.running_var"),
        "features.1.conv.2.running_var"
    );
    assert_eq!(
        to_torchvision(arch, "blocks.16.expand.bn.bias"),
        "features.17.conv.0.1.bias"
    );
    assert_eq!(
        to_torchvision(arch, "last.conv.weight"),
        "features.18.0.weight"
    );
    assert_eq!(
        to_torchvision(arch, "classifier.weight"),
        "classifier.1.weight"
    );
    let arch = TorchvisionArch::ResNet50;
    assert_eq!(
        to_torchvision(arch, "layer3.0.downsample.bn.weight"),
        "layer3.0.downsample.1.weight"
    );
    assert_eq!(
        to_torchvision(arch, "layer3.1.conv3.weight"),
        "layer3.1.conv3.weight"
    );
}

/// Keeps the completed run's model in memory, where a test can look at its weights.
#[derive(Default)]
struct KeepModel(std::sync::Arc<std::sync::Mutex<Option<Classifier>>>);

impl crate::train::RunStore for KeepModel {
    fn save_model(
        &mut self,
        model: &Classifier,
        _: &crate::model::ModelCard,
    ) -> Result<(), String> {
        *self.0.lock().map_err(|e| e.to_string())? = Some(model.clone());
        Ok(())
    }
}

/// Two classes of 3×32×32 images: a bright top half or a bright bottom half, with noise.
fn halves_rgb(len: usize, seed: u64) -> crate::data::Split {
    let mut rng = crate::shuffle::ShuffleRng(seed);
    let mut split = crate::data::Split::default();
    for i in 0..len {
        let label = (i % 2) as u8;
        for _channel in 0..3 {
            for row in 0..32 {
                for _col in 0..32 {
                    let bright = (row < 16) == (label == 0);
                    let noise = (rng.next() % 80) as u8;
                    split.images.push(if bright { 150 + noise } else { noise });
                }
            }
        }
        split.labels.push(label);
    }
    split
}

fn rgb_dataset() -> crate::data::ImageDataset {
    crate::data::ImageDataset {
        name: "rgb halves".into(),
        shape: ImageShape {
            channels: 3,
            height: 32,
            width: 32,
        },
        class_names: vec!["top".into(), "bottom".into()],
        train: halves_rgb(32, 1),
        val: halves_rgb(8, 2),
        test: halves_rgb(8, 3),
        skipped: Vec::new(),
        notes: Vec::new(),
        sources: Vec::new(),
    }
}

/// Trains resnet18-imagenet from a torchvision-named file with `change` applied to the draft;
/// hands back the weights file's network and the trained one.
fn fine_tuned(
    name: &str,
    change: impl FnOnce(&mut crate::config::ExperimentDraft),
) -> (Classifier, Classifier) {
    fine_tuned_on(name, &rgb_dataset(), change)
}

/// [`fine_tuned`] on `data`.
fn fine_tuned_on(
    name: &str,
    data: &crate::data::ImageDataset,
    change: impl FnOnce(&mut crate::config::ExperimentDraft),
) -> (Classifier, Classifier) {
    let path = file(name);
    write_safetensors(&resnet18_dict(2), &path);
    let mut draft = crate::config::ExperimentDraft {
        model: ModelSpec::ResNet18ImageNet,
        weights: Some(WeightsSource::File(path.to_path_buf())),
        input_scaling: crate::config::InputScaling::ImageNet,
        batch_size: 8,
        epochs: 2,
        lr: 0.01,
        ..crate::config::ExperimentDraft::default()
    };
    change(&mut draft);
    let experiment = draft.validate().expect("a valid draft");
    let kept = KeepModel::default();
    let saved = std::sync::Arc::clone(&kept.0);
    let target = crate::train::TrainDevice::one(device(), "cpu", "CPU");
    let preparation = crate::train::Preparation {
        load_secs: 0.0,
        store: Box::new(kept),
        judge: None,
    };
    let control = crate::train::Control::new();
    crate::train::train(
        &experiment,
        data,
        &target,
        preparation,
        &control,
        &mut |_| {},
    )
    .expect("the run trains");
    let trained = saved
        .lock()
        .expect("not poisoned")
        .take()
        .expect("a saved model");
    let mut start = build(&ModelSpec::ResNet18ImageNet, 3, 2);
    load(&mut start, &ModelSpec::ResNet18ImageNet, &path).expect("it fits");
    (start, trained)
}

/// Whether two tensors hold the same values; the message says where they first differ, without
/// printing millions of numbers.
fn same<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> Result<(), String> {
    let (a, b) = (values(a), values(b));
    match a.iter().zip(&b).position(|(x, y)| x != y) {
        None if a.len() == b.len() => Ok(()),
        None => Err(format!("{} values against {}", a.len(), b.len())),
        Some(at) => Err(format!("value {at}: {} against {}", a[at], b[at])),
    }
}

fn resnet(model: &Classifier) -> &crate::model::ResNet {
    match model {
        Classifier::Torchvision(TorchvisionNet::ResNet(net)) => net,
        _ => panic!("a torchvision ResNet"),
    }
}

#[test]
fn a_linear_probe_trains_the_head_alone_and_freezes_batch_norm() {
    let (start, trained) = fine_tuned("probe.safetensors", |draft| {
        draft.fine_tune = crate::config::FineTune::LinearProbe;
    });
    let (before, after) = (resnet(&start), resnet(&trained));
    same(before.conv1.weight.val(), after.conv1.weight.val()).expect("unchanged");
    same(
        before.layer3[1].conv2.weight.val(),
        after.layer3[1].conv2.weight.val(),
    )
    .expect("unchanged");
    same(
        before.layer2[0].bn1.running_mean.value(),
        after.layer2[0].bn1.running_mean.value(),
    )
    .expect("batch norm statistics stay as the file had them");
    assert!(
        same(before.fc.weight.val(), after.fc.weight.val()).is_err(),
        "changed"
    );
}

#[test]
fn a_linear_probe_on_several_labels_per_image_trains_the_head_on_the_cached_features() {
    // Each image has its half's label, and every third one the other's too.
    let mut data = rgb_dataset();
    for split in [&mut data.train, &mut data.val, &mut data.test] {
        split.label_sets = split
            .labels
            .iter()
            .enumerate()
            .map(|(i, &label)| match i % 3 {
                0 => vec![0, 1],
                _ => vec![label],
            })
            .collect();
    }
    let (start, trained) = fine_tuned_on("probe-sets.safetensors", &data, |draft| {
        draft.fine_tune = crate::config::FineTune::LinearProbe;
    });
    let (before, after) = (resnet(&start), resnet(&trained));
    same(before.conv1.weight.val(), after.conv1.weight.val()).expect("unchanged");
    assert!(
        same(before.fc.weight.val(), after.fc.weight.val()).is_err(),
        "changed"
    );
}

#[test]
fn a_backbone_at_no_share_of_the_rate_keeps_its_weights_while_the_head_learns() {
    let (start, trained) = fine_tuned("scaled.safetensors", |draft| {
        draft.backbone_lr_scale = 0.0;
        draft.epochs = 1;
    });
    let (before, after) = (resnet(&start), resnet(&trained));
    same(
        before.layer1[0].conv1.weight.val(),
        after.layer1[0].conv1.weight.val(),
    )
    .expect("unchanged");
    assert!(
        same(before.fc.weight.val(), after.fc.weight.val()).is_err(),
        "changed"
    );
    // The whole network trains: batch norm follows the new data.
    assert!(
        same(
            before.bn1.running_mean.value(),
            after.bn1.running_mean.value()
        )
        .is_err(),
        "changed"
    );
}

#[test]
fn a_probe_that_unfreezes_goes_on_to_train_every_layer() {
    let (start, trained) = fine_tuned("unfreeze.safetensors", |draft| {
        draft.fine_tune = crate::config::FineTune::LinearProbe;
        draft.unfreeze_after = 1;
        draft.backbone_lr_scale = 1.0;
        // The best epoch may be the probe's; the last one has trained every layer.
        draft.keep = crate::config::Keep::Last;
    });
    let (before, after) = (resnet(&start), resnet(&trained));
    assert!(
        same(before.conv1.weight.val(), after.conv1.weight.val()).is_err(),
        "changed"
    );
    assert!(
        same(before.fc.weight.val(), after.fc.weight.val()).is_err(),
        "changed"
    );
}

#[test]
fn a_linear_probe_needs_weights_and_no_augmentation() {
    let draft = crate::config::ExperimentDraft {
        model: ModelSpec::ResNet18ImageNet,
        fine_tune: crate::config::FineTune::LinearProbe,
        ..crate::config::ExperimentDraft::default()
    };
    let error = draft
        .clone()
        .validate()
        .expect_err("no weights")
        .to_string();
    assert!(
        error.contains("trains a head on pretrained features"),
        "{error}"
    );
    let with_flip = crate::config::ExperimentDraft {
        weights: Some(WeightsSource::ImageNet),
        flip: true,
        ..draft.clone()
    };
    let error = with_flip.validate().expect_err("augmented").to_string();
    assert!(
        error.contains("augmentation has nothing to act on"),
        "{error}"
    );
    let never = crate::config::ExperimentDraft {
        weights: Some(WeightsSource::ImageNet),
        unfreeze_after: 5,
        epochs: 5,
        ..draft
    };
    let error = never.validate().expect_err("never unfreezes").to_string();
    assert!(error.contains("would never unfreeze"), "{error}");
}

#[test]
fn the_imagenet_word_reads_and_writes_as_itself_and_a_path_as_a_path() {
    let draft: crate::config::ExperimentDraft =
        toml::from_str("weights = \"imagenet\"").expect("a draft");
    assert_eq!(draft.weights, Some(WeightsSource::ImageNet));
    let draft: crate::config::ExperimentDraft =
        toml::from_str("weights = \"w/resnet.pth\"").expect("a draft");
    assert_eq!(
        draft.weights,
        Some(WeightsSource::File(PathBuf::from("w/resnet.pth")))
    );
    // The data folder given is searched first, as for data sets.
    let root = crate::data::test_dir("fetched-weights");
    std::fs::create_dir_all(root.join("weights")).expect("writable");
    std::fs::write(root.join("weights/resnet50-11ad3fa6.pth"), b"").expect("writable");
    let found = WeightsSource::ImageNet
        .resolve(&ModelSpec::ResNet50, Some(&root))
        .expect("found under the data folder");
    assert_eq!(found, root.join("weights/resnet50-11ad3fa6.pth"));
    let sentence = WeightsError::NotDownloaded { arch: "resnet50" }.to_string();
    assert!(
        sentence.contains("run `kiln weights fetch resnet50`"),
        "{sentence}"
    );
}

/// The names and shapes of an exported file, in name order.
fn exported(
    model: &Classifier,
    spec: &ModelSpec,
    name: &str,
) -> (kiln_test_support::ScratchFile, Vec<(String, Vec<usize>)>) {
    let path = file(name);
    export::write_safetensors(model, spec, &path).expect("the file is written");
    let bytes = std::fs::read(&path).expect("just written");
    let file = safetensors::SafeTensors::deserialize(&bytes).expect("a safetensors file");
    let mut names: Vec<_> = file
        .tensors()
        .into_iter()
        .map(|(name, view)| (name, view.shape().to_vec()))
        .collect();
    names.sort();
    (path, names)
}

#[test]
fn an_exported_torchvision_model_is_the_file_it_was_loaded_from() {
    let dict = resnet18_dict(5);
    let source = file("resnet18-source.safetensors");
    write_safetensors(&dict, &source);
    let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 5);
    load(&mut model, &ModelSpec::ResNet18ImageNet, &source).expect("it fits");
    let (path, names) = exported(
        &model,
        &ModelSpec::ResNet18ImageNet,
        "resnet18-out.safetensors",
    );
    let mut expected = dict.clone();
    expected.sort();
    assert_eq!(
        names, expected,
        "torchvision's keys and shapes, counters included"
    );
    let (a, b) = (
        std::fs::read(&source).unwrap(),
        std::fs::read(&path).unwrap(),
    );
    let (a, b) = (
        safetensors::SafeTensors::deserialize(&a).unwrap(),
        safetensors::SafeTensors::deserialize(&b).unwrap(),
    );
    for (key, _) in dict.iter().filter(|(k, _)| !k.ends_with("tracked")) {
        let (x, y) = (a.tensor(key).unwrap(), b.tensor(key).unwrap());
        assert!(x.data() == y.data(), "`{key}` comes back as it went in");
    }
}

#[test]
fn an_exported_mlp_cnn_vgg_and_cifar_resnet_use_their_sequentials_names() {
    let spec: ModelSpec = "mlp:8,6:relu:0.1".parse().expect("a spec");
    let shape = ImageShape {
        channels: 1,
        height: 4,
        width: 4,
    };
    let mlp = spec
        .init(shape, 3, InitScheme::PytorchDefault, &device())
        .expect("builds");
    let (_, names) = exported(&mlp, &spec, "mlp.safetensors");
    // Flatten, Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear.
    assert_eq!(
        names,
        [
            ("1.bias", vec![8]),
            ("1.weight", vec![8, 16]),
            ("4.bias", vec![6]),
            ("4.weight", vec![6, 8]),
            ("7.bias", vec![3]),
            ("7.weight", vec![3, 6]),
        ]
        .map(|(n, s)| (n.to_owned(), s))
        .to_vec()
    );
    let cnn = build(&ModelSpec::Cnn, 3, 4);
    let (_, names) = exported(&cnn, &ModelSpec::Cnn, "cnn.safetensors");
    let keys: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    for key in [
        "0.weight",
        "2.weight",
        "5.weight",
        "7.bias",
        "11.weight",
        "13.weight",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    let spec: ModelSpec = "vgg16-bn".parse().expect("a spec");
    let vgg = build(&spec, 3, 4);
    let (_, names) = exported(&vgg, &spec, "vgg.safetensors");
    let keys: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    // torchvision's vgg16_bn: the last convolution is features.40, its batch norm features.41.
    for key in [
        "features.0.weight",
        "features.1.running_var",
        "features.40.weight",
        "features.41.num_batches_tracked",
        "classifier.6.weight",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    let resnet = build(&ModelSpec::ResNet18, 3, 4);
    let (_, names) = exported(&resnet, &ModelSpec::ResNet18, "cifar-resnet.safetensors");
    assert!(names.contains(&("conv1.weight".to_owned(), vec![64, 3, 3, 3])));
    assert!(names.contains(&(
        "layer2.0.downsample.0.weight".to_owned(),
        vec![128, 64, 1, 1]
    )));
    assert!(names.contains(&("layer4.1.bn2.running_mean".to_owned(), vec![512])));
    assert!(names.contains(&("fc.weight".to_owned(), vec![4, 512])));
}

/// An exported ONNX file, decoded with the same protobuf messages.
fn onnx_of(
    model: &Classifier,
    spec: &ModelSpec,
    card: &crate::model::ModelCard,
    name: &str,
) -> onnx_proto::ModelProto {
    use prost::Message;
    let path = file(name);
    onnx::write_onnx(model, spec, card, &path).expect("the file is written");
    onnx_proto::ModelProto::decode(std::fs::read(&path).expect("written").as_slice())
        .expect("a protobuf ModelProto")
}

fn card(channels: usize, side: usize, classes: usize) -> crate::model::ModelCard {
    crate::model::ModelCard {
        shape: [channels, side, side],
        class_names: (0..classes).map(|c| format!("class {c}")).collect(),
        offset: vec![10.0; channels],
        scale: vec![0.01; channels],
        thresholds: None,
    }
}

/// How many nodes of each operator the graph has, and that each reads only what exists by then.
fn op_counts(model: &onnx_proto::ModelProto) -> std::collections::BTreeMap<String, usize> {
    let graph = model.graph.as_ref().expect("a graph");
    let mut known: std::collections::HashSet<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .chain(graph.input.iter().filter_map(|i| i.name.clone()))
        .collect();
    let mut counts = std::collections::BTreeMap::new();
    for node in &graph.node {
        for input in &node.input {
            assert!(
                known.contains(input),
                "{:?} reads `{input}` before it exists",
                node.op_type
            );
        }
        known.extend(node.output.iter().cloned());
        *counts
            .entry(node.op_type.clone().unwrap_or_default())
            .or_insert(0) += 1;
    }
    for output in &graph.output {
        assert!(known.contains(output.name.as_deref().unwrap_or_default()));
    }
    counts
}

#[test]
fn an_onnx_file_is_opset_17_with_raw_pixels_in_and_one_node_per_layer() {
    let mut model = build(&ModelSpec::ResNet18ImageNet, 3, 5);
    let path = file("resnet18-for-onnx.safetensors");
    write_safetensors(&resnet18_dict(5), &path);
    load(&mut model, &ModelSpec::ResNet18ImageNet, &path).expect("it fits");
    let onnx = onnx_of(
        &model,
        &ModelSpec::ResNet18ImageNet,
        &card(3, 32, 5),
        "resnet18.onnx",
    );
    assert_eq!(onnx.ir_version, Some(8));
    assert_eq!(onnx.opset_import[0].version, Some(onnx::OPSET));
    let graph = onnx.graph.as_ref().expect("a graph");
    assert_eq!(graph.input[0].name.as_deref(), Some("pixels"));
    let outputs: Vec<_> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    assert_eq!(outputs, ["logits", "probabilities"]);
    let counts = op_counts(&onnx);
    // 17 convolutions on the main path and 3 projections; 8 residual additions.
    assert_eq!(counts["Conv"], 20);
    assert_eq!(counts["BatchNormalization"], 20);
    assert_eq!(
        (counts["Add"], counts["MaxPool"], counts["Gemm"]),
        (8, 1, 1)
    );
    // The weights are the file's: layer1.0.conv1's first value.
    let conv = graph
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some("layer1.0.conv1.weight"))
        .expect("an initializer");
    let t = resnet18_dict(5)
        .iter()
        .position(|(k, _)| k == "layer1.0.conv1.weight")
        .unwrap();
    let first = f32::from_le_bytes(conv.raw_data.as_ref().unwrap()[..4].try_into().unwrap());
    assert_eq!(first, value(t, 0, ""));
    let mobilenet = build(&ModelSpec::MobileNetV2, 3, 4);
    let counts = op_counts(&onnx_of(
        &mobilenet,
        &ModelSpec::MobileNetV2,
        &card(3, 32, 4),
        "mnv2.onnx",
    ));
    // torchvision's MobileNetV2: 52 convolutions, 35 ReLU6, 10 blocks with a shortcut.
    assert_eq!(
        (counts["Conv"], counts["Clip"], counts["Add"]),
        (52, 35, 10)
    );
}

/// The logits of an exported MLP graph (Sub, Mul, Flatten, Gemm, Relu) for `pixels`, computed
/// straight from the decoded file: nothing of Kiln's is used but the bytes it wrote.
fn run_mlp_graph(model: &onnx_proto::ModelProto, pixels: &[f32], batch: usize) -> Vec<f32> {
    let graph = model.graph.as_ref().expect("a graph");
    let mut values: HashMap<String, (Vec<usize>, Vec<f32>)> = graph
        .initializer
        .iter()
        .map(|t| {
            let data = t.raw_data.as_deref().unwrap_or_default();
            let floats = data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            let dims = t.dims.iter().map(|&d| d as usize).collect();
            (t.name.clone().unwrap_or_default(), (dims, floats))
        })
        .collect();
    values.insert(
        "pixels".into(),
        (vec![batch, pixels.len() / batch], pixels.to_vec()),
    );
    for node in &graph.node {
        let input = |i: usize| values[&node.input[i]].clone();
        let (a_dims, a) = input(0);
        let out = match node.op_type.as_deref().unwrap_or_default() {
            // Per-channel constants of one channel broadcast over every pixel.
            "Sub" => a.iter().map(|x| x - input(1).1[0]).collect(),
            "Mul" => a.iter().map(|x| x * input(1).1[0]).collect(),
            "Flatten" | "Identity" => a.clone(),
            "Relu" => a.iter().map(|x| x.max(0.0)).collect(),
            "Gemm" => {
                let ((w_dims, w), (_, b)) = (input(1), input(2));
                let (rows, inner, cols) = (batch, w_dims[0], w_dims[1]);
                let mut y = vec![0.0; rows * cols];
                for r in 0..rows {
                    for c in 0..cols {
                        y[r * cols + c] = b[c]
                            + (0..inner)
                                .map(|k| a[r * inner + k] * w[k * cols + c])
                                .sum::<f32>();
                    }
                }
                values.insert(node.output[0].clone(), (vec![rows, cols], y));
                continue;
            }
            "Softmax" => a.clone(),
            other => panic!("an MLP graph has no {other}"),
        };
        values.insert(node.output[0].clone(), (a_dims, out));
    }
    values["logits"].1.clone()
}

#[test]
fn an_exported_mlp_computes_kilns_logits_from_raw_pixels() {
    let spec: ModelSpec = "mlp:12,7".parse().expect("a spec");
    let shape = ImageShape {
        channels: 1,
        height: 4,
        width: 4,
    };
    let model = spec
        .init(shape, 3, InitScheme::PytorchDefault, &device())
        .expect("builds");
    let card = card(1, 4, 3);
    let onnx = onnx_of(&model, &spec, &card, "mlp.onnx");
    let pixels: Vec<f32> = (0..2 * 16).map(|i| ((i * 37) % 256) as f32).collect();
    let from_file = run_mlp_graph(&onnx, &pixels, 2);
    // Kiln's forward on the same pixels, scaled as the card says.
    let scaled: Vec<f32> = pixels.iter().map(|p| (p - 10.0) * 0.01).collect();
    let images = Tensor::<4>::from_data(
        burn::tensor::TensorData::new(scaled, [2, 1, 4, 4]),
        &device(),
    );
    let kiln = values(model.for_eval().forward(images));
    assert_eq!(from_file.len(), 6);
    for (a, b) in from_file.iter().zip(&kiln) {
        assert!((a - b).abs() < 1e-5, "{from_file:?} against {kiln:?}");
    }
}

/// The logits and probabilities tract computes from the ONNX file at `path`: a runtime that
/// shares nothing with Kiln but the file.
fn run_in_tract(path: &Path, pixels: &[f32], shape: [usize; 4]) -> (Vec<f32>, Vec<f32>) {
    use tract_onnx::prelude::*;
    let model = tract_onnx::onnx()
        .model_for_path(path)
        .and_then(|model| model.with_input_fact(0, f32::fact(shape).into()))
        .and_then(|model| model.into_optimized())
        .and_then(|model| model.into_runnable())
        .unwrap_or_else(|e| panic!("tract takes {}: {e:?}", path.display()));
    let input = Tensor::from_shape(&shape, pixels).expect("a tensor of the input's shape");
    let outputs = model
        .run(tvec!(input.into()))
        .expect("tract runs the graph");
    let read = |i: usize| {
        let view = outputs[i]
            .to_plain_array_view::<f32>()
            .expect("f32 outputs");
        view.iter().copied().collect::<Vec<f32>>()
    };
    (read(0), read(1))
}

/// Kiln's logits and probabilities for raw `pixels`, scaled as `card` says per channel.
fn kiln_outputs(
    model: &Classifier,
    card: &crate::model::ModelCard,
    pixels: &[f32],
    shape: [usize; 4],
) -> (Vec<f32>, Vec<f32>) {
    let plane = shape[2] * shape[3];
    let scaled: Vec<f32> = pixels
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let channel = (i / plane) % shape[1];
            (p - card.offset[channel]) * card.scale[channel]
        })
        .collect();
    let images = Tensor::<4>::from_data(burn::tensor::TensorData::new(scaled, shape), &device());
    let logits = model.for_eval().forward(images);
    let probabilities = card.probabilities(logits.clone());
    (values(logits), values(probabilities))
}

#[test]
fn a_multi_label_model_exports_to_onnx_ending_in_a_sigmoid_and_says_so_in_its_metadata() {
    let spec: ModelSpec = "mlp:12".parse().expect("a spec");
    let model = build(&spec, 1, 3);
    let labels = crate::model::ModelCard {
        thresholds: Some(vec![0.5, 0.25, 0.75]),
        ..card(1, 32, 3)
    };
    let path = file("multi-label.onnx");
    onnx::write_onnx(&model, &spec, &labels, &path).expect("the file is written");
    let onnx = onnx_of(&model, &spec, &labels, "multi-label-decoded.onnx");
    let counts = op_counts(&onnx);
    assert_eq!(
        (counts.get("Sigmoid"), counts.get("Softmax")),
        (Some(&1), None)
    );
    let metadata: HashMap<String, String> = onnx
        .metadata_props
        .iter()
        .map(|e| {
            (
                e.key.clone().unwrap_or_default(),
                e.value.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(metadata["output"], "sigmoid");
    assert_eq!(metadata["thresholds"], "[0.5,0.25,0.75]");
    assert_eq!(metadata["classes"], r#"["class 0","class 1","class 2"]"#);
    let input = [2, 1, 32, 32];
    let pixels: Vec<f32> = (0..2 * 32 * 32).map(|i| ((i * 53) % 256) as f32).collect();
    let (tract_logits, tract_p) = run_in_tract(&path, &pixels, input);
    let (kiln_logits, kiln_p) = kiln_outputs(&model, &labels, &pixels, input);
    assert!(largest_difference(&tract_logits, &kiln_logits) < 1e-5);
    assert!(largest_difference(&tract_p, &kiln_p) < 1e-6);
    // Independent per label: the probabilities of an image need not sum to 1.
    let sigmoid = |x: f32| 1.0 / (1.0 + (-x).exp());
    for (p, logit) in tract_p.iter().zip(&tract_logits) {
        assert!((p - sigmoid(*logit)).abs() < 1e-6);
    }
    // A single-label card keeps its softmax and says so.
    let single = onnx_of(&model, &spec, &card(1, 32, 3), "single-label.onnx");
    assert_eq!(op_counts(&single).get("Softmax"), Some(&1));
    assert!(
        single
            .metadata_props
            .iter()
            .any(|e| e.value.as_deref() == Some("softmax"))
    );
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn every_architecture_exported_to_onnx_computes_in_tract_what_it_computes_in_kiln() {
    let classes = 5;
    // The torchvision networks carry a weights file, so their batch norms hold real statistics.
    let cases: Vec<(&str, usize, usize, Option<StateDict>)> = vec![
        ("mlp:24,12", 1, 12, None),
        ("mlp:16:gelu", 3, 8, None),
        ("mlp:10:tanh", 1, 8, None),
        ("cnn", 1, 28, None),
        ("vgg16-bn", 3, 32, None),
        // Upsampled inside the graph: Kiln's bilinear resize against ONNX's Resize.
        ("vgg16@40", 3, 24, None),
        ("resnet18", 3, 32, None),
        ("resnet18-imagenet", 3, 32, Some(resnet18_dict(classes))),
        (
            "resnet34",
            3,
            32,
            Some(resnet_state_dict([3, 4, 6, 3], false, classes)),
        ),
        (
            "resnet50",
            3,
            32,
            Some(resnet_state_dict([3, 4, 6, 3], true, classes)),
        ),
        ("mobilenet-v2", 3, 32, Some(mobilenet_state_dict(classes))),
        // Fresh batch norms: running statistics of 0 and 1, which the graph carries all the same.
        ("efficientnet-b0", 3, 32, None),
        ("convnext-tiny", 3, 32, None),
        ("vit-b-16", 3, 32, None),
    ];
    for (name, channels, side, dict) in cases {
        let spec: ModelSpec = name.parse().expect("a model spec");
        let shape = ImageShape {
            channels,
            height: side,
            width: side,
        };
        // PyTorch's default draws shrink a signal layer by layer; through EfficientNet's 16
        // blocks it would reach the head as almost nothing, and the logits as the head's biases.
        let init = if name.starts_with("efficientnet") {
            InitScheme::KaimingNormal
        } else {
            InitScheme::PytorchDefault
        };
        let mut model = spec
            .init(shape, classes, init, &device())
            .expect("the model builds");
        if let Some(dict) = dict {
            let weights = file(&format!("{name}-for-tract.safetensors"));
            write_safetensors_of(&dict, &weights, well_scaled);
            load(&mut model, &spec, &weights).expect("the file fits");
        }
        // Fresh, EfficientNet's sixteen blocks each halve what passes (the squeeze-excitation
        // gate starts near 0.5): open the gates, so the head sees more than its biases.
        if let Classifier::Torchvision(TorchvisionNet::EfficientNet(net)) = &mut model {
            for block in net.stages.iter_mut().flatten() {
                let [width, ..] = block.se.fc2.weight.dims();
                block.se.fc2.bias = Some(burn::module::Param::from_tensor(Tensor::full(
                    [width],
                    3.0,
                    &device(),
                )));
            }
        }
        // ConvNeXt's layer scale starts at 1e-6, where its blocks would hardly count.
        if let Classifier::Torchvision(TorchvisionNet::ConvNext(net)) = &mut model {
            for block in net.stages.iter_mut().flatten() {
                let [width, _, _] = block.layer_scale.dims();
                block.layer_scale =
                    burn::module::Param::from_tensor(Tensor::full([width, 1, 1], 0.3, &device()));
            }
        }
        let card = crate::model::ModelCard {
            shape: [channels, side, side],
            class_names: (0..classes).map(|c| format!("class {c}")).collect(),
            offset: [12.0, 115.0, 200.0][..channels].to_vec(),
            scale: [0.02, 0.01, 0.015][..channels].to_vec(),
            thresholds: None,
        };
        let path = file(&format!("{name}.onnx"));
        onnx::write_onnx(&model, &spec, &card, &path).expect("the file is written");
        let input = [2, channels, side, side];
        let pixels: Vec<f32> = (0..input.iter().product::<usize>())
            .map(|i| ((i * 37 + i / 97) % 256) as f32)
            .collect();
        let (logits, probabilities) = run_in_tract(&path, &pixels, input);
        let (kiln_logits, kiln_probabilities) = kiln_outputs(&model, &card, &pixels, input);
        let spread = largest_difference(&kiln_logits, &vec![0.0; kiln_logits.len()]);
        assert!(
            (1e-3..1e3).contains(&spread),
            "{name}: logits of {spread} say nothing"
        );
        let (logit_gap, probability_gap) = (
            largest_difference(&logits, &kiln_logits),
            largest_difference(&probabilities, &kiln_probabilities),
        );
        eprintln!(
            "{name}: spread {spread:.3e} logit gap {logit_gap:.2e} probability gap {probability_gap:.2e}"
        );
        assert!(
            logit_gap < 1e-4 && probability_gap < 1e-4,
            "{name}: tract and Kiln differ by {logit_gap} in logits, {probability_gap} in probabilities"
        );
    }
}
