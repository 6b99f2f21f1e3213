use super::*;

/// What Keras 3's `CSVLogger` writes for two epochs of `fit(..., validation_data=...)`.
const KERAS_CSV: &str = "epoch,accuracy,learning_rate,loss,val_accuracy,val_loss\n\
0,0.7812000513076782,0.0010000000474974513,0.6234,0.8301000595092773,0.4810\n\
1,0.8512000441551208,0.0010000000474974513,0.4123,0.8455000519752502,0.4301\n";

#[test]
fn a_keras_csv_logger_file_reads_as_epochs_from_one_with_every_figure() {
    let log = read_epoch_csv(KERAS_CSV, Framework::Keras).unwrap();
    assert_eq!(log.framework, Framework::Keras);
    assert_eq!(log.epochs.len(), 2);
    let first = &log.epochs[0];
    assert_eq!(first.epoch, 1);
    assert_eq!(first.train_loss, Some(0.6234));
    assert_eq!(first.val_loss, Some(0.4810));
    assert!((first.train_accuracy.unwrap() - 0.7812).abs() < 1e-6);
    assert!((log.epochs[1].val_accuracy.unwrap() - 0.8455).abs() < 1e-6);
    assert!((first.lr.unwrap() - 1e-3).abs() < 1e-9);
    assert!(log.notes.is_empty(), "{:?}", log.notes);
}

#[test]
fn a_keras_history_saved_as_json_reads_as_the_csv_logger_file_does() {
    let json = r#"{"accuracy": [0.7812000513076782, 0.8512000441551208],
        "learning_rate": [0.0010000000474974513, 0.0010000000474974513],
        "loss": [0.6234, 0.4123], "val_accuracy": [0.8301000595092773, 0.8455000519752502],
        "val_loss": [0.4810, 0.4301]}"#;
    let from_json = read_keras_history(json).unwrap();
    let from_csv = read_epoch_csv(KERAS_CSV, Framework::Keras).unwrap();
    assert_eq!(from_json.epochs, from_csv.epochs);
}

#[test]
fn a_lightning_csv_logger_folder_averages_per_step_rows_and_keeps_its_hyperparameters() {
    // Lightning 2 writes one row per logging call, the other calls' cells empty.
    let metrics = "epoch,step,train_loss_epoch,train_loss_step,val_acc,val_loss\n\
0,49,,0.91,,\n\
0,99,,0.72,,\n\
0,99,,,0.81,0.55\n\
0,99,0.85,,,\n\
1,149,,0.61,,\n\
1,199,,0.5,,\n\
1,199,,,0.86,0.41\n\
1,199,0.57,,,\n";
    let hparams =
        "lr: 0.001\nbatch_size: 64\noptimizer:\n  name: adam\n  betas:\n  - 0.9\n  - 0.999\n";
    let log = read_lightning(metrics, Some(hparams)).unwrap();
    assert_eq!(log.framework, Framework::Lightning);
    assert_eq!(log.epochs.len(), 2);
    assert_eq!(
        log.epochs[0].train_loss,
        Some(0.85),
        "the epoch figure, not the steps'"
    );
    assert_eq!(log.epochs[1].val_accuracy, Some(0.86));
    assert_eq!(log.epochs[1].val_loss, Some(0.41));
    assert_eq!(
        log.hparams,
        [
            ("lr".to_owned(), "0.001".to_owned()),
            ("batch_size".to_owned(), "64".to_owned()),
            ("optimizer.name".to_owned(), "adam".to_owned()),
            ("optimizer.betas".to_owned(), "0.9, 0.999".to_owned()),
        ]
    );
}

#[test]
fn a_figure_logged_at_every_step_is_averaged_per_epoch_and_the_note_says_so() {
    let metrics = "epoch,step,train_loss\n0,1,1.0\n0,2,0.5\n1,3,0.25\n1,4,0.25\n";
    let log = read_lightning(metrics, None).unwrap();
    assert_eq!(log.epochs[0].train_loss, Some(0.75));
    assert_eq!(log.epochs[1].train_loss, Some(0.25));
    assert_eq!(log.epochs[0].val_accuracy, None, "unknown, not zero");
    assert!(
        log.notes[0].contains("`train_loss` was logged up to 2 times an epoch"),
        "{:?}",
        log.notes
    );
}

