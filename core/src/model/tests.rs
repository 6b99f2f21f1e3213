/// EfficientNet's, ConvNeXt's and ViT's blocks against plain-Rust arithmetic.
mod backbones;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use super::layers::{conv, linear};
use super::*;

fn shape(channels: usize, height: usize, width: usize) -> ImageShape {
    ImageShape {
        channels,
        height,
        width,
    }
}

fn values<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .try_into_vec_as::<f32>()
        .expect("f32 readback")
}

fn images(device: &Device, dims: [usize; 4]) -> Tensor<4> {
    device.seed(7);
    Tensor::random(dims, Distribution::Uniform(0.0, 1.0), device)
}

#[test]
fn spec_text_round_trips() {
    for text in [
        "mlp:512,512",
        "mlp:8,8,8",
        "mlp:512,512:tanh",
        "mlp:512,512:gelu",
        "mlp:512,512:relu:0.2",
        "mlp:64:tanh:0.5",
        "cnn",
        "vgg16",
        "vgg16-bn",
        "vgg16@224",
        "vgg16-bn@224",
        "resnet18",
    ] {
        let spec: ModelSpec = text.parse().expect(text);
        assert_eq!(spec.to_string(), text, "canonical form of {text}");
        assert_eq!(spec.to_string().parse::<ModelSpec>(), Ok(spec));
    }
}

#[test]
fn spec_text_short_forms() {
    let parse = |text: &str| text.parse::<ModelSpec>().expect(text).to_string();
    assert_eq!(parse("mlp"), "mlp:512,512");
    assert_eq!(parse(" MLP:8,8:TANH "), "mlp:8,8:tanh");
    assert_eq!(parse("mlp:512,512:0.2"), "mlp:512,512:relu:0.2");
    assert_eq!(parse("mlp:512,512:0.2:gelu"), "mlp:512,512:gelu:0.2");
    assert_eq!(parse("mlp:512:relu:0"), "mlp:512");
    assert_eq!(parse("ResNet-18"), "resnet18");
    assert_eq!(
        "mlp".parse::<ModelSpec>(),
        Ok(ModelSpec::Mlp {
            widths: vec![512, 512],
            activation: Activation::Relu,
            dropout: 0.0
        })
    );
    assert_eq!(
        "vgg16-bn@224".parse::<ModelSpec>(),
        Ok(ModelSpec::Vgg16 {
            batch_norm: true,
            resize_to: Some(224)
        })
    );
}

