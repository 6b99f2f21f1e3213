//! Any bytes as another framework's training log: a Keras or plain CSV, a Keras History JSON,
//! a Lightning metrics.csv with the same bytes as its hparams.yaml. Never a panic; whatever is
//! read has each epoch once, in order, counted from 1.
#![no_main]

use kiln_formats::training_log::{
    Framework, TrainingLog, read_epoch_csv, read_keras_history, read_lightning,
};
use libfuzzer_sys::fuzz_target;

fn check(log: Result<TrainingLog, String>) {
    if let Ok(log) = log {
        assert!(log.epochs.windows(2).all(|w| w[0].epoch < w[1].epoch));
        assert!(log.epochs.iter().all(|e| e.epoch >= 1));
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check(read_epoch_csv(&text, Framework::Csv));
    check(read_keras_history(&text));
    check(read_lightning(&text, Some(&text)));
});
