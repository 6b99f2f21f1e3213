//! The hyperparameters of a Keras model saved beside its training log: a `.keras` file (Keras
//! 3's `model.save`, a zip holding `config.json`) or the config as JSON (`model.to_json()`, a
//! `config.json`): the optimizer and its settings from the compile config, the loss, and the
//! layers in one line, as `kiln compare` lists an imported run's hyperparameters.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files::FileTree;

/// The most of a `.keras` file's `config.json` read: a config is kilobytes; the weights beside
/// it in the zip are never read.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The model file beside the Keras log `log`, and its hyperparameters: `<stem>.keras`, else the
/// folder's only `.keras` file, else a `config.json` or `model.json` in Keras's shape. None where
/// there is none, or it cannot be read (the log is imported without them).
pub(crate) fn hparams_beside(
    tree: &dyn FileTree,
    log: &Path,
    files: &[PathBuf],
) -> Option<(PathBuf, Vec<(String, String)>)> {
    let stem = log.file_stem()?.to_string_lossy().into_owned();
    let ends = |path: &PathBuf, ending: &str| {
        path.file_name()
            .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(ending))
    };
    let models: Vec<&PathBuf> = files.iter().filter(|f| ends(f, ".keras")).collect();
    let named = models
        .iter()
        .find(|f| f.file_stem().is_some_and(|s| s.to_string_lossy() == stem));
    let model = named.or(match models.as_slice() {
        [only] => Some(only),
        _ => None,
    });
    if let Some(model) = model {
        let config = read_keras_file(tree, model).ok()?;
        return Some(((*model).clone(), keras_hparams(&config)));
    }
    files
        .iter()
        .filter(|f| ends(f, "config.json") || ends(f, "model.json"))
        .find_map(|file| {
            let (mut reader, len) = tree.open(file).ok()?;
            if len > MAX_CONFIG_BYTES {
                return None;
            }
            let mut text = String::new();
            reader.read_to_string(&mut text).ok()?;
            let config: Value = serde_json::from_str(&text).ok()?;
            is_keras_config(&config).then(|| (file.clone(), keras_hparams(&config)))
        })
}

/// The `config.json` of a `.keras` file.
fn read_keras_file(tree: &dyn FileTree, path: &Path) -> Result<Value, String> {
    let (reader, _) = tree.open(path).map_err(|e| e.to_string())?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| e.to_string())?;
    let entry = archive.by_name("config.json").map_err(|e| e.to_string())?;
    let mut text = String::new();
    entry
        .take(MAX_CONFIG_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Whether `config` is a Keras model's: a `class_name` and a `config` holding its layers.
fn is_keras_config(config: &Value) -> bool {
    config.get("class_name").is_some_and(Value::is_string)
        && config
            .pointer("/config/layers")
            .is_some_and(Value::is_array)
}

/// `(name, value)` pairs from a Keras model config: `optimizer` and `optimizer.<setting>` from
/// the compile config (numbers and switches that are set), `loss`, and `layers`, one line.
pub(crate) fn keras_hparams(config: &Value) -> Vec<(String, String)> {
    let mut hparams = Vec::new();
    if let Some(optimizer) = config.pointer("/compile_config/optimizer") {
        if let Some(class) = optimizer.get("class_name").and_then(Value::as_str) {
            hparams.push(("optimizer".to_owned(), class.to_ascii_lowercase()));
        }
        if let Some(settings) = optimizer.get("config").and_then(Value::as_object) {
            let ema = settings.get("use_ema").and_then(Value::as_bool) == Some(true);
            for (key, value) in settings {
                // What is off says nothing a reader needs (amsgrad, use_ema false; the EMA's
                // settings while it is off).
                let shown = match value {
                    Value::Number(_) if key.starts_with("ema_") && !ema => continue,
                    Value::Number(n) => keras_number(n),
                    Value::Bool(true) => "true".to_owned(),
                    _ => continue,
                };
                hparams.push((format!("optimizer.{key}"), shown));
            }
        }
    }
    if let Some(loss) = config
        .pointer("/compile_config/loss")
        .and_then(Value::as_str)
    {
        hparams.push(("loss".to_owned(), loss.to_owned()));
    }
    let layers: Vec<String> = config
        .pointer("/config/layers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(layer_summary)
        .collect();
    if !layers.is_empty() {
        hparams.push(("layers".to_owned(), layers.join(", ")));
    }
    if let Some(init) = config
        .pointer("/config/layers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|layer| layer.pointer("/config/kernel_initializer/class_name"))
        .and_then(Value::as_str)
    {
        hparams.push(("kernel_initializer".to_owned(), init.to_owned()));
    }
    hparams
}

/// A number of a Keras config as a person wrote it: Keras keeps the learning rate as a float32
/// (0.001 is saved as 0.0010000000474974513), so a value that is exactly a float32 is shown
/// as that float32's shortest form.
fn keras_number(number: &serde_json::Number) -> String {
    match number.as_f64() {
        Some(value) if !number.is_i64() && !number.is_u64() && f64::from(value as f32) == value => {
            format!("{}", value as f32)
        }
        _ => number.to_string(),
    }
}

/// A layer as `Dense(512, relu)`; the input layer is left out.
fn layer_summary(layer: &Value) -> Option<String> {
    let class = layer.get("class_name")?.as_str()?;
    if class == "InputLayer" {
        return None;
    }
    let config = layer.get("config");
    let field = |key: &str| config.and_then(|c| c.get(key));
    let mut parts = Vec::new();
    for key in ["units", "filters", "rate"] {
        if let Some(n) = field(key).filter(|v| v.is_number()) {
            parts.push(n.to_string());
        }
    }
    if let Some(size) = field("kernel_size").and_then(Value::as_array) {
        let sides: Vec<String> = size.iter().map(Value::to_string).collect();
        parts.push(sides.join("×"));
    }
    if let Some(activation) = field("activation").and_then(Value::as_str) {
        parts.push(activation.to_owned());
    }
    Some(match parts.is_empty() {
        true => class.to_owned(),
        false => format!("{class}({})", parts.join(", ")),
    })
}