#[test]
fn a_plain_csv_counting_epochs_from_one_in_percent_reads_as_fractions_from_one() {
    let text = "Epoch,Train_Loss,Val_Acc\n1,0.9,71.5\n2,0.6,80\nsummary,,\n";
    let log = read_epoch_csv(text, Framework::Csv).unwrap();
    let epochs: Vec<usize> = log.epochs.iter().map(|e| e.epoch).collect();
    assert_eq!(epochs, [1, 2]);
    assert_eq!(log.epochs[0].val_accuracy, Some(0.715));
    assert_eq!(log.epochs[1].val_accuracy, Some(0.8));
    assert!(
        log.notes
            .iter()
            .any(|n| n.contains("`Val_Acc` is in percent"))
    );
    assert!(
        log.notes
            .iter()
            .any(|n| n.contains("1 rows have no epoch number"))
    );
}

#[test]
fn logs_that_cannot_be_read_say_why() {
    for (text, expected) in [
        ("", "it is empty"),
        (
            "step,loss\n1,0.5\n",
            "it has no `epoch` column (its columns are step, loss)",
        ),
        ("epoch,f1\n0,0.5\n", "it holds no loss or accuracy by epoch"),
        (
            "epoch,loss\n0,\"0.5\n",
            "a quoted cell opened on line 2 is never closed",
        ),
    ] {
        let refused = read_epoch_csv(text, Framework::Csv).unwrap_err();
        assert!(refused.starts_with(expected), "{text:?}: {refused}");
    }
    // Series it does not know are named, whether they leave nothing or only some out.
    let none = read_epoch_csv("epoch,f1\n0,0.5\n", Framework::Csv).unwrap_err();
    assert!(none.contains("; it holds `f1`;"), "{none}");
    let some = read_epoch_csv("epoch,loss,f1,val_f1\n0,0.5,0.4,0.3\n", Framework::Csv).unwrap();
    assert_eq!(some.notes.len(), 1);
    assert!(
        some.notes[0].starts_with("`f1`, `val_f1` left out: neither a loss"),
        "{:?}",
        some.notes
    );
    assert!(
        read_keras_history("[1, 2]")
            .unwrap_err()
            .contains("History.history")
    );
    assert!(
        read_keras_history("{\"loss\": ")
            .unwrap_err()
            .starts_with("it is not JSON")
    );
}

/// A scalar of `tag` at `step`.
fn scalar(tag: &str, step: i64, value: f64) -> Scalar {
    Scalar {
        tag: tag.to_owned(),
        step,
        wall_time: 1.0,
        value,
    }
}

#[test]
fn keras_tensorboard_folders_say_by_their_name_which_loss_is_which() {
    let train = [
        scalar("epoch_loss", 0, 0.6),
        scalar("epoch_accuracy", 0, 0.78),
        scalar("epoch_learning_rate", 0, 1e-3),
        scalar("epoch_loss", 1, 0.4),
    ];
    let validation = [
        scalar("epoch_loss", 0, 0.5),
        scalar("epoch_accuracy", 1, 0.84),
    ];
    let log = read_scalars(&train, &validation).unwrap();
    assert_eq!(log.framework, Framework::TensorBoard);
    assert_eq!(
        log.epochs[0],
        LogEpoch {
            epoch: 1,
            train_loss: Some(0.6),
            train_accuracy: Some(0.78),
            val_loss: Some(0.5),
            val_accuracy: None,
            lr: Some(1e-3),
        }
    );
    assert_eq!(log.epochs[1].val_accuracy, Some(0.84));
}

#[test]
fn summary_writer_tags_name_their_split_and_lightning_steps_map_to_its_epoch_tag() {
    // PyTorch's tutorial: `writer.add_scalar("Loss/train", loss, epoch)`.
    let pytorch = [
        scalar("Loss/train", 0, 0.7),
        scalar("Accuracy/test", 0, 0.8),
        scalar("Loss/train", 1, 0.5),
    ];
    let log = read_scalars(&pytorch, &[]).unwrap();
    assert_eq!(log.epochs[0].train_loss, Some(0.7));
    assert_eq!(log.epochs[0].val_accuracy, Some(0.8));
    assert_eq!(log.epochs[1].train_loss, Some(0.5));

    // Lightning's TensorBoardLogger: steps, with `epoch` logged beside them.
    let lightning = [
        scalar("epoch", 49, 0.0),
        scalar("train_loss", 49, 0.9),
        scalar("epoch", 99, 0.0),
        scalar("train_loss", 99, 0.7),
        scalar("val_acc", 99, 0.81),
        scalar("epoch", 149, 1.0),
        scalar("train_loss", 149, 0.5),
    ];
    let log = read_scalars(&lightning, &[]).unwrap();
    assert_eq!(log.epochs.len(), 2);
    assert_eq!(log.epochs[0].train_loss, Some(0.8));
    assert_eq!(log.epochs[0].val_accuracy, Some(0.81));
    assert_eq!(log.epochs[1].train_loss, Some(0.5));
}

