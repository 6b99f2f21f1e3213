use std::collections::BTreeMap;
use std::path::PathBuf;

use kiln_core::config::{self, FineTune};
use kiln_core::model::{ModelSpec, TorchvisionArch};
use kiln_core::weights::WeightsSource;

use super::*;

#[test]
fn every_preset_survives_the_form() {
    for name in config::preset_names() {
        let draft = config::preset(name).expect("preset");
        let form = SetupForm::from_draft(&draft);
        let check = form.check();
        assert!(check.errors.is_empty(), "{name}: {:?}", check.errors);
        let experiment = check.experiment.expect("valid");
        assert_eq!(experiment.draft(), &draft, "{name}");
    }
}

#[test]
fn bad_text_is_marked_on_its_field() {
    let form = SetupForm::default()
        .with_text(Setting::Lr, "fast")
        .with_text(Setting::BatchSize, "0");
    let check = form.check();
    assert!(check.experiment.is_none());
    assert!(check.errors[&Setting::Lr].contains("not a number"));
    assert!(check.errors[&Setting::BatchSize].contains("between 1"));
    assert!(check.blocking_reason().is_some());
}

#[test]
fn a_typo_does_not_hide_an_engine_rule_elsewhere() {
    let form = SetupForm::default()
        .with_text(Setting::Lr, "-1")
        .with_text(Setting::BatchSize, "lots");
    let check = form.check();
    assert!(
        check.errors.contains_key(&Setting::BatchSize),
        "{:?}",
        check.errors
    );
    assert!(
        check.errors[&Setting::Lr].contains("above 0"),
        "{:?}",
        check.errors
    );
}

#[test]
fn profile_steps_reach_the_run_or_are_marked() {
    let form = SetupForm::default().with_text(Setting::ProfileSteps, "5");
    let check = form.check();
    assert_eq!(check.experiment.map(|e| e.profile_steps), Some(5));
    let form = SetupForm::default().with_text(Setting::ProfileSteps, "20000");
    let check = form.check();
    assert!(check.experiment.is_none());
    assert!(
        check.errors.contains_key(&Setting::ProfileSteps),
        "{:?}",
        check.errors
    );
}

#[test]
fn engine_rules_are_marked_on_their_field() {
    let form = SetupForm::default().with_text(Setting::Lr, "50");
    let check = form.check();
    assert!(
        check.errors[&Setting::Lr].contains("at most 10"),
        "{:?}",
        check.errors
    );

    let form = SetupForm {
        optimizer: OptimizerKind::Sgd,
        nesterov: true,
        ..SetupForm::default()
    }
    .with_text(Setting::Momentum, "0");
    assert!(form.check().errors.contains_key(&Setting::Nesterov));
}

#[test]
fn ranges_the_engine_owns_are_marked_on_the_field_they_were_typed_in() {
    let form = SetupForm {
        dataset: DatasetKind::Folder,
        folder: Some(PathBuf::from("photos")),
        model: ModelKind::Vgg16,
        ..SetupForm::default()
    }
    .with_text(Setting::FolderImageSize, "100000")
    .with_text(Setting::VggInputSize, "4096");
    let check = form.check();
    assert!(check.experiment.is_none());
    // validate stops at its first refusal; the VGG side is checked before the folder's.
    assert!(
        check.errors[&Setting::VggInputSize].contains("at most"),
        "{:?}",
        check.errors
    );
    let form = form.with_text(Setting::VggInputSize, "224");
    let check = form.check();
    assert!(
        check.errors[&Setting::FolderImageSize].contains("1 to 4096"),
        "{:?}",
        check.errors
    );
}

#[test]
fn a_zero_width_is_refused_by_the_engine_on_the_widths_field() {
    let form = SetupForm::default().with_text(Setting::MlpWidths, "512,0");
    let errors = form.check().errors;
    assert!(
        errors[&Setting::MlpWidths].contains("Hidden layer 2"),
        "{errors:?}"
    );
    let form = SetupForm::default().with_text(Setting::MlpWidths, "wide");
    let errors = form.check().errors;
    assert!(
        errors[&Setting::MlpWidths].contains("whole numbers"),
        "{errors:?}"
    );
}

#[test]
fn a_number_missing_from_a_remembered_form_shows_its_default() {
    let mut form = SetupForm::default();
    form.typed.remove(&Setting::Epochs);
    form.typed.remove(&Setting::Momentum);
    assert!(form.check().errors.is_empty(), "{:?}", form.check().errors);
    assert_eq!(form.text_mut(Setting::Epochs), "5");
    assert_eq!(form.text_mut(Setting::Momentum), "0");
}

