use std::path::PathBuf;

use super::*;
use crate::data::DatasetSpec;
use crate::device::DeviceChoice;
use crate::model::ModelSpec;

#[test]
fn every_preset_parses_and_validates() {
    for name in preset_names() {
        let draft = preset(name).unwrap();
        assert_eq!(draft.name, name);
        draft.validate().unwrap();
    }
}

#[test]
fn draft_survives_a_toml_round_trip() {
    let mut draft = preset("fashion-mlp").unwrap();
    draft.schedule = Schedule::Step {
        every_epochs: 3,
        gamma: 0.5,
    };
    draft.data_dir = Some(PathBuf::from("/data"));
    let text = draft.to_toml();
    assert_eq!(ExperimentDraft::from_toml(&text, "t").unwrap(), draft);
}

#[test]
fn bad_values_are_refused_with_their_field() {
    type Mutation = Box<dyn Fn(&mut ExperimentDraft)>;
    let cases: Vec<(&str, Mutation)> = vec![
        ("batch_size", Box::new(|d| d.batch_size = 0)),
        ("lr", Box::new(|d| d.lr = f64::NAN)),
        ("lr", Box::new(|d| d.lr = -0.1)),
        ("lr", Box::new(|d| d.lr = 0.0)),
        ("epochs", Box::new(|d| d.epochs = 0)),
        ("name", Box::new(|d| d.name = "a/b".into())),
        (
            "optimizer.momentum",
            Box::new(|d| d.optimizer = OptimizerSpec::from_name("sgd").unwrap()),
        ),
        (
            "schedule.every_epochs",
            Box::new(|d| {
                d.schedule = Schedule::Step {
                    every_epochs: 0,
                    gamma: 0.1,
                }
            }),
        ),
    ];
    for (field, mutate) in cases {
        let mut draft = ExperimentDraft::default();
        mutate(&mut draft);
        if field == "optimizer.momentum"
            && let OptimizerSpec::Sgd { momentum, .. } = &mut draft.optimizer
        {
            *momentum = 1.5;
        }
        let message = draft.validate().unwrap_err().to_string();
        assert!(message.starts_with(field), "{field}: {message}");
    }
}

#[test]
fn a_refused_value_names_its_setting_as_a_type() {
    let draft = ExperimentDraft {
        batch_size: 0,
        ..ExperimentDraft::default()
    };
    let err = draft.validate().unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                field: Setting::BatchSize,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("batch_size = 0"), "{err}");
}

#[test]
fn an_absurd_image_size_or_vgg_side_is_refused_on_its_own_field() {
    let field_of = |draft: ExperimentDraft| match draft.validate() {
        Err(ConfigError::Invalid { field, reason, .. }) => (field, reason),
        other => panic!("expected a refused value, got {other:?}"),
    };
    // A config file can say anything; `folder:PATH@SIZE` on the command line was the only
    // place this was checked, so a config asked for 100000² images.
    for image_size in [0, crate::data::MAX_IMAGE_SIZE_PX + 1] {
        let draft = ExperimentDraft {
            dataset: DatasetSpec::Folder {
                path: PathBuf::from("photos"),
                image_size,
            },
            ..ExperimentDraft::default()
        };
        let (field, reason) = field_of(draft);
        assert_eq!(field, Setting::FolderImageSize, "{reason}");
    }
    for side in [8, 100_000] {
        let draft = ExperimentDraft {
            model: ModelSpec::Vgg16 {
                batch_norm: false,
                resize_to: Some(side),
            },
            ..ExperimentDraft::default()
        };
        let (field, reason) = field_of(draft);
        assert_eq!(field, Setting::VggInputSize, "{side}: {reason}");
    }
    let widthless = ExperimentDraft {
        model: ModelSpec::Mlp {
            widths: vec![0],
            activation: crate::model::Activation::Relu,
            dropout: 0.0,
        },
        ..ExperimentDraft::default()
    };
    assert_eq!(field_of(widthless).0, Setting::MlpWidths);
}

#[test]
fn a_data_parallel_run_keeps_its_devices_and_refuses_what_cannot_be_split() {
    let mut draft = preset("fashion-mlp").unwrap();
    draft.set_devices(crate::device::parse_devices("gpu:0,gpu:1").unwrap());
    assert_eq!(draft.device, DeviceChoice::Gpu(0));
    let text = draft.to_toml();
    assert!(text.contains("data_parallel = [\"gpu:1\"]"), "{text}");
    let back = ExperimentDraft::from_toml(&text, "config.toml").unwrap();
    assert_eq!(
        back.devices(),
        vec![DeviceChoice::Gpu(0), DeviceChoice::Gpu(1)]
    );
    assert!(back.clone().validate().is_ok());
    // One device writes no data_parallel key, so older config files read unchanged.
    assert!(
        !preset("fashion-mlp")
            .unwrap()
            .to_toml()
            .contains("data_parallel")
    );
    let refused = |change: fn(&mut ExperimentDraft)| {
        let mut draft = back.clone();
        change(&mut draft);
        match draft.validate() {
            Err(ConfigError::Invalid { field, reason, .. }) => {
                assert_eq!(field, Setting::Device);
                reason
            }
            other => panic!("{other:?}"),
        }
    };
    assert!(refused(|d| d.batch_size = 1).contains("at least 2"));
    assert!(refused(|d| d.precision = Precision::F16).contains("f32"));
    assert!(refused(|d| d.device = DeviceChoice::Auto).contains("name each device"));
    assert!(refused(|d| d.data_parallel = vec![DeviceChoice::Gpu(0)]).contains("twice"));
}

#[test]
fn unknown_fields_in_toml_are_named() {
    let err = ExperimentDraft::from_toml("batch = 3\n", "x.toml").unwrap_err();
    assert!(err.to_string().contains("batch"), "{err}");
}

#[test]
fn schedules_give_the_documented_rates() {
    assert_eq!(Schedule::Constant.lr_at(0.1, 7, 700, 1000), 0.1);
    let step = Schedule::Step {
        every_epochs: 2,
        gamma: 0.5,
    };
    assert_eq!(step.lr_at(0.1, 1, 0, 10), 0.1);
    assert!((step.lr_at(0.1, 4, 0, 10) - 0.025).abs() < 1e-12);
    let cosine = Schedule::Cosine { min_lr: 0.0 };
    assert!((cosine.lr_at(0.1, 0, 0, 100) - 0.1).abs() < 1e-12);
    assert!((cosine.lr_at(0.1, 0, 50, 100) - 0.05).abs() < 1e-12);
    assert!(cosine.lr_at(0.1, 0, 100, 100).abs() < 1e-12);
    for text in ["constant", "step:5:0.1", "cosine:0.001"] {
        let parsed: Schedule = text.parse().unwrap();
        assert_eq!(parsed.to_string(), text);
    }
    assert!("step:5".parse::<Schedule>().is_err());
    assert!("linear".parse::<Schedule>().is_err());
}