mod finding {
    use std::path::Path;

    use super::super::*;
    use crate::files::MemoryFiles;
    use crate::tensorboard::{file_version_record, scalars_record};

    /// An event file holding `scalars` (tag, step, value).
    fn events(scalars: &[(&str, i64, f64)]) -> Vec<u8> {
        let mut file = file_version_record(1.0);
        for &(tag, step, value) in scalars {
            file.extend(scalars_record(2.0, step, &[(tag, value)]));
        }
        file
    }

    #[test]
    fn a_keras_tensorboard_folder_is_one_run_and_a_resumed_epoch_keeps_its_later_value() {
        let mut tree = MemoryFiles::new();
        let run = "logs/fit/20261207-101500";
        tree.insert(
            format!("{run}/train/events.out.tfevents.100.host.1.0.v2"),
            events(&[("epoch_loss", 0, 1.0), ("epoch_loss", 1, 0.75)]),
        )
        .unwrap();
        // Resumed: epoch 1 again, then 2.
        tree.insert(
            format!("{run}/train/events.out.tfevents.200.host.2.0.v2"),
            events(&[("epoch_loss", 1, 0.5), ("epoch_loss", 2, 0.25)]),
        )
        .unwrap();
        tree.insert(
            format!("{run}/validation/events.out.tfevents.100.host.1.0.v2"),
            events(&[("epoch_accuracy", 0, 0.75)]),
        )
        .unwrap();
        let found = find_logs(&tree, Path::new("logs")).unwrap();
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        assert_eq!(found.logs.len(), 1);
        let only = &found.logs[0];
        assert_eq!(only.name, "20261207-101500");
        assert_eq!(only.source, Path::new(run));
        let losses: Vec<Option<f64>> = only.log.epochs.iter().map(|e| e.train_loss).collect();
        assert_eq!(losses, [Some(1.0), Some(0.5), Some(0.25)]);
        assert_eq!(only.log.epochs[0].val_accuracy, Some(0.75));
    }

