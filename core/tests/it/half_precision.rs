//! f16 training end to end on a real wgpu adapter with 16-bit float shaders (Mesa's lavapipe on
//! machines without a GPU), and its refusal on the CPU.

use std::fs;

use std::sync::Arc;

use kiln_core::config::{Experiment, ExperimentDraft, Precision};
use kiln_core::device::{self, DeviceChoice, DeviceError};
use kiln_core::run::{RunError, execute};
use kiln_core::train::{Control, RunOutcome};
use kiln_test_support::scratch_dir;

fn experiment(device: DeviceChoice) -> Experiment {
    ExperimentDraft {
        name: "f16".into(),
        model: "mlp:32".parse().expect("model"),
        batch_size: 200,
        epochs: 2,
        device,
        precision: Precision::F16,
        ..ExperimentDraft::default()
    }
    .validate()
    .expect("experiment")
}

#[test]
fn f16_trains_on_an_adapter_with_16_bit_shaders() {
    let Some(gpu) = device::list_devices()
        .into_iter()
        .find(|d| d.shader_f16 && d.id.starts_with("gpu:"))
    else {
        eprintln!("skipped: no adapter with 16-bit float shaders (install mesa-vulkan-drivers)");
        return;
    };
    let choice: DeviceChoice = gpu.id.parse().expect("gpu id");
    let runs = scratch_dir("gpu");
    let record = execute(
        &experiment(choice),
        &runs,
        &Arc::new(Control::new()),
        &mut |_| {},
        &mut |_| {},
    )
    .expect("an f16 run on an adapter that has SHADER_F16");
    let summary = &record.summary;
    assert_eq!(summary.outcome, RunOutcome::Completed, "{summary:?}");
    assert_eq!(summary.precision, Precision::F16);
    let scale = summary
        .loss_scale
        .as_ref()
        .expect("an f16 run reports its loss scale");
    assert!(scale.final_scale >= 1.0, "{scale:?}");
    // Ten classes: chance is 10 %. Two epochs of f32 reach well past 80 % on these shapes.
    let accuracy = summary.final_test_accuracy.expect("test accuracy");
    assert!(
        accuracy > 0.6,
        "f16 training learned too little: {accuracy}"
    );
    let written = fs::read_to_string(record.path.join("summary.json")).expect("summary.json");
    assert!(written.contains("\"precision\": \"f16\""), "{written}");
    assert!(written.contains("\"loss_scale\""), "{written}");
    let _ = fs::remove_dir_all(&runs);
}

#[test]
fn f16_on_the_cpu_is_refused_before_a_run_folder_exists() {
    // A runs folder that is not there yet: a refused run must not even create it.
    let scratch = scratch_dir("cpu");
    let runs = scratch.join("runs");
    let error = execute(
        &experiment(DeviceChoice::Cpu),
        &runs,
        &Arc::new(Control::new()),
        &mut |_| {},
        &mut |_| {},
    )
    .expect_err("the CPU trains in f32 only");
    assert!(
        matches!(error, RunError::Device(DeviceError::NoHalfPrecision { .. })),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("cannot train in f16"), "{message}");
    assert!(message.contains("--precision f32"), "{message}");
    assert!(!runs.exists(), "no run folder for a refused run");
}
