//! The `kiln` binary as a person runs it: real processes, real files, small data.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kiln_test_support::scratch_dir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .env_remove("KILN_DATA_DIR")
        .output()
        .expect("the kiln binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn only_run_folder(runs: &Path) -> PathBuf {
    let entries: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[test]
fn help_puts_each_flags_text_under_it_wrapped_to_the_terminal() {
    // Beside --model's value forms clap began every flag's text 130 columns in: 383-column
    // lines, past any terminal's edge.
    for command in [
        &["train", "--help"][..],
        &["bench", "-h"],
        &["serve", "--help"],
        &["-h"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(command)
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        assert!(output.status.success());
        let help = String::from_utf8(output.stdout).unwrap();
        // A flag's own line may be as long as its value forms; every line of text fits.
        let too_wide: Vec<&str> = help
            .lines()
            .filter(|line| !line.trim_start().starts_with('-') && line.chars().count() > 80)
            .collect();
        assert!(too_wide.is_empty(), "kiln {command:?}: {too_wide:#?}");
    }
}

#[test]
fn train_on_the_builtin_data_writes_a_complete_run_folder() {
    let runs = scratch_dir("train");
    let output = kiln(&[
        "train",
        "--device",
        "cpu",
        "--model",
        "mlp:64",
        "--epochs",
        "2",
        "--batch",
        "128",
        "--name",
        "smoke",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{}", stdout, stderr(&output));
    assert_eq!(
        stdout.matches("\nepoch ").count() + usize::from(stdout.starts_with("epoch ")),
        2,
        "{stdout}"
    );

    let run = only_run_folder(&runs);
    assert!(
        run.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-smoke")
    );
    let config = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(config.contains("batch_size = 128"), "{config}");

    let epochs = std::fs::read_to_string(run.join("epochs.csv")).unwrap();
    let rows: Vec<&str> = epochs.lines().collect();
    assert_eq!(rows.len(), 3, "{epochs}");
    assert!(rows[0].starts_with(
        "epoch,train_loss,train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy"
    ));
    // Each epoch is evaluated on validation; the test columns stay empty.
    let last: Vec<&str> = rows[2].split(',').collect();
    let val_accuracy: f64 = last[4].parse().unwrap();
    assert!(
        val_accuracy > 0.6,
        "the built-in data is learnable: {epochs}"
    );
    assert_eq!((last[5], last[6]), ("", ""), "{epochs}");

    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    let last_row = metrics.lines().last().unwrap();
    let samples_seen: u64 = last_row.split(',').nth(4).unwrap().parse().unwrap();
    assert_eq!(
        samples_seen,
        2 * 10_800,
        "every training image (12 000 less a tenth for validation), twice: {last_row}"
    );

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["outcome"], "completed");
    assert_eq!(summary["epochs_completed"], 2);
    assert_eq!(summary["validated_on"], "validation");
    assert_eq!(summary["split_sizes"]["val"], 1200);
    assert!(
        summary["final_test_accuracy"].as_f64().unwrap() > 0.6,
        "{summary}"
    );
    assert!(stdout.contains("test, once, on epoch"), "{stdout}");

    // The run's config.toml reruns it.
    let again = kiln(&[
        "train",
        "--config",
        run.join("config.toml").to_str().unwrap(),
        "--epochs",
        "1",
        "--runs-dir",
        runs.join("again").to_str().unwrap(),
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
}

/// The columns of epochs.csv that do not depend on wall time.
fn epoch_figures(run: &Path) -> Vec<String> {
    std::fs::read_to_string(run.join("epochs.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_run() {
    // Separate processes: Burn's CPU generator is global, so only a whole process is isolated.
    let runs = scratch_dir("seed");
    let train = |dir: &str, seed: &str| {
        let out = kiln(&[
            "train",
            "--device",
            "cpu",
            "--model",
            "mlp:32",
            "--epochs",
            "1",
            "--seed",
            seed,
            "--runs-dir",
            runs.join(dir).to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        epoch_figures(&only_run_folder(&runs.join(dir)))
    };
    let first = train("a", "7");
    assert_eq!(first, train("b", "7"));
    assert_ne!(first, train("c", "8"));
}

#[test]
fn bad_flags_end_in_one_sentence_and_no_run_folder() {
    let runs = scratch_dir("bad");
    let runs_arg = runs.join("runs");
    let runs_arg = runs_arg.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--batch", "0"], "batch_size"),
        (&["--lr", "NaN"], "lr"),
        (&["--lr=-1"], "lr"),
        (&["--epochs", "0"], "epochs"),
        (
            &["--batch", "20000"],
            "larger than the 10800 training images",
        ),
        (&["--model", "mlp:0"], "mlp"),
        (&["--batch=-1"], "--batch"),
        (&["--lr", "inf"], "lr"),
        (&["--model", "vgg16"], "at least 32×32"),
        (&["--model", "mlp:64:relu:1.5"], "dropout"),
        (&["--crop-padding", "65"], "crop_padding"),
        (
            &["--crop-scale", "0.01"],
            "crop_scale = 0.01: must be between 0.08 and 1",
        ),
        (
            &["--rotation-degrees", "90"],
            "rotation_degrees = 90: must be between 0 and 30",
        ),
        (&["--brightness", "2"], "brightness = 2"),
        (&["--contrast=-0.1"], "contrast = -0.1"),
        (&["--profile-steps", "20000"], "profile_steps"),
        (
            &["--val-split", "0", "--early-stop", "2"],
            "early stopping watches the validation split",
        ),
        (
            &["--val-split", "0.9"],
            "val_split = 0.9: must be between 0 and 0.5",
        ),
        (
            &["--monitor", "loss"],
            "expected val-loss, val-accuracy or val-map",
        ),
        (&["--model", "vgg17"], "vgg17"),
        (&["--device", "gpu:99"], "gpu:99"),
        (&["--preset", "nope"], "no preset named 'nope'"),
        (&["--momentum", "0.9"], "--optimizer sgd"),
        (&["--precision", "f16"], "cannot train in f16"),
        (&["--precision", "f8"], "--precision"),
        (
            &["--dataset", "mnist", "--data-dir", "/nonexistent/kiln"],
            "MNIST",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["train", "--runs-dir", runs_arg, "--device", "cpu"];
        all.extend_from_slice(args);
        if args.contains(&"--device") {
            all.drain(3..5);
        }
        let output = kiln(&all);
        let message = stderr(&output);
        // 1 for a refused value, 2 for one clap could not parse; never 101, a panic.
        assert!(
            matches!(output.status.code(), Some(1 | 2)),
            "{args:?}: {message}"
        );
        assert!(message.contains(expected), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?}: {message}");
    }
    assert!(
        !runs.join("runs").exists(),
        "no run folder for refused runs"
    );
}

#[test]
fn resume_refuses_what_it_cannot_continue() {
    let dir = scratch_dir("resume-refused");
    let missing = dir.join("no-such-run");
    let output = kiln(&["train", "--resume", missing.to_str().unwrap()]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("not a run folder"), "{message}");
    // A resumed run keeps its config: a flag that would change it is refused by name.
    let output = kiln(&[
        "train",
        "--resume",
        missing.to_str().unwrap(),
        "--lr",
        "0.1",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("--lr"), "{message}");
}

#[test]
fn corrupt_idx_files_are_named_in_the_error() {
    let dir = scratch_dir("corrupt");
    let data = dir.join("mnist");
    std::fs::create_dir_all(&data).unwrap();
    // A header that claims 2^32 - 1 images of 28x28, and nothing after it.
    let mut header = vec![0, 0, 8, 3];
    header.extend_from_slice(&u32::MAX.to_be_bytes());
    header.extend_from_slice(&28u32.to_be_bytes());
    header.extend_from_slice(&28u32.to_be_bytes());
    std::fs::write(data.join("train-images-idx3-ubyte"), &header).unwrap();
    std::fs::write(
        data.join("train-labels-idx1-ubyte"),
        [0, 0, 8, 1, 0, 0, 0, 1, 3],
    )
    .unwrap();
    std::fs::write(data.join("t10k-images-idx3-ubyte"), &header).unwrap();
    std::fs::write(
        data.join("t10k-labels-idx1-ubyte"),
        [0, 0, 8, 1, 0, 0, 0, 1, 3],
    )
    .unwrap();
    let output = kiln(&[
        "train",
        "--dataset",
        "mnist",
        "--data-dir",
        dir.to_str().unwrap(),
        "--runs-dir",
        dir.join("runs").to_str().unwrap(),
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("images-idx3-ubyte"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn devices_always_lists_the_cpu() {
    let output = kiln(&["devices"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("cpu ")), "{stdout}");
}

#[test]
fn listing_devices_without_a_runtime_folder_prints_no_mesa_noise() {
    let output = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("devices")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("the kiln binary runs");
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(!said.contains("XDG_RUNTIME_DIR"), "{said}");
}

#[test]
fn presets_are_listed() {
    let output = kiln(&["presets"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in ["fashion-mlp", "cifar-vgg16", "mnist-tiny-fullbatch"] {
        assert!(stdout.contains(name), "{stdout}");
    }
}

/// Rough edge: the `-pytorch` and `-keras` flavours printed identical lines, and the long names
/// pushed their lines out of the column.
#[test]
fn presets_show_what_their_flavours_differ_in_within_one_column() {
    let output = kiln(&["presets"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // A preset's line, then its framework defaults' line below it.
    let description = |name: &str| -> String {
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in {stdout}"));
        let defaults = lines.get(at + 1).map_or("", |l| l.trim());
        format!("{} | {defaults}", lines[at][name.len()..].trim())
    };
    for workload in ["fashion-mlp", "cifar-vgg16", "mnist-tiny-fullbatch"] {
        let (pytorch, keras) = (
            description(&format!("{workload}-pytorch")),
            description(&format!("{workload}-keras")),
        );
        assert_ne!(pytorch, keras);
        assert!(
            keras.contains("| defaults: init glorot-uniform,"),
            "{keras}"
        );
    }
    assert!(
        description("cifar-vgg16-keras").contains("Adam ε 1e-7"),
        "{stdout}"
    );
    // A default the preset's model or data does not use says so.
    let mlp = description("fashion-mlp-keras");
    assert!(mlp.contains("BN momentum 0.01 (unused)"), "{mlp}");
    assert!(mlp.contains("decay decoupled (unused)"), "{mlp}");
    assert!(mlp.contains("scaling raw,"), "{mlp}");
    // Every description, and every defaults line under one, starts in the same column.
    let starts: Vec<usize> = lines
        .iter()
        .map(|l| {
            let name_end = if l.starts_with(' ') {
                0
            } else {
                l.split_whitespace().next().unwrap_or("").len()
            };
            name_end + l[name_end..].len() - l[name_end..].trim_start().len()
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{stdout}");
}

#[test]
fn export_writes_csv_png_and_svg_of_a_run() {
    let dir = scratch_dir("export");
    let runs = dir.join("runs");
    let output = kiln(&[
        "train",
        "--device",
        "cpu",
        "--model",
        "mlp:16",
        "--epochs",
        "2",
        "--batch",
        "256",
        "--name",
        "exported",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&runs);
    let run_arg = run.to_str().unwrap();

    let refused = kiln(&["export", run_arg]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--csv"), "{}", stderr(&refused));

    let (csv, png, svg) = (dir.join("r.csv"), dir.join("r.png"), dir.join("r.svg"));
    let output = kiln(&[
        "export",
        run_arg,
        "--csv",
        csv.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
        "--x",
        "wall",
        "--size",
        "800x500",
        "--title",
        "Exported run",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", stderr(&output));
    assert_eq!(stdout.matches("wrote ").count(), 3, "{stdout}");

    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv_text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "run,kind,epoch,step,global_step,wall_secs,samples_seen,train_loss,train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy,samples_per_sec,step_ms,lr"
        )
    );
    let epoch_rows = csv_text
        .lines()
        .filter(|l| l.starts_with("exported,epoch,"))
        .count();
    assert_eq!(epoch_rows, 2, "{csv_text}");
    assert!(csv_text.contains("exported,step,"), "{csv_text}");

    let png_bytes = std::fs::read(&png).unwrap();
    assert!(png_bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        &png_bytes[16..24],
        &[0, 0, 3, 32, 0, 0, 1, 244],
        "800x500 in the IHDR"
    );

    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<svg"));
    assert!(svg_text.contains("Exported run"));
    assert!(svg_text.contains("wall time (s)"));

    // The run wrote TensorBoard's files as it trained; an old run's are made from its CSVs.
    let epochs_logged = |series: &std::path::Path| {
        let files: Vec<_> = std::fs::read_dir(series).unwrap().collect();
        assert_eq!(files.len(), 1, "{}", series.display());
        let bytes = std::fs::read(files[0].as_ref().unwrap().path()).unwrap();
        let log = kiln_formats::tensorboard::read_event_file(&bytes);
        assert_eq!(log.stop, None);
        let steps: Vec<i64> = log
            .scalars
            .iter()
            .filter(|s| s.tag == "epoch_accuracy")
            .map(|s| s.step)
            .collect();
        steps
    };
    assert_eq!(epochs_logged(&run.join("train")), [0, 1]);
    assert_eq!(epochs_logged(&run.join("validation")), [0, 1]);
    let own = kiln(&["export", run_arg, "--tensorboard", runs.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&own.stdout).contains("already keeps its TensorBoard event files"),
        "{}",
        String::from_utf8_lossy(&own.stdout)
    );
    std::fs::remove_dir_all(run.join("train")).unwrap();
    std::fs::remove_dir_all(run.join("validation")).unwrap();
    let board = dir.join("board");
    let exported = kiln(&["export", run_arg, "--tensorboard", board.to_str().unwrap()]);
    assert!(exported.status.success(), "{}", stderr(&exported));
    let name = run.file_name().unwrap();
    assert_eq!(epochs_logged(&board.join(name).join("train")), [0, 1]);
    assert_eq!(epochs_logged(&board.join(name).join("validation")), [0, 1]);

    let missing = kiln(&[
        "export",
        dir.join("nope").to_str().unwrap(),
        "--csv",
        "x.csv",
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("nope"), "{}", stderr(&missing));
    assert!(!stderr(&missing).contains("panicked"));
}

// Only X11 and Wayland systems need a display variable to open a window.
#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn no_display_explains_how_to_train_headless() {
    let output = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .expect("the kiln binary runs");
    assert!(!output.status.success());
    let stderr = stderr(&output);
    assert!(stderr.contains("window could not open"), "{stderr}");
    assert!(stderr.contains("kiln train"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// One quick epoch of a small MLP on the built-in data on the CPU, into `runs`.
fn train_tiny(runs: &Path, extra: &[&str]) -> Output {
    let runs = runs.to_str().expect("a UTF-8 temporary path");
    let mut args = vec![
        "train",
        "--device",
        "cpu",
        "--model",
        "mlp:16",
        "--epochs",
        "1",
        "--runs-dir",
        runs,
    ];
    args.extend_from_slice(extra);
    kiln(&args)
}

#[test]
fn export_model_writes_pytorch_names_and_an_onnx_graph_or_says_why_not() {
    let runs = scratch_dir("export-model");
    let output = train_tiny(&runs, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&runs);
    let (weights, onnx) = (runs.join("model.safetensors"), runs.join("model.onnx"));
    let output = kiln(&[
        "export-model",
        run.to_str().unwrap(),
        "--safetensors",
        weights.to_str().unwrap(),
        "--onnx",
        onnx.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", stderr(&output));
    assert!(
        stdout.contains("4 tensors with PyTorch's names"),
        "{stdout}"
    );
    assert!(stdout.contains("ONNX opset 17"), "{stdout}");
    // safetensors: an 8-byte little-endian header length, then the header's JSON.
    let bytes = std::fs::read(&weights).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + header_len]).unwrap();
    // README's Sequential(Flatten(), Linear(784, 16), ReLU(), Linear(16, 10)).
    assert_eq!(header["1.weight"]["shape"], serde_json::json!([16, 784]));
    assert_eq!(header["1.bias"]["shape"], serde_json::json!([16]));
    assert_eq!(header["3.weight"]["shape"], serde_json::json!([10, 16]));
    assert_eq!(header["3.bias"]["shape"], serde_json::json!([10]));
    let graph = std::fs::read(&onnx).unwrap();
    assert!(
        graph
            .windows(b"probabilities".len())
            .any(|w| w == b"probabilities"),
        "the graph names its outputs"
    );

    let output = kiln(&[
        "export-model",
        runs.to_str().unwrap(),
        "--onnx",
        onnx.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("has no trained model"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn compare_prints_what_differs_and_the_figures_side_by_side() {
    let runs = scratch_dir("compare");
    for lr in ["0.01", "0.001"] {
        let output = train_tiny(&runs, &["--lr", lr, "--name", &format!("lr{lr}")]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let mut folders: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut args = vec!["compare"];
    args.extend(folders.iter().map(String::as_str));
    let output = kiln(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    let lr_row = table
        .lines()
        .find(|l| l.starts_with("lr "))
        .expect("an lr row");
    assert!(
        lr_row.contains("0.01") && lr_row.contains("0.001"),
        "{table}"
    );
    assert!(table.contains("final test accuracy (%)"), "{table}");
    assert!(table.contains("steady samples/s"), "{table}");
    // Settings that are the same are not listed.
    assert!(!table.lines().any(|l| l.starts_with("batch ")), "{table}");

    let output = kiln(&["compare", &folders[0]]);
    assert!(!output.status.success(), "one run is not a comparison");
}

#[test]
fn the_confusion_matrix_matches_the_exported_predictions() {
    let runs = scratch_dir("confusion");
    let output = train_tiny(&runs, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("test report:"), "{stdout}");
    // The built-in data's 10 classes: both splits' tables name them and give top-5 accuracy.
    let validation = stdout
        .split("validation report, on the kept weights:")
        .nth(1)
        .unwrap_or_else(|| panic!("no validation report in {stdout}"));
    assert!(
        validation.contains("macro avg") && validation.contains("top-5 accuracy"),
        "{stdout}"
    );
    let run = only_run_folder(&runs);
    // Count (true, predicted) pairs from predictions.csv on our own...
    let predictions = std::fs::read_to_string(run.join("predictions.csv")).unwrap();
    let mut lines = predictions.lines();
    assert_eq!(
        lines.next(),
        Some("index,label,predicted,confidence,label_rank")
    );
    let mut counts = vec![vec![0u64; 10]; 10];
    let mut rows = 0;
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let truth: usize = fields[1].parse().unwrap();
        let guess: usize = fields[2].parse().unwrap();
        let confidence: f64 = fields[3].parse().unwrap();
        assert!((0.0..=1.0).contains(&confidence));
        // No class scores above the true one exactly when the prediction is right.
        let rank: u8 = fields[4].parse().unwrap();
        assert_eq!(rank == 0, truth == guess, "{line}");
        counts[truth][guess] += 1;
        rows += 1;
    }
    assert_eq!(rows, 2000, "one row per test image");
    // ...and they must be exactly the confusion matrix the run wrote.
    let confusion = std::fs::read_to_string(run.join("confusion.csv")).unwrap();
    let table: Vec<Vec<u64>> = confusion
        .lines()
        .skip(1)
        .map(|line| {
            line.rsplit(',')
                .take(10)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(|v| v.parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(table, counts);
    // report.csv: each class's precision, recall and support from those same counts.
    let report = std::fs::read_to_string(run.join("report.csv")).unwrap();
    let rows: Vec<Vec<&str>> = report.lines().map(|l| l.rsplit(',').collect()).collect();
    assert_eq!(rows[0], ["support", "f1", "recall", "precision", "class"]);
    for class in 0..10 {
        let hits = counts[class][class] as f64;
        let support: u64 = counts[class].iter().sum();
        let given: u64 = counts.iter().map(|row| row[class]).sum();
        let row = &rows[class + 1];
        let value = |i: usize| row[i].parse::<f64>().unwrap();
        assert_eq!(row[0], support.to_string(), "{report}");
        assert!((value(2) - hits / support as f64).abs() < 1e-6, "{report}");
        assert!(
            (value(3) - hits / given.max(1) as f64).abs() < 1e-6,
            "{report}"
        );
    }
    assert!(report.contains("\nmacro avg,") && report.contains("\ntop-5 accuracy,"));
    // Reading the run back gives the same matrix, with the data set's class names.
    let loaded = kiln_core::run_folder::load_predictions(&run)
        .unwrap()
        .expect("a completed run has predictions");
    assert_eq!(loaded.confusion(), counts);
    assert_eq!(loaded.class_names.len(), 10);
}

#[test]
fn bench_compare_prints_both_loops_and_their_ratio_as_json() {
    let output = kiln(&[
        "bench",
        "--steps",
        "20",
        "--model",
        "mlp:16",
        "--device",
        "cpu",
        "--compare",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for (line, style) in lines.iter().zip(["kiln", "naive"]) {
        assert_eq!(line["style"], style);
        assert_eq!(line["steps"], 20);
        for key in [
            "warmup_secs",
            "median_step_ms",
            "p90_step_ms",
            "samples_per_sec",
            "train_loss",
        ] {
            assert!(line[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {line}");
        }
        let accuracy = line["train_accuracy"].as_f64();
        assert!(accuracy.is_some_and(|a| (0.0..=1.0).contains(&a)), "{line}");
        assert!(line.get("peak_device_bytes").is_some());
    }
    // Both loops trained the same steps, each keeping its own metrics.
    let metric = |i: usize, key: &str| lines[i][key].as_f64().unwrap_or(f64::NAN);
    assert!((metric(0, "train_loss") - metric(1, "train_loss")).abs() < 1e-4);
    assert_eq!(metric(0, "train_accuracy"), metric(1, "train_accuracy"));
    assert!(
        lines[2]["samples_per_sec_ratio"]
            .as_f64()
            .is_some_and(|r| r > 0.0)
    );
    // Continuing a run is `kiln train`'s job.
    let output = kiln(&["bench", "--resume", "runs/x"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("belongs to `kiln train`"));
}

/// The run folder under `runs` whose name ends in `name`.
fn run_folder_named(runs: &Path, name: &str) -> PathBuf {
    std::fs::read_dir(runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(name))
        .unwrap()
}

#[test]
fn augmented_runs_are_recorded_and_repeat_exactly() {
    // Separate processes: Burn's CPU generator is global, so only a whole process is isolated.
    let runs = scratch_dir("augment");
    let mut results = Vec::new();
    for name in ["first", "second"] {
        let output = train_tiny(&runs, &["--crop-padding", "2", "--flip", "--name", name]);
        assert!(output.status.success(), "{}", stderr(&output));
        let folder = run_folder_named(&runs, name);
        let config = std::fs::read_to_string(folder.join("config.toml")).unwrap();
        assert!(config.contains("crop_padding = 2"), "{config}");
        assert!(config.contains("flip = true"), "{config}");
        results.push(epoch_figures(&folder));
    }
    assert_eq!(
        results[0], results[1],
        "the same seed draws the same crops and flips"
    );
    let plain = train_tiny(&runs, &["--name", "plain"]);
    assert!(plain.status.success());
    let plain_folder = run_folder_named(&runs, "plain");
    assert_ne!(
        epoch_figures(&plain_folder),
        results[0],
        "augmentation changes training"
    );
}

/// Regression: with stdout closed early (`kiln train … | head`), printing failed with "Broken
/// pipe" and the run ended as failed; the printer now goes quiet and the run completes.
#[test]
fn a_closed_stdout_stops_the_printing_not_the_run() {
    use std::process::Stdio;
    let runs = scratch_dir("closed-stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "train",
            "--device",
            "cpu",
            "--model",
            "mlp:16",
            "--epochs",
            "2",
            "--runs-dir",
            runs.to_str().unwrap(),
        ])
        .env_remove("KILN_DATA_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kiln binary runs");
    // The reading end goes away before the first line is written, as `head` does after its lines.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = std::fs::read_to_string(only_run_folder(&runs).join("summary.json")).unwrap();
    assert!(summary.contains("\"completed\""), "{summary}");
}

/// A photo folder as a person has one: three classes of very different sizes, one photo copied
/// into test/ as well, a note and a broken file among the images.
fn write_photo_folder(root: &Path) {
    let photo = |path: &Path, shade: u8| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        image::RgbImage::from_fn(6, 5, |x, y| image::Rgb([shade, x as u8 * 40, y as u8 * 50]))
            .save(path)
            .unwrap();
    };
    for (class, count) in [("cat", 12), ("dog", 4), ("fox", 3)] {
        for i in 0..count {
            let shade = match class {
                "cat" => 10 + i as u8,
                "dog" => 100 + i as u8,
                _ => 200 + i as u8,
            };
            photo(
                &root.join("train").join(class).join(format!("{i}.png")),
                shade,
            );
        }
        photo(&root.join("test").join(class).join("t.png"), 250);
    }
    // The same photo as train/cat/0.png, in test/ too.
    photo(&root.join("test").join("cat").join("copy.png"), 10);
    std::fs::write(root.join("train").join("dog").join("notes.txt"), "a note").unwrap();
    // A photo beside the class folders has no class.
    photo(&root.join("test").join("stray.png"), 90);
    std::fs::write(
        root.join("train").join("dog").join("broken.png"),
        "not a png",
    )
    .unwrap();
}

/// Every file under `dir` with its bytes, by path.
fn files_and_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => pending.push(path),
                false => found.push((path.clone(), std::fs::read(&path).unwrap())),
            }
        }
    }
    found.sort();
    found
}

#[test]
fn predict_classifies_a_nested_folder_as_the_model_does_lists_broken_files_and_sorts_copies() {
    let dir = scratch_dir("predict");
    let root = dir.join("photos");
    write_photo_folder(&root);
    let runs = dir.join("runs");
    let spec = format!("folder:{}@8", root.display());
    let output = train_tiny(&runs, &["--dataset", &spec, "--batch-size", "4"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&runs);
    let before = files_and_bytes(&root);
    let (csv, sorted) = (dir.join("predictions.csv"), dir.join("sorted"));
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    // train/ holds 19 photos in class folders, a note and a broken file; a photo given alone.
    let output = kiln(&[
        "predict",
        &path(&run),
        &path(&root.join("train")),
        &path(&root.join("test").join("stray.png")),
        "--csv",
        &path(&csv),
        "--top",
        "2",
        "--batch-size",
        "8",
        "--sort-into",
        &path(&sorted),
        "--copy",
    ]);
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("predicted 20 image(s)"), "{said}");
    assert!(said.contains("2 file(s) could not be read"), "{said}");

    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("path,label_1,probability_1,label_2,probability_2,run,error")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 22, "{text}");
    let run_name = run.file_name().unwrap().to_string_lossy().into_owned();
    let predictor = kiln_core::predict::Predictor::load(&run).unwrap();
    for row in &rows {
        let cells: Vec<&str> = row.splitn(7, ',').collect();
        let file = Path::new(cells[0]);
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "broken.png" || name == "notes.txt" {
            assert!(cells[1].is_empty() && cells[2].is_empty(), "{row}");
            assert!(cells[6].len() > 10, "no reason for {row}");
            assert!(cells[5] == run_name, "{row}");
            continue;
        }
        assert!(cells[6].is_empty(), "{row}");
        // The batch's probabilities are those the window's Try gives the same file.
        let bytes = std::fs::read(file).unwrap();
        let pixels = predictor.pixels_of_bytes(cells[0], &bytes).unwrap();
        assert_eq!(pixels, predictor.pixels_of_file(file).unwrap());
        let ranked = predictor.classify_pixels(&pixels);
        let (p1, p2): (f32, f32) = (cells[2].parse().unwrap(), cells[4].parse().unwrap());
        assert_eq!(cells[1], ranked[0].0, "{row}");
        assert!((p1 - ranked[0].1).abs() < 1e-5, "{row} against {ranked:?}");
        assert!((p2 - ranked[1].1).abs() < 1e-5, "{row} against {ranked:?}");
        assert!(p1 >= p2);
    }
    // Copies of the 20 images under their classes; the originals untouched.
    let copies = files_and_bytes(&sorted);
    assert_eq!(copies.len(), 20, "{copies:?}");
    for (copy, _) in &copies {
        let class = copy.parent().unwrap().file_name().unwrap();
        assert!(
            ["cat", "dog", "fox"].contains(&class.to_str().unwrap()),
            "{copy:?}"
        );
    }
    assert_eq!(files_and_bytes(&root), before, "predict changed the photos");

    // Without --copy or --link, nothing is sorted, and the sentence says why.
    let output = kiln(&[
        "predict",
        &path(&run),
        &path(&root),
        "--sort-into",
        &path(&sorted),
    ]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--copy or --link"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn data_inspect_shows_classes_per_split_what_was_left_out_and_leaks() {
    let dir = scratch_dir("inspect");
    let root = dir.join("photos");
    write_photo_folder(&root);
    let grid = dir.join("grid.png");
    let spec = format!("folder:{}@8", root.display());
    let output = kiln(&[
        "data",
        "inspect",
        &spec,
        "--val-split",
        "0.25",
        "--grid",
        grid.to_str().unwrap(),
        "--samples",
        "4",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", stderr(&output));
    assert!(
        stdout.contains("photos: 3 classes, 8×8 pixels, RGB"),
        "{stdout}"
    );
    // The files' own size, before the resize to 8×8: every readable photo is 6×5 RGB.
    assert!(stdout.contains("read from: 23 × 6×5 RGB\n"), "{stdout}");
    // train/cat has 12 images: 3 carved for validation; test/ was given.
    let cat = stdout.lines().find(|l| l.starts_with("cat ")).unwrap();
    let figures: Vec<&str> = cat.split_whitespace().collect();
    assert_eq!(&figures[1..4], ["9", "3", "2"], "{stdout}");
    assert!(stdout.contains("unbalanced"), "{stdout}");
    assert!(stdout.contains("3 file(s) left out"), "{stdout}");
    assert!(
        stdout.contains("stray.png: it is outside every class sub-folder"),
        "{stdout}"
    );
    assert!(stdout.contains("notes.txt: it is not an image"), "{stdout}");
    assert!(stdout.contains("broken.png"), "{stdout}");
    assert!(
        stdout.contains("1 image(s) appear in more than one split"),
        "{stdout}"
    );
    // Named by their files, so they can be found and removed.
    let cat = |split: &str, file: &str| root.join(split).join("cat").join(file);
    let leak = stdout
        .lines()
        .find(|line| line.contains(" = test: "))
        .unwrap_or_else(|| panic!("no leak line in {stdout}"));
    assert!(
        leak.contains(&cat("train", "0.png").display().to_string())
            && leak.ends_with(&cat("test", "copy.png").display().to_string()),
        "{leak}"
    );
    let grid_image = image::open(&grid).unwrap();
    // Four cells of 8 + 1 pixels per row, one row per class.
    assert_eq!((grid_image.width(), grid_image.height()), (36, 27));

    // The augmentation preview: ten images (the classes in turn), the evaluated row and six draws.
    let preview = dir.join("augmentation.png");
    let output = kiln(&[
        "data",
        "inspect",
        &spec,
        "--device",
        "cpu",
        "--augmentation",
        preview.to_str().unwrap(),
        "--flip",
        "--rotation-degrees",
        "10",
        "--crop-scale",
        "0.5",
        "--brightness",
        "0.2",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let preview_image = image::open(&preview).unwrap().to_rgba8();
    assert_eq!((preview_image.width(), preview_image.height()), (90, 63));
    let cell = |row: u32| -> Vec<u8> {
        (0..8)
            .flat_map(|y| (0..8).map(move |x| (x, row * 9 + y)))
            .flat_map(|(x, y)| preview_image.get_pixel(x, y).0)
            .collect()
    };
    assert!(
        (1..7).all(|row| cell(row) != cell(0)),
        "every step draws anew"
    );
    let output = kiln(&[
        "data",
        "inspect",
        &spec,
        "--augmentation",
        preview.to_str().unwrap(),
        "--rotation-degrees",
        "45",
    ]);
    assert!(
        stderr(&output).contains("rotation_degrees = 45: must be between 0 and 30"),
        "{}",
        stderr(&output)
    );

    let output = kiln(&["data", "inspect", "folder:/nonexistent/kiln-photos"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("does not exist"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_photo_folder_with_unreadable_files_trains_on_the_rest_and_lists_them() {
    let dir = scratch_dir("skipped");
    let root = dir.join("photos");
    write_photo_folder(&root);
    let runs = dir.join("runs");
    let spec = format!("folder:{}@8", root.display());
    let output = train_tiny(&runs, &["--dataset", &spec, "--batch-size", "4"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", stderr(&output));
    let warned = format!("{stdout}{}", stderr(&output));
    assert!(
        warned.contains("3 file(s) of the data set were left out"),
        "{warned}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(only_run_folder(&runs).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["outcome"], "completed", "{summary}");
    let skipped: Vec<(String, String)> = summary["skipped_files"]
        .as_array()
        .unwrap_or_else(|| panic!("no skipped_files in {summary}"))
        .iter()
        .map(|file| {
            let path = file["path"].as_str().unwrap();
            let name = Path::new(path).file_name().unwrap().to_string_lossy();
            (
                name.into_owned(),
                file["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let names: Vec<&str> = skipped.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), 3, "{skipped:?}");
    for name in ["broken.png", "notes.txt", "stray.png"] {
        assert!(names.contains(&name), "{name} missing from {skipped:?}");
    }
    assert!(skipped.iter().all(|(_, reason)| !reason.is_empty()));
    // test/ as given: its four photos (the stray one beside the class folders is not one).
    assert_eq!(summary["split_sizes"]["test"], 4, "{summary}");
}

#[test]
fn a_labels_csv_trains_on_the_rows_whose_files_exist_and_keeps_awkward_names_exactly() {
    let dir = scratch_dir("labels-csv");
    let root = dir.join("photos");
    write_photo_folder(&root);
    // The same photos listed in a CSV, under names no class folder could carry.
    let names = [
        ("cat", "tabby, \"orange\""),
        ("dog", "🐕 dog"),
        ("fox", "fox"),
    ];
    let quoted = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let mut csv = String::from("id,photo,breed,split\n");
    for (i, (folder, name)) in names.iter().enumerate() {
        let mut files: Vec<String> = std::fs::read_dir(root.join("train").join(folder))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".png"))
            .collect();
        files.sort();
        for file in files {
            csv.push_str(&format!(
                "{i},train/{folder}/{file},{},train\n",
                quoted(name)
            ));
        }
        csv.push_str(&format!("{i},test/{folder}/t.png,{},TEST\n", quoted(name)));
    }
    csv.push_str("9,train/cat/missing.png,fox,train\n");
    let labels = root.join("labels.csv");
    std::fs::write(&labels, csv).unwrap();
    let spec = format!("csv:{}@8", labels.display());

    // Two columns could hold the labels: the sentence asks which.
    let output = kiln(&["data", "inspect", &spec]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "which of its columns (`id`, `breed`) holds the labels? name it with --label-column"
        ),
        "{}",
        stderr(&output)
    );
    let columns = ["--path-column", "photo", "--label-column", "breed"];
    let output = kiln(&[&["data", "inspect", spec.as_str()][..], &columns].concat());
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{report}{}", stderr(&output));
    for expected in [
        "🐕 dog",
        "tabby, \"orange\"",
        "missing.png: not found (line 25 of labels.csv)",
        "broken.png: ",
    ] {
        assert!(report.contains(expected), "{expected:?} in {report}");
    }

    let runs = dir.join("runs");
    let args = [
        &["--dataset", spec.as_str(), "--batch-size", "4"][..],
        &columns,
    ]
    .concat();
    let output = train_tiny(&runs, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&runs);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["outcome"], "completed", "{summary}");
    assert_eq!(summary["split_sizes"]["test"], 3, "{summary}");
    // The run's own tables give the names back as they were written.
    let predictions = kiln_core::run_folder::load_predictions(&run)
        .unwrap()
        .unwrap();
    let mut expected: Vec<&str> = names.iter().map(|(_, name)| *name).collect();
    expected.sort();
    assert_eq!(predictions.class_names, expected);
    // The config keeps the columns, so the run can be repeated from it.
    let config = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(config.contains("kind = \"csv\""), "{config}");
    assert!(config.contains("label_column = \"breed\""), "{config}");
}

#[test]
fn a_sweep_runs_every_trial_into_one_folder_and_shows_a_row_per_setting() {
    let dir = scratch_dir("sweep");
    let config = dir.join("s.toml");
    let base =
        "name = \"tiny\"\ndevice = \"cpu\"\nepochs = 1\n\n[model]\nkind = \"mlp\"\nwidths = [16]\n";
    // A value the engine refuses is named, with its trial, before anything runs.
    std::fs::write(&config, format!("{base}\n[sweep]\nlr = [0.1, -1.0]\n")).unwrap();
    let sweeps = dir.join("sweeps");
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    let output = kiln(&["sweep", &path(&config), "--sweeps-dir", &path(&sweeps)]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("trial 2 (lr=-1.0):"),
        "{}",
        stderr(&output)
    );
    assert!(!sweeps.exists(), "a refused sweep makes no folder");

    std::fs::write(
        &config,
        format!("{base}\n[sweep]\nseeds = 2\nlr = [0.001, 0.05]\n"),
    )
    .unwrap();
    let output = kiln(&["sweep", &path(&config), "--sweeps-dir", &path(&sweeps)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let sweep = only_run_folder(&sweeps);
    let trials = std::fs::read_dir(&sweep)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(trials, 4);
    // The metric against the axis, drawn beside the trials.
    assert!(
        std::fs::read(sweep.join("sweep-lr.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );
    let svg = std::fs::read_to_string(sweep.join("sweep-lr.svg")).unwrap();
    assert!(svg.contains("validation accuracy against lr"));
    assert!(
        !svg.contains("log scale"),
        "listed values under two decades apart lie on a linear axis"
    );
    let csv = dir.join("table.csv");
    let plots = dir.join("plots");
    let output = kiln(&[
        "sweep",
        "show",
        &path(&sweep),
        "--csv",
        &path(&csv),
        "--plots",
        &path(&plots),
    ]);
    assert!(plots.join("sweep-lr.svg").is_file());
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        table.starts_with("4 trial(s): grid search over lr (2), 2 seed(s) each"),
        "{table}"
    );
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("lr=")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows.iter().all(|r| r.contains("2/2") && r.contains(" ± ")),
        "{table}"
    );
    assert_eq!(
        rows.iter().filter(|r| r.ends_with("best")).count(),
        1,
        "{table}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("setting,planned,finished,val_accuracy_mean")
    );
    assert_eq!(lines.count(), 2);
    // Sorted by validation, the best row comes first.
    let output = kiln(&["sweep", "show", &path(&sweep), "--sort", "validation"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let sorted = String::from_utf8_lossy(&output.stdout).into_owned();
    let first = sorted.lines().find(|l| l.starts_with("lr=")).unwrap();
    assert!(first.ends_with("best"), "{sorted}");
    let output = kiln(&["sweep", "show", &path(&sweep), "--sort", "fastest"]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("val-loss"), "{}", stderr(&output));
}

#[test]
fn a_tpe_sweep_proposes_from_results_and_asha_prunes_each_trial_behind_at_its_rung() {
    let dir = scratch_dir("tpe-sweep");
    let config = dir.join("s.toml");
    std::fs::write(
        &config,
        "name = \"tiny\"\ndevice = \"cpu\"\nepochs = 3\n\n[model]\nkind = \"mlp\"\nwidths = [16]\n\n[sweep]\nsearch = \"tpe\"\ntrials = 4\nstartup_trials = 2\nprune = \"asha\"\nlr = { min = 0.00001, max = 0.1, log = true }\n",
    )
    .unwrap();
    let sweeps = dir.join("sweeps");
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    let output = kiln(&["sweep", &path(&config), "--sweeps-dir", &path(&sweeps)]);
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("4 trial(s): tpe search over lr"), "{said}");
    assert!(said.contains("pruning by ASHA"), "{said}");
    assert!(
        said.contains("proposed by tpe from 2 setting(s) with results: lr="),
        "{said}"
    );
    assert!(
        said.contains("proposed by tpe from 3 setting(s) with results: lr="),
        "{said}"
    );
    let sweep = only_run_folder(&sweeps);
    let proposals = std::fs::read_to_string(sweep.join("proposals.toml")).unwrap();
    assert_eq!(proposals.matches("[[proposal]]").count(), 2, "{proposals}");
    let mut trials: Vec<PathBuf> = std::fs::read_dir(&sweep)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    // Named <timestamp>-tiny-t001…: by their place in the plan.
    trials.sort_by_key(|p| p.to_string_lossy().rsplit('-').next().unwrap().to_string());
    assert_eq!(trials.len(), 4);
    // One device runs the trials in order; the first rung is epoch 1 and, with fewer than six
    // trials there, only the leader so far goes on (the next rung, epoch 3, is the last epoch).
    let mut leader = f64::NEG_INFINITY;
    let mut pruned_count = 0;
    for trial in &trials {
        let epochs = std::fs::read_to_string(trial.join("epochs.csv")).unwrap();
        let header: Vec<&str> = epochs.lines().next().unwrap().split(',').collect();
        let column = header.iter().position(|c| *c == "val_accuracy").unwrap();
        let first: f64 = epochs
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .nth(column)
            .unwrap()
            .parse()
            .unwrap();
        let summary = std::fs::read_to_string(trial.join("summary.json")).unwrap();
        let pruned = summary.contains("\"pruned\"");
        assert_eq!(pruned, first < leader, "{}: {summary}", trial.display());
        if pruned {
            pruned_count += 1;
            assert!(summary.contains("\"asha\""), "{summary}");
            assert_eq!(
                epochs.lines().count(),
                2,
                "a trial pruned at epoch 1 trains no more"
            );
        } else {
            assert_eq!(epochs.lines().count(), 4, "{epochs}");
        }
        leader = leader.max(first);
    }
    let output = kiln(&["sweep", "show", &path(&sweep)]);
    let table = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(table.matches(" pruned)").count(), pruned_count, "{table}");
}

#[test]
fn explain_loop_splits_the_naive_loops_slowdown_habit_by_habit() {
    let output = kiln(&["explain", "--loop", "--device", "cpu", "--steps", "10"]);
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{said}{}", stderr(&output));
    let rows: Vec<&str> = said
        .lines()
        .filter(|l| {
            l.starts_with("Kiln's loop") || l.starts_with("+ ") || l.starts_with("all of them")
        })
        .collect();
    assert_eq!(
        rows.len(),
        8,
        "Kiln's, each of six habits, the naive loop: {said}"
    );
    assert!(
        rows[0].contains(" 1.00 "),
        "Kiln's loop against itself: {said}"
    );
    assert!(said.contains("+ the loss read every step"), "{said}");
    assert!(said.contains("+ evaluation synced per batch"), "{said}");
    // Which sentence follows depends on the machine's timings (a quiet CPU can time the naive
    // loop within 5 % of Kiln's); each names the largest habit alone.
    assert!(said.contains(". The largest alone: "), "{said}");
    // Two configs and --loop are two questions.
    let output = kiln(&["explain", "--loop", "a.toml", "b.toml"]);
    assert!(!output.status.success());
}

#[test]
fn explain_splits_a_gap_into_effects_that_agree_with_separate_runs_of_each_flip() {
    let dir = scratch_dir("explain");
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    let config = |name: &str, rest: &str| {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!("name = \"{name}\"\ndevice = \"cpu\"\nepochs = 1\n{rest}\n[model]\nkind = \"mlp\"\nwidths = [16]\n"),
        )
        .unwrap();
        file
    };
    let a = config("a", "lr = 0.001\n");
    let b = config("b", "lr = 0.01\ninput_scaling = \"standardize\"\n");
    let sweeps = dir.join("sweeps");
    let output = kiln(&[
        "explain",
        &path(&a),
        &path(&b),
        "--seeds",
        "1",
        "--sweeps-dir",
        &path(&sweeps),
    ]);
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{said}{}", stderr(&output));
    assert!(
        said.contains("  input_scaling (unit-range → standardize)\n  lr (0.001 → 0.01)\n"),
        "{said}"
    );
    assert!(said.contains("B against A: +"), "{said}");
    assert!(said.contains("lr (0.001 → 0.01): alone "), "{said}");
    assert!(said.contains("(their interaction)"), "{said}");
    let folder = only_run_folder(&sweeps);
    assert!(
        std::fs::read(folder.join("explain.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );
    assert!(
        std::fs::read_to_string(folder.join("explain.svg"))
            .unwrap()
            .contains("<svg")
    );

    // The lr flip alone is A trained at B's rate: a run of its own gives the same figure.
    let runs = dir.join("runs");
    let output = kiln(&[
        "train",
        "--config",
        &path(&a),
        "--lr",
        "0.01",
        "--runs-dir",
        &path(&runs),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let separate = std::fs::read_to_string(only_run_folder(&runs).join("summary.json")).unwrap();
    let separate: serde_json::Value = serde_json::from_str(&separate).unwrap();
    let separate = separate["final_val_accuracy"].as_f64().unwrap();
    let row = said
        .lines()
        .find(|l| l.starts_with("lr=0.01 "))
        .unwrap_or_else(|| panic!("no lr=0.01 row in {said}"));
    assert!(
        row.contains(&format!("{:.2} ± 0.00 %", 100.0 * separate)),
        "{row} against a separate run's {separate}"
    );
}

#[test]
fn a_cpu_run_does_not_wake_the_gpu_drivers() {
    // Mesa's Vulkan loader complains of a missing XDG_RUNTIME_DIR when adapters are listed.
    let runs = scratch_dir("cpu-quiet");
    let output = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "train", "--device", "cpu", "--model", "mlp:8", "--epochs", "1",
        ])
        .args(["--runs-dir", runs.to_str().unwrap()])
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("KILN_DATA_DIR")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("XDG_RUNTIME_DIR"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn archive_and_import_carry_a_run_to_another_runs_folder_and_refuse_a_cut_archive() {
    let dir = scratch_dir("archive-import");
    let output = train_tiny(&dir.join("here"), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&dir.join("here"));
    let archive = dir.join("carried.tar");
    let archive_arg = archive.to_str().unwrap();
    let output = kiln(&["archive", run.to_str().unwrap(), "-o", archive_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    // A second archive to the same file would replace the first: refused.
    let output = kiln(&["archive", run.to_str().unwrap(), "-o", archive_arg]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("give another --output"),
        "{}",
        stderr(&output)
    );

    let there = dir.join("there");
    let output = kiln(&["import", archive_arg, "--runs-dir", there.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let imported = only_run_folder(&there);
    assert_eq!(imported.file_name(), run.file_name());
    for file in [
        "config.toml",
        "metrics.csv",
        "epochs.csv",
        "summary.json",
        "model.bpk",
    ] {
        assert_eq!(
            std::fs::read(imported.join(file)).unwrap(),
            std::fs::read(run.join(file)).unwrap(),
            "{file}"
        );
    }
    // The imported run is a run: it exports as one trained here would.
    let csv = dir.join("imported.csv");
    let output = kiln(&[
        "export",
        imported.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));

    let bytes = std::fs::read(&archive).unwrap();
    let cut = dir.join("cut.tar");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    let elsewhere = dir.join("elsewhere");
    let output = kiln(&[
        "import",
        cut.to_str().unwrap(),
        "--runs-dir",
        elsewhere.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let said = stderr(&output);
    assert!(
        said.contains("cut short") && said.contains("cut.tar"),
        "{said}"
    );
    assert!(!said.contains("panicked"), "{said}");
    assert!(!elsewhere.exists(), "a refused archive writes no folder");
}

#[test]
fn other_frameworks_logs_import_as_runs_that_export_and_compare_beside_kilns() {
    let dir = scratch_dir("import-logs");
    let runs = dir.join("runs");
    let output = train_tiny(&runs, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let kiln_run = only_run_folder(&runs);

    // What Keras 3's CSVLogger writes, and a Lightning CSVLogger folder with its hparams.yaml.
    let logs = dir.join("logs");
    std::fs::create_dir_all(logs.join("lightning_logs/version_0")).unwrap();
    std::fs::write(
        logs.join("training.log"),
        "epoch,accuracy,learning_rate,loss,val_accuracy,val_loss\n\
         0,0.78,0.001,0.62,0.83,0.48\n1,0.85,0.001,0.41,0.845,0.43\n",
    )
    .unwrap();
    std::fs::write(
        logs.join("lightning_logs/version_0/metrics.csv"),
        "epoch,step,train_loss_epoch,val_acc,val_loss\n0,99,0.7,,\n0,99,,0.8,0.5\n",
    )
    .unwrap();
    std::fs::write(
        logs.join("lightning_logs/version_0/hparams.yaml"),
        "lr: 0.003\nbatch_size: 32\n",
    )
    .unwrap();
    // A folder holding both: each log becomes a run folder of its own.
    let output = kiln(&[
        "import",
        logs.to_str().unwrap(),
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let imported: Vec<PathBuf> = stdout.lines().map(PathBuf::from).collect();
    assert_eq!(imported.len(), 2, "{stdout}");
    let (lightning, keras) = (&imported[0], &imported[1]);
    assert!(
        lightning
            .to_string_lossy()
            .ends_with("-lightning-version_0"),
        "{stdout}"
    );
    assert!(
        keras.to_string_lossy().ends_with("-keras-training"),
        "{stdout}"
    );
    // Unknown figures are empty cells, never zeros; Keras counts epochs from 0, Kiln from 1.
    let epochs = std::fs::read_to_string(keras.join("epochs.csv")).unwrap();
    assert_eq!(
        epochs.lines().nth(1),
        Some("1,0.620000,0.780000,0.480000,0.830000,,,,,"),
        "{epochs}"
    );
    let source = std::fs::read_to_string(lightning.join("source.json")).unwrap();
    assert!(source.contains("\"framework\": \"Lightning\""), "{source}");

    // It exports as any run does: plotted against epochs, which is all a log can place.
    let png = dir.join("overlay.png");
    let output = kiln(&[
        "export",
        kiln_run.to_str().unwrap(),
        keras.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("plotting against epochs"),
        "{}",
        stderr(&output)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);

    // Compared beside Kiln's run: the framework and the hyperparameters the log names.
    let output = kiln(&[
        "compare",
        kiln_run.to_str().unwrap(),
        lightning.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(
        row("framework"),
        Some(vec!["framework", "Kiln", "Lightning"]),
        "{table}"
    );
    assert_eq!(row("batch"), Some(vec!["batch", "64", "32"]), "{table}");
    assert!(table.contains("final validation accuracy (%)"), "{table}");

    // A folder of Kiln runs only, and a file that is no log, each say so.
    let output = kiln(&[
        "import",
        runs.to_str().unwrap(),
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("holds Kiln run folders only (3)"),
        "{}",
        stderr(&output)
    );
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a log\n").unwrap();
    let output = kiln(&[
        "import",
        notes.to_str().unwrap(),
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let said = stderr(&output);
    assert!(said.contains("notes.txt was not imported"), "{said}");
    assert!(!said.contains("panicked"), "{said}");

    // A script's own column names: named by the person, read as the figures they name.
    let mine = dir.join("mine.csv");
    std::fs::write(&mine, "epoch,objective,holdout\n1,0.9,0.61\n2,0.7,0.66\n").unwrap();
    let elsewhere = dir.join("elsewhere");
    let import_mine = |series: &[&str]| {
        let mut args = vec!["import", mine.to_str().unwrap(), "--runs-dir"];
        args.push(elsewhere.to_str().unwrap());
        for spec in series {
            args.extend(["--series", spec]);
        }
        kiln(&args)
    };
    let output = import_mine(&[]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("`objective`, `holdout`"),
        "{}",
        stderr(&output)
    );
    let output = import_mine(&["f1=holdout"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--series 'f1' is not a figure"),
        "{}",
        stderr(&output)
    );
    let output = import_mine(&["loss=objective", "val_accuracy=holdout"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = only_run_folder(&elsewhere);
    let epochs = std::fs::read_to_string(run.join("epochs.csv")).unwrap();
    assert_eq!(
        epochs.lines().nth(2),
        Some("2,0.700000,,,0.660000,,,,,"),
        "{epochs}"
    );
}

#[test]
fn flavour_lays_a_frameworks_defaults_over_a_run_for_train_and_explain() {
    let dir = scratch_dir("flavour");
    let runs = dir.join("runs");
    let output = kiln(&[
        "train",
        "--preset",
        "fashion-mlp-pytorch",
        "--dataset",
        "synthetic",
        "--epochs",
        "1",
        "--flavour",
        "keras",
        "--device",
        "cpu",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let folder = only_run_folder(&runs);
    let config = std::fs::read_to_string(folder.join("config.toml")).unwrap();
    // Keras's defaults, and the flags given after the flavour still count.
    for line in [
        "name = \"fashion-mlp-keras\"",
        "init = \"glorot-uniform\"",
        "input_scaling = \"raw\"",
        "epochs = 1",
    ] {
        assert!(config.contains(line), "{line} missing from\n{config}");
    }
    let output = kiln(&["explain", "fashion-mlp", "--flavour", "keras", "--list"]);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        said.contains("B (fashion-mlp with Keras's defaults) differs from A (fashion-mlp) in:")
            && said.contains("init (pytorch-default → glorot-uniform)"),
        "{said}"
    );
    let output = kiln(&["train", "--flavour", "jax", "--epochs", "1"]);
    assert!(
        stderr(&output).contains("'jax' is no framework flavour; use pytorch or keras"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_log_validated_on_the_test_set_imports_its_figures_as_test_figures() {
    let dir = scratch_dir("import-test-split");
    let log = dir.join("training.log");
    std::fs::write(
        &log,
        "epoch,accuracy,loss,val_accuracy,val_loss\n0,0.8,0.5,0.81,0.45\n1,0.85,0.4,0.84,0.42\n",
    )
    .unwrap();
    let runs = dir.join("runs");
    let output = kiln(&[
        "import",
        log.to_str().unwrap(),
        "--validated-on-test",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let folder = only_run_folder(&runs);
    let run = kiln_core::run_folder::RunHistory::load(&folder).unwrap();
    let last = run.epochs.last().unwrap();
    assert_eq!(
        (last.val_accuracy, last.test_accuracy, last.test_loss),
        (None, Some(0.84), Some(0.42))
    );
    assert_eq!(run.validated_on(), kiln_core::selection::ValidatedOn::Test);
    let source = std::fs::read_to_string(folder.join("source.json")).unwrap();
    assert!(source.contains("computed on the test set"), "{source}");
}

#[test]
fn a_multi_label_labels_file_is_inspected_label_by_label_and_trains_with_a_probability_per_label() {
    let dir = scratch_dir("multi-label");
    let mut rows = String::from("path,tags,split\n");
    // 30 images: `sky` on every one, `sea` on every other, `boat` on three.
    for i in 0..30u8 {
        let name = format!("{i}.png");
        std::fs::write(dir.join(&name), kiln_test_support::grey_png(i * 8)).unwrap();
        let mut tags = vec!["sky"];
        if i % 2 == 0 {
            tags.push("sea");
        }
        if i < 3 {
            tags.push("boat");
        }
        let split = if i < 25 { "train" } else { "test" };
        rows.push_str(&format!("{name},{},{split}\n", tags.join(";")));
    }
    let labels = dir.join("labels.csv");
    std::fs::write(&labels, rows).unwrap();
    let spec = format!("csv:{}@8", labels.display());
    let output = kiln(&["data", "inspect", &spec, "--val-split", "0"]);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    for line in [
        "splits: 25 training, 0 validation, 5 test images",
        "several labels per image: 1.64 labels per training image on average, 0 of 25 with none",
        "`sea` and `sky` together on 13 training images (100 % of `sea`'s, 52 % of `sky`'s)",
        "warning: `boat` is on 3 training image(s), too few to learn it",
    ] {
        assert!(said.contains(line), "{line}\nin\n{said}");
    }
    assert!(said.lines().any(|l| l.starts_with("label ")), "{said}");
    let runs = dir.join("runs");
    let output = kiln(&[
        "train",
        "--dataset",
        &spec,
        "--epochs",
        "2",
        "--device",
        "cpu",
        "--threshold",
        "per-label",
        "--batch-size",
        "8",
        "--model",
        "mlp:8",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(said.contains("test report, per label:"), "{said}");
    assert!(said.contains("subset accuracy"), "{said}");
    assert!(said.contains("mAP "), "{said}");
    let folder = only_run_folder(&runs);
    let predictions = std::fs::read_to_string(folder.join("predictions.csv")).unwrap();
    let mut lines = predictions.lines();
    assert_eq!(
        lines.next(),
        Some(r#"index,file,"true boat","true sea","true sky","p boat","p sea","p sky""#)
    );
    // Five test images (25 to 29), each with its file, its labels as 0/1 and a probability each.
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5, "{predictions}");
    for row in &rows {
        assert_eq!(row.len(), 8, "{row:?}");
        assert_eq!(row[4], "1", "every image has `sky`: {row:?}");
        for p in &row[5..] {
            let p: f32 = p.parse().unwrap();
            assert!((0.0..=1.0).contains(&p), "{row:?}");
        }
    }
    let report = std::fs::read_to_string(folder.join("report.csv")).unwrap();
    assert!(
        report.starts_with(
            "label,precision,recall,f1,support,average_precision,threshold\n\"boat\","
        ),
        "{report}"
    );
    for row in [
        "micro avg,",
        "macro avg,",
        "weighted avg,",
        "subset accuracy,",
        "hamming loss,",
    ] {
        assert!(report.contains(row), "{row} in {report}");
    }
    let summary = std::fs::read_to_string(folder.join("summary.json")).unwrap();
    assert!(summary.contains("\"label_report\""), "{summary}");
    // `kiln predict` gives each file a sigmoid per label, as the run's own test did.
    let image = dir.join("27.png");
    let output = kiln(&["predict", folder.to_str().unwrap(), image.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let csv = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("path,labels,p boat,p sea,p sky,run,error"),
        "{csv}"
    );
    let predicted: Vec<&str> = lines.next().unwrap().split(',').collect();
    let tested = rows
        .iter()
        .find(|row| row[1].ends_with("27.png\""))
        .unwrap();
    for (p, q) in predicted[2..5].iter().zip(&tested[5..8]) {
        let (p, q): (f32, f32) = (p.parse().unwrap(), q.parse().unwrap());
        assert!((p - q).abs() < 1e-5, "{csv} against {tested:?}");
    }
    // Its ONNX file ends in a sigmoid and carries the thresholds for whoever reads it alone.
    let onnx = dir.join("labels.onnx");
    let output = kiln(&[
        "export-model",
        folder.to_str().unwrap(),
        "--onnx",
        onnx.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bytes = std::fs::read(&onnx).unwrap();
    let holds = |text: &str| bytes.windows(text.len()).any(|w| w == text.as_bytes());
    assert!(holds("Sigmoid") && holds("thresholds") && !holds("Softmax"));
}