    #[test]
    fn a_lightning_logs_folder_gives_each_version_as_a_run_with_its_hyperparameters() {
        let mut tree = MemoryFiles::new();
        for (version, lr) in [("version_0", "0.01"), ("version_1", "0.001")] {
            tree.insert(
                format!("lightning_logs/{version}/metrics.csv"),
                b"epoch,step,val_acc,train_loss_epoch\n0,99,0.8,0.6\n0,99,,\n".to_vec(),
            )
            .unwrap();
            tree.insert(
                format!("lightning_logs/{version}/hparams.yaml"),
                format!("lr: {lr}\n").into_bytes(),
            )
            .unwrap();
        }
        let found = find_logs(&tree, Path::new("lightning_logs")).unwrap();
        let names: Vec<&str> = found.logs.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["version_0", "version_1"]);
        assert_eq!(found.logs[1].log.framework, Framework::Lightning);
        assert_eq!(found.logs[1].log.hparams, [("lr".into(), "0.001".into())]);
        assert_eq!(found.logs[0].log.epochs[0].val_accuracy, Some(0.8));
    }

    #[test]
    fn log_files_are_read_by_what_they_are_whatever_their_extension() {
        let mut tree = MemoryFiles::new();
        // Keras's CSVLogger names its file training.log by default.
        tree.insert("runs/training.log", super::KERAS_CSV.as_bytes().to_vec())
            .unwrap();
        tree.insert("runs/history.json", br#"{"loss": [0.5, 0.4]}"#.to_vec())
            .unwrap();
        tree.insert("runs/mine.csv", b"epoch,acc\n1,0.5\n".to_vec())
            .unwrap();
        tree.insert("runs/notes.txt", b"not a log".to_vec())
            .unwrap();
        let found = find_logs(&tree, Path::new("runs")).unwrap();
        let seen: Vec<(&str, Framework)> = found
            .logs
            .iter()
            .map(|l| (l.name.as_str(), l.log.framework))
            .collect();
        assert_eq!(
            seen,
            [
                ("history", Framework::Keras),
                ("mine", Framework::Csv),
                ("training", Framework::Keras)
            ]
        );
        let one = find_logs(&tree, Path::new("runs/mine.csv")).unwrap();
        assert_eq!(one.logs.len(), 1);
    }

    #[test]
    fn a_damaged_event_file_keeps_the_values_before_the_break_and_names_it() {
        let mut tree = MemoryFiles::new();
        let mut bytes = events(&[("loss", 0, 0.9), ("loss", 1, 0.8)]);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        tree.insert("run/events.out.tfevents.1.host", bytes)
            .unwrap();
        let found = find_logs(&tree, Path::new("run")).unwrap();
        assert_eq!(found.logs[0].log.epochs.len(), 1);
        assert_eq!(found.problems.len(), 1);
        assert!(
            found.problems[0].contains("fails its CRC-32C check")
                && found.problems[0].contains("the 1 values before it are kept"),
            "{:?}",
            found.problems
        );
    }

    #[test]
    fn kiln_run_folders_among_the_logs_are_left_out_as_runs_already() {
        let mut tree = MemoryFiles::new();
        // Kiln's own run: its metrics.csv is no Lightning log, its event files no Keras run.
        let kiln = "runs/20261207-101500-mnist-mlp";
        for file in ["config.toml", "epochs.csv"] {
            tree.insert(format!("{kiln}/{file}"), b"epoch\n".to_vec())
                .unwrap();
        }
        tree.insert(
            format!("{kiln}/metrics.csv"),
            b"wall_secs,epoch,step\n1.0,1,10\n".to_vec(),
        )
        .unwrap();
        tree.insert(
            format!("{kiln}/train/events.out.tfevents.1.kiln.1.0.v2"),
            events(&[("epoch_loss", 0, 1.0)]),
        )
        .unwrap();
        // An imported one: source.json beside its epochs.
        let imported = "runs/20261207-101600-keras-training";
        for file in ["source.json", "epochs.csv"] {
            tree.insert(format!("{imported}/{file}"), b"{}".to_vec())
                .unwrap();
        }
        let only_runs = find_logs(&tree, Path::new("runs")).unwrap_err();
        assert!(
            only_runs.contains("holds Kiln run folders only (2)"),
            "{only_runs}"
        );
        tree.insert(
            "runs/lightning_logs/version_0/metrics.csv",
            b"epoch,step,val_acc\n0,9,0.5\n".to_vec(),
        )
        .unwrap();
        let found = find_logs(&tree, Path::new("runs")).unwrap();
        let names: Vec<&str> = found.logs.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["version_0"]);
        assert_eq!(found.kiln_runs.len(), 2);
    }

    #[test]
    fn a_series_the_person_names_is_read_as_that_figure_before_any_convention() {
        let mut tree = MemoryFiles::new();
        // A script's own tags: nothing says which is which but the person.
        tree.insert(
            "mine/events.out.tfevents.1.host",
            events(&[
                ("holdout/top1", 0, 0.5),
                ("holdout/top1", 1, 0.75),
                ("objective", 0, 1.25),
            ]),
        )
        .unwrap();
        tree.insert("script.csv", b"epoch,objective,acc\n1,0.9,0.5\n".to_vec())
            .unwrap();
        let unnamed = find_logs(&tree, Path::new("mine")).unwrap_err();
        assert!(unnamed.contains("`holdout/top1`, `objective`"), "{unnamed}");
        // The same series, listed for a person to name (the window's choice).
        let refused = find_logs_naming(&tree, Path::new("mine"), &SeriesNames::default());
        assert_eq!(
            refused.unwrap_err().unnamed_series,
            ["holdout/top1", "objective"]
        );
        let read = find_logs(&tree, Path::new("script.csv")).unwrap();
        assert_eq!(read.unnamed_series, ["objective"]);
        for figure in Figure::ALL {
            assert_eq!(figure.key().parse::<Figure>(), Ok(figure));
        }

        let mut names = SeriesNames::default();
        names.add("val_accuracy=holdout/top1").unwrap();
        names.add("loss = objective").unwrap();
        let found = find_logs_naming(&tree, Path::new("mine"), &names).unwrap();
        let epochs = &found.logs[0].log.epochs;
        // Values a float32 event file holds exactly.
        assert_eq!(epochs[1].val_accuracy, Some(0.75));
        assert_eq!(epochs[0].train_loss, Some(1.25));
        // In a CSV too; `acc` stays the training accuracy by convention.
        let csv = find_logs_naming(&tree, Path::new("script.csv"), &names).unwrap();
        assert_eq!(csv.logs[0].log.epochs[0].train_loss, Some(0.9));
        assert_eq!(csv.logs[0].log.epochs[0].train_accuracy, Some(0.5));

        for (spec, said) in [
            ("top1", "names no series; write FIGURE=SERIES"),
            ("f1=x", "'f1' is not a figure"),
            ("loss=", "names no series after '='"),
        ] {
            let refused = SeriesNames::default().add(spec).unwrap_err();
            assert!(refused.contains(said), "{spec}: {refused}");
        }
    }

    /// A `.keras` file: a zip whose `config.json` is `config`.
    fn keras_file(config: &str) -> Vec<u8> {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("metadata.json", stored).unwrap();
        zip.write_all(br#"{"keras_version": "3.15.1"}"#).unwrap();
        zip.start_file("config.json", stored).unwrap();
        zip.write_all(config.as_bytes()).unwrap();
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_keras_log_takes_its_hyperparameters_from_the_model_saved_beside_it() {
        // As Keras 3.15 writes a Sequential MLP compiled with SGD (abridged to what is read).
        let config = r#"{"module": "keras", "class_name": "Sequential", "config": {"name": "sequential",
            "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28]}},
                {"class_name": "Flatten", "config": {}},
                {"class_name": "Dense", "config": {"units": 512, "activation": "relu",
                    "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}}}},
                {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]},
            "compile_config": {"optimizer": {"module": "keras.optimizers", "class_name": "SGD",
                "config": {"name": "SGD", "learning_rate": 0.0010000000474974513, "weight_decay": null, "momentum": 0.0,
                    "nesterov": true, "use_ema": false, "ema_momentum": 0.99}},
                "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]}}"#;
        // A Keras CSVLogger file with `model` saved beside it as `name`.
        let beside = |name: &str, model: Vec<u8>| {
            let mut tree = MemoryFiles::new();
            let log = b"epoch,accuracy,loss\n0,0.5,1.2\n".to_vec();
            tree.insert("run/training.log", log).unwrap();
            tree.insert(format!("run/{name}"), model).unwrap();
            tree
        };
        let tree = beside("model.keras", keras_file(config));
        let found = find_logs(&tree, Path::new("run/training.log")).unwrap();
        let log = &found.logs[0].log;
        let hparams: Vec<(&str, &str)> = log
            .hparams
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            hparams,
            [
                ("optimizer", "sgd"),
                ("optimizer.learning_rate", "0.001"),
                ("optimizer.momentum", "0"),
                ("optimizer.nesterov", "true"),
                ("loss", "sparse_categorical_crossentropy"),
                ("layers", "Flatten, Dense(512, relu), Dense(10, softmax)"),
                ("kernel_initializer", "GlorotUniform"),
            ]
        );
        assert!(
            log.notes.iter().any(|n| n.contains("model.keras")),
            "{:?}",
            log.notes
        );
        // The config as model.to_json() writes it serves too; a cut .keras file is no stop.
        let mut tree = beside("model.json", config.as_bytes().to_vec());
        let found = find_logs(&tree, Path::new("run/training.log")).unwrap();
        assert_eq!(
            found.logs[0].log.hparams[0],
            ("optimizer".to_owned(), "sgd".to_owned())
        );
        let mut cut = keras_file(config);
        cut.truncate(cut.len() / 2);
        tree.insert("run/model.keras", cut).unwrap();
        let found = find_logs(&tree, Path::new("run/training.log")).unwrap();
        assert!(found.logs[0].log.hparams.is_empty());
    }

    #[test]
    fn a_path_with_no_log_says_what_was_looked_for() {
        let mut tree = MemoryFiles::new();
        tree.insert("empty/readme.txt", b"hello".to_vec()).unwrap();
        tree.insert("bad/metrics.csv", b"".to_vec()).unwrap();
        let none = find_logs(&tree, Path::new("empty")).unwrap_err();
        assert!(
            none.starts_with("found no training log in empty (looked for"),
            "{none}"
        );
        let bad = find_logs(&tree, Path::new("bad")).unwrap_err();
        assert!(bad.contains("metrics.csv: it is empty"), "{bad}");
        let missing = find_logs(&tree, Path::new("nowhere")).unwrap_err();
        assert_eq!(missing, "nowhere does not exist; check the path");
    }
}
