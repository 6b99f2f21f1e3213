//! The status line at the bottom of the window.

use super::*;

/// The status line: what the run is doing, how fast, and how long it has left.
pub fn status_ui(ui: &mut egui::Ui, session: Option<&Session>) {
    let Some(session) = session else {
        ui.label("Idle.");
        return;
    };
    let mut parts: Vec<String> = Vec::new();
    parts.push(match &session.state {
        SessionState::Preparing(what) => what.clone(),
        SessionState::Running => running_activity(
            session.last_progress.as_ref().map(|p| (p.epoch, p.step)),
            session.start.as_ref().map(|s| s.steps_per_epoch),
            session.history.epochs.len(),
            session.epochs,
            session.history.validated_on().split_name(),
        ),
        SessionState::Paused => "paused".to_owned(),
        SessionState::Cancelling => "cancelling…".to_owned(),
        SessionState::Finished(outcome) => format!("finished ({outcome:?})").to_lowercase(),
        SessionState::Failed(_) => "failed".to_owned(),
    });
    if let Some(summary) = &session.history.summary {
        if let Some(stop) = &summary.stopped_early {
            parts.push(stop.to_string());
        }
        if let Some(pruned) = &summary.pruned {
            parts.push(pruned.to_string());
        }
        if let (Some(accuracy), Some(epoch)) = (summary.final_test_accuracy, summary.kept_epoch) {
            parts.push(format!(
                "test {:.2} % on epoch {epoch}'s weights ({})",
                accuracy * 100.0,
                summary.validated_on.label()
            ));
        }
    }
    if let Some(progress) = &session.last_progress {
        parts.push(format!("epoch {}/{}", progress.epoch, session.epochs));
        if let Some(start) = &session.start {
            parts.push(format!("step {}/{}", progress.step, start.steps_per_epoch));
        }
        parts.push(format!("{:.0} samples/s", progress.samples_per_sec));
        parts.push(format!("{:.2} ms/step", progress.step_ms));
    }
    if session.state.is_active()
        && let Some(eta) = session.eta_secs()
    {
        parts.push(format!("ETA {}", duration_text(eta)));
    }
    if let Some(warmup) = session.warmup_secs {
        parts.push(format!("warm-up {warmup:.2} s"));
    }
    if let Some(start) = &session.start {
        parts.push(format!("{} ({})", start.device_name, start.device_id));
    }
    // f32 goes unsaid, as in the runs list.
    if session
        .history
        .config
        .as_ref()
        .is_some_and(|config| config.precision == kiln_core::config::Precision::F16)
    {
        parts.push("f16".to_owned());
    }
    parts.push(format!("elapsed {}", duration_text(session.elapsed_secs())));
    ui.label(parts.join(" · "));
}

/// What a running loop is doing, told from the rows it has sent: no event comes between an
/// epoch's last step and its evaluation, or between the last epoch and the test split, and on a
/// software GPU either takes minutes that "ETA 0 s" would leave unexplained.
fn running_activity(
    progress: Option<(usize, usize)>,
    steps_per_epoch: Option<usize>,
    epochs_evaluated: usize,
    epochs: usize,
    split: &str,
) -> String {
    let ended_epoch = match (progress, steps_per_epoch) {
        (Some((epoch, step)), Some(steps)) if step >= steps => Some(epoch),
        _ => None,
    };
    match ended_epoch {
        Some(epoch) if epochs_evaluated < epoch => {
            format!("evaluating epoch {epoch} on the {split} split")
        }
        Some(epoch) if epoch >= epochs => "testing the kept weights".to_owned(),
        _ => "training".to_owned(),
    }
}

pub(super) fn duration_text(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::running_activity;

    #[test]
    fn the_status_says_evaluating_after_an_epochs_last_step_and_testing_after_the_last_epoch() {
        let activity =
            |progress, evaluated| running_activity(progress, Some(10), evaluated, 3, "validation");
        assert_eq!(activity(None, 0), "training");
        assert_eq!(activity(Some((1, 4)), 0), "training");
        assert_eq!(
            activity(Some((1, 10)), 0),
            "evaluating epoch 1 on the validation split"
        );
        // Epoch 1 evaluated, epoch 2's first readback not in yet.
        assert_eq!(activity(Some((1, 10)), 1), "training");
        assert_eq!(
            activity(Some((3, 10)), 2),
            "evaluating epoch 3 on the validation split"
        );
        assert_eq!(activity(Some((3, 10)), 3), "testing the kept weights");
        // Before the start notice the steps of an epoch are unknown.
        assert_eq!(
            running_activity(Some((1, 10)), None, 0, 3, "test"),
            "training"
        );
    }
}
