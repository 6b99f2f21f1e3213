use super::*;

#[test]
fn every_setting_is_labelled_once_and_explained() {
    let mut labels: Vec<&str> = Setting::ALL.iter().map(|s| s.label()).collect();
    labels.sort_unstable();
    let before = labels.len();
    labels.dedup();
    // The window keys its widgets by label, so two settings may not share one.
    assert_eq!(labels.len(), before, "{labels:?}");
    for setting in Setting::ALL {
        assert!(!setting.key().is_empty(), "{setting:?}");
        assert!(
            setting.help().ends_with('.'),
            "{setting:?}: {}",
            setting.help()
        );
    }
    assert_eq!(Setting::BatchSize.to_string(), "batch_size");
}

/// The table's promise, walked row by row: each row's key is a key of config.toml, the default
/// draft is inside its range, its value reads back as shown, and `kiln compare` has a column for
/// it unless the row says it changes nothing a run learns. (Its flag and its field in the window
/// are walked by the app's tests.)
#[test]
fn every_row_has_its_config_key_its_range_and_its_compare_column() {
    let draft = ExperimentDraft::default();
    let toml: toml::Table = toml::from_str(&draft.to_toml()).unwrap();
    let compared: Vec<&str> = crate::plot::describe(&draft)
        .iter()
        .map(|(word, _)| *word)
        .collect();
    for row in rows() {
        let setting = row.setting();
        assert!(
            toml.contains_key(setting.key()),
            "{setting:?}: config.toml has no key {}",
            setting.key()
        );
        if let Row::Number(number) = row {
            number.check(&draft).unwrap();
        }
        let mut read = ExperimentDraft::default();
        if !matches!(row, Row::Switch(_)) {
            row.read_into(&mut read, &row.show(&draft)).unwrap();
            assert_eq!(row.show(&read), row.show(&draft), "{setting:?}");
        }
        match row.legend() {
            Some(word) => assert!(compared.contains(&word), "{setting:?}: no column {word}"),
            None => assert!(
                matches!(setting, Setting::ProfileSteps | Setting::ReadbackInterval),
                "{setting:?} has no legend word: kiln compare would not show it"
            ),
        }
    }
    assert!(rows().len() >= 27, "{}", rows().len());
}

#[test]
fn a_row_refuses_what_is_outside_its_range_naming_its_setting() {
    let draft = ExperimentDraft {
        batch_size: 0,
        ..ExperimentDraft::default()
    };
    let refusal = check_ranges(&draft).unwrap_err().to_string();
    assert_eq!(refusal, "batch_size = 0: must be between 1 and 1048576");
    let draft = ExperimentDraft {
        crop_scale: 0.01,
        ..ExperimentDraft::default()
    };
    let refusal = check_ranges(&draft).unwrap_err().to_string();
    assert_eq!(
        refusal,
        "crop_scale = 0.01: must be between 0.08 and 1; 1 is off"
    );
}

#[test]
fn every_number_reads_back_what_it_shows_and_names_a_bad_value() {
    let draft = ExperimentDraft {
        lr: 1e-8,
        seed: u64::MAX,
        ..ExperimentDraft::default()
    };
    for number in numbers() {
        let mut read = ExperimentDraft {
            lr: 0.5,
            seed: 7,
            ..ExperimentDraft::default()
        };
        let shown = number.show(&draft);
        number.read_into(&mut read, &format!(" {shown} ")).unwrap();
        assert_eq!(number.show(&read), shown, "{:?}", number.setting);
        let before = read.clone();
        let error = number.read_into(&mut read, "many").unwrap_err();
        assert!(error.contains("'many' is not a"), "{error}");
        assert_eq!(read, before, "a refused value leaves the draft as it was");
    }
    assert_eq!(NumberSetting::of(Setting::Lr).unwrap().show(&draft), "1e-8");
    assert_eq!(
        NumberSetting::of(Setting::BatchSize)
            .unwrap()
            .setting
            .flag(),
        "batch-size"
    );
    assert!(NumberSetting::of(Setting::Model).is_none());
}

#[test]
fn every_choice_word_reads_back_as_itself_and_a_wrong_one_is_refused() {
    for choice in choices() {
        let mut draft = ExperimentDraft::default();
        let default = choice.show(&draft);
        assert!(
            choice.words().any(|w| w == default),
            "{:?}: the default {default} is not listed",
            choice.setting
        );
        for word in choice.words() {
            choice.read_into(&mut draft, word).unwrap();
            assert_eq!(choice.show(&draft), word, "{:?}", choice.setting);
        }
        let before = draft.clone();
        assert!(choice.read_into(&mut draft, "sideways").is_err());
        assert_eq!(draft, before);
    }
    assert_eq!(
        ChoiceSetting::of(Setting::InputScaling)
            .unwrap()
            .setting
            .flag(),
        "input-scaling"
    );
    assert!(ChoiceSetting::of(Setting::Lr).is_none());
    assert_eq!(
        "sideways"
            .parse::<crate::config::InputScaling>()
            .unwrap_err()
            .to_string(),
        "input_scaling = sideways: expected unit-range, raw, standardize or imagenet"
    );
}

#[test]
fn a_number_that_is_not_finite_is_refused() {
    let mut draft = ExperimentDraft::default();
    let lr = NumberSetting::of(Setting::Lr).unwrap();
    assert_eq!(
        lr.read_into(&mut draft, "inf").unwrap_err(),
        "must be a finite number"
    );
    let epochs = NumberSetting::of(Setting::Epochs).unwrap();
    assert_eq!(
        epochs.read_into(&mut draft, "2.5").unwrap_err(),
        "'2.5' is not a whole number"
    );
}

#[test]
fn words_are_listed_as_a_sentence_lists_them() {
    assert_eq!(one_of(&["a"]), "a");
    assert_eq!(one_of(&["a", "b"]), "a or b");
    assert_eq!(one_of(&["a", "b", "c"]), "a, b or c");
}