#[test]
fn a_folder_data_set_needs_a_folder() {
    let form = SetupForm {
        dataset: DatasetKind::Folder,
        ..SetupForm::default()
    };
    let check = form.check();
    assert!(check.errors.contains_key(&Setting::Dataset));
}

#[test]
fn a_labels_file_needs_its_file_and_its_named_columns_survive_the_form() {
    let form = SetupForm {
        dataset: DatasetKind::LabelsFile,
        ..SetupForm::default()
    };
    let errors = form.check().errors;
    assert!(
        errors[&Setting::Dataset].contains("CSV or JSON-lines file"),
        "{errors:?}"
    );
    let form = SetupForm {
        dataset: DatasetKind::LabelsFile,
        labels_file: Some(PathBuf::from("shots/labels.csv")),
        path_column: " photo ".into(),
        label_column: String::new(),
        ..SetupForm::default()
    }
    .with_text(Setting::FolderImageSize, "48");
    let experiment = form.check().experiment.expect("a whole experiment");
    let dataset = DatasetSpec::LabelsFile {
        path: "shots/labels.csv".into(),
        image_size: 48,
        path_column: Some("photo".into()),
        label_column: None,
        label_separator: None,
        multi_label: false,
    };
    assert_eq!(experiment.dataset, dataset);
    // A config's multi-label reading survives *Use settings*.
    let mut sets = config::ExperimentDraft {
        dataset: dataset.clone(),
        ..config::ExperimentDraft::default()
    };
    sets.dataset
        .set_multi_label(Some("|".into()), true)
        .unwrap();
    let form_of_sets = SetupForm::from_draft(&sets);
    assert_eq!(
        (
            form_of_sets.label_separator.as_str(),
            form_of_sets.multi_label
        ),
        ("|", true)
    );
    assert_eq!(
        form_of_sets.check().experiment.unwrap().dataset,
        sets.dataset
    );
    let draft = config::ExperimentDraft {
        dataset,
        ..config::ExperimentDraft::default()
    };
    let again = SetupForm::from_draft(&draft);
    assert_eq!(
        (
            again.dataset,
            again.labels_file,
            again.path_column,
            again.label_column
        ),
        (
            DatasetKind::LabelsFile,
            Some(PathBuf::from("shots/labels.csv")),
            "photo".to_string(),
            String::new()
        )
    );
}

#[test]
fn a_pretrained_start_reaches_the_draft_and_survives_the_form() {
    let mut form = SetupForm {
        model: ModelKind::Torchvision(TorchvisionArch::ResNet50),
        start_from: StartFrom::ImageNet,
        ..SetupForm::default()
    }
    .with_text(Setting::UnfreezeAfter, "2");
    form.draft.fine_tune = FineTune::LinearProbe;
    let draft = form.to_draft(&mut BTreeMap::new());
    assert_eq!(draft.model, ModelSpec::ResNet50);
    assert_eq!(draft.weights, Some(WeightsSource::ImageNet));
    assert_eq!(draft.unfreeze_after, 2);
    let again = SetupForm::from_draft(&draft);
    assert_eq!(
        (again.model, again.start_from),
        (
            ModelKind::Torchvision(TorchvisionArch::ResNet50),
            StartFrom::ImageNet
        )
    );
    // A file start needs its file; an architecture without weights ignores the choice.
    let no_file = SetupForm {
        start_from: StartFrom::File,
        ..form.clone()
    };
    assert!(no_file.check().errors.contains_key(&Setting::Weights));
    let cnn = SetupForm {
        model: ModelKind::Cnn,
        ..no_file
    };
    assert_eq!(cnn.to_draft(&mut BTreeMap::new()).weights, None);
}

#[test]
fn starting_from_weights_sizes_the_folder_as_they_were_trained_unless_it_was_typed() {
    let mut form = SetupForm::default();
    form.take_pretrained_defaults(TorchvisionArch::EfficientNetB3);
    assert_eq!(form.text_mut(Setting::FolderImageSize), "300");
    assert_eq!(form.draft.input_scaling, config::InputScaling::ImageNet);
    let mut typed = SetupForm::default().with_text(Setting::FolderImageSize, "96");
    typed.take_pretrained_defaults(TorchvisionArch::EfficientNetB3);
    assert_eq!(typed.text_mut(Setting::FolderImageSize), "96");
}