#[test]
fn spec_text_rejects() {
    let err = |text: &str| text.parse::<ModelSpec>().expect_err(text);
    assert_eq!(err("mlp:0"), ModelError::ZeroWidth { layer: 1 });
    assert_eq!(err("mlp:512,0"), ModelError::ZeroWidth { layer: 2 });
    assert_eq!(
        err("mlp:abc"),
        ModelError::InvalidWidth { part: "abc".into() }
    );
    assert_eq!(err("mlp:"), ModelError::InvalidWidth { part: "".into() });
    assert_eq!(
        err("vgg17"),
        ModelError::UnknownModel {
            text: "vgg17".into()
        }
    );
    assert!(matches!(err(""), ModelError::UnknownModel { .. }));
    assert!(matches!(err("vgg16-xx"), ModelError::UnknownModel { .. }));
    assert_eq!(
        err("mlp:512,512:relu:1.5"),
        ModelError::InvalidDropout { value: 1.5 }
    );
    assert_eq!(err("mlp:512:1"), ModelError::InvalidDropout { value: 1.0 });
    assert_eq!(
        err("mlp:512:-0.1"),
        ModelError::InvalidDropout { value: -0.1 }
    );
    assert!(matches!(
        err("mlp:512:nan"),
        ModelError::InvalidDropout { .. }
    ));
    assert!(matches!(
        err("mlp:512:relu:tanh"),
        ModelError::RepeatedMlpOption { .. }
    ));
    assert_eq!(
        err("mlp:512:swish"),
        ModelError::InvalidMlpOption {
            part: "swish".into()
        }
    );
    assert_eq!(
        err("vgg16@big"),
        ModelError::InvalidResize { part: "big".into() }
    );
    assert_eq!(
        err("vgg16@16"),
        ModelError::ResizeTooSmall { size: 16, min: 32 }
    );
    // Every message is one sentence a person can act on.
    for error in [err("mlp:abc"), err("vgg17"), err("mlp:0"), err("mlp:512:2")] {
        let message = error.to_string();
        assert!(
            message.ends_with('.') && !message.contains('\n'),
            "{message}"
        );
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Wrapper {
    model: ModelSpec,
    init: InitScheme,
}

#[test]
fn spec_toml_round_trips_with_defaults() {
    let parsed: Wrapper = toml::from_str("init = \"glorot-uniform\"\n[model]\nkind = \"mlp\"\n")
        .expect("minimal mlp");
    assert_eq!(parsed.model, ModelSpec::default());
    assert_eq!(parsed.init, InitScheme::GlorotUniform);

    let parsed: Wrapper = toml::from_str(
        "init = \"pytorch-default\"\n[model]\nkind = \"vgg16\"\nbatch_norm = true\nresize_to = 224\n",
    )
    .expect("vgg16");
    assert_eq!(
        parsed.model,
        ModelSpec::Vgg16 {
            batch_norm: true,
            resize_to: Some(224)
        }
    );

    for spec in [
        "mlp:8,8:tanh:0.25",
        "cnn",
        "vgg16",
        "vgg16-bn@64",
        "resnet18",
    ] {
        let wrapper = Wrapper {
            model: spec.parse().expect(spec),
            init: InitScheme::PytorchDefault,
        };
        let text = toml::to_string(&wrapper).expect("serialize");
        let back: Wrapper = toml::from_str(&text).expect(&text);
        assert_eq!(back, wrapper, "{text}");
    }

    assert!(
        toml::from_str::<Wrapper>("init = \"pytorch\"\n[model]\nkind = \"resnet18\"\n").is_ok()
    );
    assert!(
        toml::from_str::<Wrapper>("init = \"pytorch\"\n[model]\nkind = \"mlp\"\nwidth = 3\n")
            .is_err(),
        "unknown fields are rejected"
    );
    assert!(toml::from_str::<Wrapper>("init = \"he\"\n[model]\nkind = \"cnn\"\n").is_err());
}

#[test]
fn init_scheme_text() {
    for scheme in [InitScheme::PytorchDefault, InitScheme::GlorotUniform] {
        assert_eq!(scheme.to_string().parse::<InitScheme>().unwrap(), scheme);
    }
    assert_eq!(
        " Keras".parse::<InitScheme>().unwrap(),
        InitScheme::GlorotUniform
    );
    let refusal = "he".parse::<InitScheme>().unwrap_err().to_string();
    assert_eq!(
        refusal,
        "init = he: expected pytorch-default, glorot-uniform or kaiming-normal"
    );
}

#[test]
fn validate_checks_input_size() {
    let vgg: ModelSpec = "vgg16".parse().expect("vgg16");
    assert!(matches!(
        vgg.validate(shape(3, 8, 8), 10),
        Err(ModelError::InputTooSmall { min: 32, .. })
    ));
    assert!(vgg.validate(shape(3, 32, 32), 10).is_ok());
    assert!(matches!(
        vgg.validate(shape(3, 32, 31), 10),
        Err(ModelError::InputTooSmall { .. })
    ));
    // The resize happens before the network, so small images are fine with @32.
    let resized: ModelSpec = "vgg16@32".parse().expect("vgg16@32");
    assert!(resized.validate(shape(1, 8, 8), 10).is_ok());

    let cnn = ModelSpec::Cnn;
    assert!(matches!(
        cnn.validate(shape(1, 3, 28), 10),
        Err(ModelError::InputTooSmall { min: 4, .. })
    ));
    assert!(cnn.validate(shape(1, 4, 4), 10).is_ok());
    assert!(matches!(
        ModelSpec::ResNet18.validate(shape(3, 4, 4), 10),
        Err(ModelError::InputTooSmall { min: 8, .. })
    ));
    let message = vgg
        .validate(shape(3, 8, 8), 10)
        .expect_err("too small")
        .to_string();
    assert!(
        message.contains("32×32") && message.contains("8×8"),
        "{message}"
    );

    let mlp = ModelSpec::default();
    assert!(mlp.validate(shape(1, 1, 1), 2).is_ok());
    assert_eq!(
        mlp.validate(shape(1, 28, 28), 0),
        Err(ModelError::NoClasses)
    );
    assert!(matches!(
        mlp.validate(shape(0, 28, 28), 10),
        Err(ModelError::EmptyImages { .. })
    ));
    let huge: ModelSpec = "mlp:100000,100000".parse().expect("huge");
    assert!(matches!(
        huge.validate(shape(1, 28, 28), 10),
        Err(ModelError::TooManyParameters { .. })
    ));
    let bad = ModelSpec::Mlp {
        widths: vec![],
        activation: Activation::Relu,
        dropout: 0.0,
    };
    assert_eq!(
        bad.validate(shape(1, 28, 28), 10),
        Err(ModelError::NoHiddenLayers)
    );
}

#[test]
fn mlp_param_count_matches_fashion_reference() {
    let model = ModelSpec::default()
        .init(
            shape(1, 28, 28),
            10,
            InitScheme::PytorchDefault,
            &Device::flex(),
        )
        .expect("mlp");
    assert_eq!(model.num_params(), 669_706);
    assert_eq!(mlp_param_count(784, &[512, 512], 10), Some(669_706));
}

#[test]
fn large_model_param_counts_match_reference_implementations() {
    // Parameters are lazy until first used, so counting does not allocate 138 M floats.
    let device = Device::flex();
    let count = |text: &str, input: ImageShape, classes: usize| {
        text.parse::<ModelSpec>()
            .expect(text)
            .init(input, classes, InitScheme::PytorchDefault, &device)
            .expect(text)
            .num_params()
    };
    // torchvision.models.vgg16() / vgg16_bn() with 1000 classes.
    assert_eq!(count("vgg16", shape(3, 224, 224), 1000), 138_357_544);
    assert_eq!(count("vgg16-bn", shape(3, 224, 224), 1000), 138_365_992);
    assert_eq!(count("vgg16@224", shape(3, 32, 32), 1000), 138_357_544);
    // Burn's own count adds BatchNorm's running mean and variance (2 × 4224 channels).
    let bn = "vgg16-bn"
        .parse::<ModelSpec>()
        .expect("vgg16-bn")
        .init(
            shape(3, 224, 224),
            1000,
            InitScheme::PytorchDefault,
            &device,
        )
        .expect("vgg16-bn");
    assert_eq!(Module::num_params(&bn), 138_365_992 + 2 * 4224);
    // The CIFAR ResNet-18 (kuangliu/pytorch-cifar) with 10 classes.
    assert_eq!(count("resnet18", shape(3, 32, 32), 10), 11_173_962);
    // 13 convs (14 714 688) + 512·512+512 + 512·512+512 + 512·10+10.
    assert_eq!(
        count("vgg16", shape(3, 32, 32), 10),
        14_714_688 + 262_656 * 2 + 5_130
    );
}

#[test]
fn forward_shapes() {
    let device = Device::flex();
    let cases: [(&str, [usize; 4]); 7] = [
        ("mlp:16,8:gelu:0.1", [2, 1, 28, 28]),
        ("cnn", [2, 1, 28, 28]),
        ("cnn", [2, 3, 40, 36]),
        ("vgg16", [2, 3, 32, 32]),
        ("vgg16-bn", [2, 3, 32, 32]),
        ("vgg16@32", [2, 3, 12, 12]),
        ("resnet18", [2, 3, 32, 32]),
    ];
    for (text, dims) in cases {
        let spec: ModelSpec = text.parse().expect(text);
        let [_, channels, height, width] = dims;
        let model = spec
            .init(
                shape(channels, height, width),
                10,
                InitScheme::PytorchDefault,
                &device,
            )
            .expect(text);
        let logits = model.forward(images(&device, dims));
        assert_eq!(logits.dims(), [2, 10], "{text}");
        assert!(values(logits).iter().all(|v| v.is_finite()), "{text}");
    }
}

#[test]
fn resize_and_batch_norm_train_on_autodiff() {
    // The bilinear resize and batch norm must have backward passes on the training device.
    let device = Device::flex().autodiff();
    let model = "vgg16-bn@32"
        .parse::<ModelSpec>()
        .expect("spec")
        .init(shape(3, 8, 8), 4, InitScheme::GlorotUniform, &device)
        .expect("vgg");
    let logits = model.forward(images(&device, [2, 3, 8, 8]));
    assert_eq!(logits.dims(), [2, 4]);
    let grads = GradientsParams::from_grads(logits.sum().backward(), &model);
    assert!(!grads.is_empty());
}

#[test]
fn cnn_shrinks_large_feature_maps() {
    let device = Device::flex();
    let model = Cnn::new(3, 64, 64, 10, InitScheme::PytorchDefault.into(), &device);
    assert!(model.shrink.is_some());
    assert_eq!(Cnn::flat_features(64, 64), 64 * 8 * 8);
    assert_eq!(Cnn::flat_features(28, 28), 64 * 7 * 7);
    let logits = model.forward(images(&device, [1, 3, 64, 64]));
    assert_eq!(logits.dims(), [1, 10]);
}

#[test]
fn pytorch_default_bounds() {
    let device = Device::flex();
    device.seed(1);
    let layer = linear(100, 50, InitScheme::PytorchDefault.into(), &device);
    let weights = values(layer.weight.val());
    assert_eq!(weights.len(), 5000);
    assert!(weights.iter().all(|w| w.abs() <= 0.1), "U(±1/√100)");
    assert!(weights.iter().any(|w| w.abs() > 0.09), "spans the range");
    let bias = values(layer.bias.expect("bias").val());
    assert!(bias.iter().all(|b| b.abs() <= 0.1));
    assert!(bias.iter().any(|b| *b != 0.0), "PyTorch draws biases too");

    // Conv: fan_in = 3·3·3 = 27.
    let layer = conv(
        [3, 8],
        3,
        1,
        1,
        true,
        InitScheme::PytorchDefault.into(),
        &device,
    );
    let bound = 1.0 / 27f32.sqrt();
    let weights = values(layer.weight.val());
    assert!(weights.iter().all(|w| w.abs() <= bound));
    assert!(weights.iter().any(|w| w.abs() > 0.8 * bound));
    let bias = values(layer.bias.expect("bias").val());
    assert!(bias.iter().all(|b| b.abs() <= bound) && bias.iter().any(|b| *b != 0.0));
}

#[test]
fn glorot_bounds_and_zero_bias() {
    let device = Device::flex();
    device.seed(2);
    let layer = linear(100, 50, InitScheme::GlorotUniform.into(), &device);
    let bound = (6.0f32 / 150.0).sqrt();
    let weights = values(layer.weight.val());
    assert!(weights.iter().all(|w| w.abs() <= bound));
    assert!(
        weights.iter().any(|w| w.abs() > 0.15),
        "wider than PyTorch's ±0.1"
    );
    let bias = values(layer.bias.expect("bias").val());
    assert_eq!(bias.len(), 50);
    assert!(bias.iter().all(|b| *b == 0.0));

    // Conv: fan_in = 27, fan_out = 72.
    let layer = conv(
        [3, 8],
        3,
        1,
        1,
        true,
        InitScheme::GlorotUniform.into(),
        &device,
    );
    let bound = (6.0f32 / 99.0).sqrt();
    let weights = values(layer.weight.val());
    assert!(weights.iter().all(|w| w.abs() <= bound));
    assert!(weights.iter().any(|w| w.abs() > 0.8 * bound));
    assert!(
        values(layer.bias.expect("bias").val())
            .iter()
            .all(|b| *b == 0.0)
    );

    // Every layer of a built model follows the scheme.
    let model = ModelSpec::default()
        .init(shape(1, 4, 4), 3, InitScheme::GlorotUniform, &device)
        .expect("mlp");
    let Classifier::Mlp(mlp) = model else {
        panic!("expected an MLP");
    };
    for layer in mlp.hidden.iter().chain([&mlp.output]) {
        let bias = values(layer.bias.as_ref().expect("bias").val());
        assert!(bias.iter().all(|b| *b == 0.0));
    }
}

#[test]
fn dropout_only_in_training() {
    let device = Device::flex().autodiff();
    let spec: ModelSpec = "mlp:64:0.5".parse().expect("spec");
    let model = spec
        .init(shape(1, 4, 4), 3, InitScheme::PytorchDefault, &device)
        .expect("mlp");
    let input = images(&device, [4, 1, 4, 4]);

    let first = values(model.forward(input.clone()));
    let second = values(model.forward(input.clone()));
    assert_ne!(first, second, "dropout draws a new mask each training step");

    let eval = model.for_eval();
    let plain = input.clone().inner();
    let first = values(eval.forward(plain.clone()));
    let second = values(eval.forward(plain.clone()));
    assert_eq!(first, second, "evaluation is deterministic");
    // Even fed an autodiff tensor, the snapshot's flags keep dropout off.
    assert_eq!(values(eval.forward(input.clone())), first);
    // The training model is still in training mode afterwards.
    assert_ne!(
        values(model.forward(input.clone())),
        values(model.forward(input))
    );
}

#[test]
fn batch_norm_uses_batch_statistics_only_in_training() {
    let device = Device::flex().autodiff();
    let model = ModelSpec::ResNet18
        .init(shape(1, 8, 8), 3, InitScheme::PytorchDefault, &device)
        .expect("resnet");
    let batch = images(&device, [4, 1, 8, 8]);
    let first = batch.clone().slice(0..1);

    // Training: a sample's output depends on the rest of its batch.
    let whole = values(model.forward(batch.clone()));
    let alone = values(model.forward(first.clone()));
    assert!(
        whole[..3]
            .iter()
            .zip(&alone)
            .any(|(a, b)| (a - b).abs() > 1e-4)
    );

    // Evaluation: running statistics, so the sample's logits do not depend on the batch.
    let eval = model.for_eval();
    let whole = values(eval.forward(batch.inner()));
    let alone = values(eval.forward(first.inner()));
    for (a, b) in whole[..3].iter().zip(&alone) {
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }
}

#[test]
fn one_sgd_step_reduces_the_loss() {
    let device = Device::flex().autodiff();
    device.seed(3);
    let spec: ModelSpec = "mlp:16".parse().expect("spec");
    let mut model = spec
        .init(shape(1, 4, 4), 3, InitScheme::PytorchDefault, &device)
        .expect("mlp");
    let inputs = images(&device, [8, 1, 4, 4]);
    let targets = Tensor::<1, Int>::from_data(
        TensorData::new(vec![0i64, 1, 2, 0, 1, 2, 0, 1], [8]),
        &device,
    );
    let criterion = CrossEntropyLossConfig::new().init(&device);
    let loss_of = |model: &Classifier| {
        criterion
            .forward(model.forward(inputs.clone()), targets.clone())
            .into_scalar::<f32>()
    };

    let before = loss_of(&model);
    let mut optim = SgdConfig::new().init();
    let loss = criterion.forward(model.forward(inputs.clone()), targets.clone());
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    model = optim.step(0.5, model, grads);
    let after = loss_of(&model);
    assert!(after < before, "loss {before} -> {after}");
}

#[test]
fn module_derive_visits_every_variant() {
    // `valid()` keeps the variant and the weights.
    let device = Device::flex();
    let model = ModelSpec::Cnn
        .init(shape(1, 8, 8), 4, InitScheme::PytorchDefault, &device)
        .expect("cnn");
    let input = images(&device, [1, 1, 8, 8]);
    let a = values(model.forward(input.clone()));
    let eval = model.for_eval();
    assert!(matches!(eval, Classifier::Cnn(_)));
    assert_eq!(values(eval.forward(input)), a);
    assert_eq!(eval.num_params(), model.num_params());
}

#[test]
fn kaiming_normal_draws_convolutions_as_torchvision_does_with_zero_biases() {
    let device = Device::flex();
    device.seed(3);
    // fan_out = 64 outputs × 3·3 = 576: std √(2/576).
    let layer = conv(
        [16, 64],
        3,
        1,
        1,
        true,
        InitScheme::KaimingNormal.into(),
        &device,
    );
    let weights = values(layer.weight.val());
    let mean = weights.iter().sum::<f32>() / weights.len() as f32;
    let std =
        (weights.iter().map(|w| (w - mean).powi(2)).sum::<f32>() / weights.len() as f32).sqrt();
    let expected = (2.0f32 / 576.0).sqrt();
    assert!(
        (std / expected - 1.0).abs() < 0.05,
        "std {std} against {expected}"
    );
    assert!(mean.abs() < 0.01 * expected * 10.0, "mean {mean}");
    let bias = values(layer.bias.expect("bias").val());
    assert!(bias.iter().all(|b| *b == 0.0));
}

#[test]
fn conv_init_follows_init_unless_it_names_its_own_scheme() {
    let layers = |conv_init| {
        LayerDefaults::new(
            InitScheme::GlorotUniform,
            conv_init,
            [0.1, 1e-5],
            ConvPadding::Symmetric,
        )
    };
    assert_eq!(
        layers(ConvInit::AsInit).conv_init,
        InitScheme::GlorotUniform
    );
    let own = layers(ConvInit::KaimingNormal);
    assert_eq!(
        (own.dense_init, own.conv_init),
        (InitScheme::GlorotUniform, InitScheme::KaimingNormal)
    );
    // A config written before conv_init existed reads as before: one scheme for both.
    let old: crate::config::ExperimentDraft =
        crate::config::ExperimentDraft::from_toml("init = \"glorot-uniform\"\n", "old").unwrap();
    assert_eq!(old.layers(), InitScheme::GlorotUniform.into());
}

#[test]
fn batch_norm_layers_take_the_runs_momentum_and_epsilon() {
    let device = Device::flex();
    let keras = LayerDefaults::new(
        InitScheme::GlorotUniform,
        ConvInit::AsInit,
        [0.01, 1e-3],
        ConvPadding::Same,
    );
    let Classifier::ResNet18(net) = ModelSpec::ResNet18
        .init(shape(3, 8, 8), 2, keras, &device)
        .unwrap()
    else {
        panic!("a ResNet-18");
    };
    let norms = [&net.stem_norm, &net.blocks[7].norm2];
    for norm in norms {
        assert_eq!((norm.momentum, norm.epsilon), (0.01, 1e-3));
    }
    let Classifier::ResNet18(net) = ModelSpec::ResNet18
        .init(shape(3, 8, 8), 2, InitScheme::PytorchDefault, &device)
        .unwrap()
    else {
        panic!("a ResNet-18");
    };
    assert_eq!((net.stem_norm.momentum, net.stem_norm.epsilon), (0.1, 1e-5));
}

#[test]
fn same_padding_puts_the_extra_zero_bottom_right_where_a_stride_leaves_one() {
    let device = Device::flex();
    let ones = |conv: burn::nn::conv::Conv2d| {
        let mut conv = conv;
        conv.weight = conv.weight.map(|w| w.ones_like());
        conv
    };
    let layers = |padding| {
        LayerDefaults::new(
            InitScheme::PytorchDefault,
            ConvInit::AsInit,
            [0.1, 1e-5],
            padding,
        )
    };
    let input = Tensor::<4>::ones([1, 1, 4, 4], &device);
    let out = |padding| {
        let conv = ones(conv([1, 1], 3, 2, 1, false, layers(padding), &device));
        values(conv.forward(input.clone()))
    };
    // PyTorch's padding=1: the first 3×3 window reaches one zero row and column before the
    // image (4 ones), the last one past it (4 ones again).
    assert_eq!(out(ConvPadding::Symmetric), [4.0, 6.0, 6.0, 9.0]);
    // TensorFlow's "same": no zero before, one after, so the first window is all image.
    assert_eq!(out(ConvPadding::Same), [9.0, 6.0, 6.0, 4.0]);
    // Without a stride both pad one zero on every side.
    let unstrided = |padding| {
        let conv = ones(conv([1, 1], 3, 1, 1, false, layers(padding), &device));
        values(conv.forward(input.clone()))
    };
    assert_eq!(
        unstrided(ConvPadding::Same),
        unstrided(ConvPadding::Symmetric)
    );
}

#[test]
fn zero_residual_starts_each_residual_blocks_closing_batch_norm_at_zero_scale() {
    let device = Device::flex();
    let layers = LayerDefaults::from(InitScheme::PytorchDefault)
        .with_batch_norm_init(BatchNormInit::ZeroResidual);
    let Classifier::ResNet18(net) = ModelSpec::ResNet18
        .init(shape(3, 8, 8), 2, layers, &device)
        .unwrap()
    else {
        panic!("a ResNet-18");
    };
    for block in &net.blocks {
        assert!(values(block.norm2.gamma.val()).iter().all(|g| *g == 0.0));
        assert!(values(block.norm1.gamma.val()).iter().all(|g| *g == 1.0));
    }
    assert!(values(net.stem_norm.gamma.val()).iter().all(|g| *g == 1.0));
    // torchvision's bottleneck closes on its third batch norm.
    let Classifier::Torchvision(TorchvisionNet::ResNet(net)) = ModelSpec::ResNet50
        .init(shape(3, 32, 32), 2, layers, &device)
        .unwrap()
    else {
        panic!("a ResNet-50");
    };
    let first = &net.layer1[0];
    let bn3 = first.bn3.as_ref().expect("a bottleneck");
    assert!(values(bn3.gamma.val()).iter().all(|g| *g == 0.0));
    assert!(values(first.bn2.gamma.val()).iter().all(|g| *g == 1.0));
}
