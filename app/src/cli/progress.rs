//! What `kiln train` prints: a live bar on a terminal, plain lines in a pipe or a log.

use std::cell::{Cell, RefCell};
use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kiln_core::config::Experiment;
use kiln_core::results::multi_label::LabelReport;
use kiln_core::results::{ClassMetrics, ClassReport};
use kiln_core::selection::ValidatedOn;
use kiln_core::train::{RunOutcome, TrainEvent};

/// Turns engine events into terminal output.
pub struct Reporter {
    bar: Option<ProgressBar>,
    dataset: String,
    model: String,
    /// Set once stdout is gone (`kiln train | head`): printing stops, training does not.
    stdout_closed: Cell<bool>,
    /// What each epoch is evaluated on, as the run's start said.
    validated_on: Cell<ValidatedOn>,
    /// The class names, as the test predictions gave them, for the validation report.
    class_names: RefCell<Vec<String>>,
}

/// A bar drawn on stderr in indicatif's `template`, of `len` steps (set later when `None`);
/// none where stderr is not a terminal (a pipe, a log), whose readers want plain lines.
pub fn terminal_bar(template: &str, len: Option<u64>) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar
    })
}

impl Reporter {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn new(experiment: &Experiment) -> Self {
        let bar = terminal_bar(
            "{prefix} [{bar:30}] {pos}/{len} steps  {msg}  ETA {eta}",
            None,
        );
        Self {
            bar,
            dataset: experiment.dataset.to_string(),
            model: experiment.model.to_string(),
            stdout_closed: Cell::new(false),
            validated_on: Cell::new(ValidatedOn::Validation),
            class_names: RefCell::new(Vec::new()),
        }
    }

    /// Prints a line above the bar (or plainly).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if self.stdout_closed.get() => {}
            None => {
                // `println!` panics on a closed pipe, which would end a good run as failed.
                if writeln!(std::io::stdout().lock(), "{text}").is_err() {
                    self.stdout_closed.set(true);
                }
            }
        }
    }

    /// Renders one engine event.
    pub fn event(&self, event: &TrainEvent) {
        match event {
            TrainEvent::Started(s) => {
                self.validated_on.set(s.validated_on);
                if let Some(bar) = &self.bar {
                    bar.set_length((s.steps_per_epoch * s.epochs) as u64);
                    bar.set_prefix("epoch 1");
                }
                self.line(&format!(
                    "training {} on {} on {} ({}): {} parameters, {} steps per epoch, data uploaded in {:.2} s",
                    self.model,
                    self.dataset,
                    s.device_name,
                    s.device_id,
                    s.parameter_count,
                    s.steps_per_epoch,
                    s.upload_secs
                ));
                if let Some(loaded) = &s.pretrained {
                    self.line(&loaded.to_string());
                }
                if let Some(secs) = s.features_secs {
                    self.line(&format!(
                        "linear probe: the frozen backbone's features of every image computed once in {secs:.2} s; epochs train the head alone"
                    ));
                }
            }
            TrainEvent::Progress(p) => {
                if let Some(bar) = &self.bar {
                    bar.set_position(p.global_step as u64);
                    bar.set_prefix(format!("epoch {}", p.epoch));
                    bar.set_message(format!(
                        "loss {:.4}  acc {:.2} %  {:.0} samples/s  {:.2} ms/step",
                        p.train_loss,
                        p.train_accuracy * 100.0,
                        p.samples_per_sec,
                        p.step_ms
                    ));
                }
            }
            TrainEvent::EpochEnd(e) => {
                let evaluation = match e.held_out() {
                    Some((loss, accuracy)) => format!(
                        "{} loss {loss:.4} acc {:6.2} %",
                        self.validated_on.get().split_name(),
                        accuracy * 100.0
                    ),
                    None => "not evaluated".to_owned(),
                };
                self.line(&format!(
                    "epoch {:>3}  train loss {:.4} acc {:6.2} %  {evaluation}  {:.2} s ({:.0} samples/s) + eval {:.2} s",
                    e.epoch,
                    // A live run's epoch knows every figure; only imported runs lack some.
                    e.train_loss.unwrap_or(f64::NAN),
                    e.train_accuracy.unwrap_or(f64::NAN) * 100.0,
                    e.epoch_secs.unwrap_or(f64::NAN),
                    e.samples_per_sec.unwrap_or(f64::NAN),
                    e.eval_secs.unwrap_or(f64::NAN)
                ));
            }
            TrainEvent::Tested(t) => self.line(&format!(
                "test, once, on epoch {}'s weights: loss {:.4} acc {:.2} %",
                t.epoch,
                t.loss,
                t.accuracy * 100.0
            )),
            TrainEvent::Warning(w) => self.line(&format!("warning: {w}")),
            TrainEvent::Predictions(p) => {
                self.line(&report_table("test report", &p.class_names, &p.report()));
                *self.class_names.borrow_mut() = p.class_names.clone();
            }
            TrainEvent::LabelPredictions(p) => {
                self.line(&label_report_table(
                    "test report, per label",
                    &p.label_names,
                    &p.report(),
                ));
            }
            TrainEvent::Finished(s) => {
                let outcome = match s.outcome {
                    RunOutcome::Completed => "done",
                    RunOutcome::Cancelled => "cancelled",
                    RunOutcome::Diverged => "diverged",
                    RunOutcome::Failed => "failed",
                };
                let mut accuracy = s
                    .final_test_accuracy
                    .map_or_else(|| "-".to_owned(), |a| format!("{:.2} %", a * 100.0));
                if let Some(report) = &s.label_report {
                    // Several labels per image: the accuracy is of label decisions.
                    accuracy = format!(
                        "mAP {:.4}, label accuracy {accuracy}",
                        report.mean_average_precision
                    );
                }
                let steady = s.steady_rate().map_or_else(
                    || "no window after warm-up".to_owned(),
                    |r| format!("{r:.0} samples/s"),
                );
                if let Some(stop) = &s.stopped_early {
                    self.line(&format!("{stop}"));
                }
                if let Some(report) = &s.val_report {
                    self.line(&report_table(
                        "validation report, on the kept weights",
                        &self.class_names.borrow(),
                        report,
                    ));
                }
                let chosen = match s.best_epoch {
                    Some(best) => format!(", best epoch {best} on {}", s.validated_on.split_name()),
                    None => String::new(),
                };
                self.line(&format!(
                    "{outcome}: {} epochs{chosen}, test accuracy {accuracy} ({}), warm-up {:.2} s, steady {steady}, {} per epoch, {:.1} s in all",
                    s.epochs_completed,
                    s.validated_on.label(),
                    s.warmup_secs,
                    seconds(s.mean_epoch_train_secs),
                    s.total_secs
                ));
                if let Some(cpu) = &s.cpu_threads {
                    let engine = cpu.engine.as_deref().unwrap_or("flex");
                    self.line(&format!("CPU: {} thread(s), {engine}", cpu.threads));
                }
                if let Some(scale) = &s.loss_scale {
                    self.line(&format!(
                        "f16: final loss scale {}, {} steps overflowed and applied no gradient",
                        scale.final_scale, scale.overflowed_steps
                    ));
                }
                if let Some(p) = &s.profile {
                    self.line(&format!(
                        "{}:\n  data {:.3} ms, forward {:.3} ms, backward {:.3} ms, optimizer {:.3} ms, host sync {:.3} ms",
                        p.mode, p.data_ms, p.forward_ms, p.backward_ms, p.optimizer_ms, p.host_sync_ms
                    ));
                }
            }
            // The error itself is printed once, by main.
            TrainEvent::Failed(_) => {}
        }
    }

    /// Removes the bar so the final lines stand alone.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// A split's classification report under `title`, laid out as scikit-learn prints it; a
/// class without a name is named by its label.
fn report_table(title: &str, class_names: &[String], report: &ClassReport) -> String {
    let names: Vec<String> = (0..report.classes.len())
        .map(|c| class_names.get(c).cloned().unwrap_or_else(|| c.to_string()))
        .collect();
    let width = name_width(&names);
    let mut text = format!(
        "{title}:\n  {:>width$}  precision  recall  f1-score  support",
        ""
    );
    let mut row = |name: &str, m: &ClassMetrics| {
        text.push_str(&format!(
            "\n  {name:>width$}  {:>9.4}  {:>6.4}  {:>8.4}  {:>7}",
            m.precision, m.recall, m.f1, m.support
        ));
    };
    for (name, metrics) in names.iter().zip(&report.classes) {
        row(name, metrics);
    }
    row("macro avg", &report.macro_average);
    row("weighted avg", &report.weighted_average);
    text.push_str(&format!(
        "\n  {:>width$}  accuracy {:.4}",
        "", report.accuracy
    ));
    if let Some(top_5) = report.top_5_accuracy {
        text.push_str(&format!(", top-5 accuracy {top_5:.4}"));
    }
    text
}

/// A multi-label run's report under `title`: per label its precision, recall and F1 at its
/// threshold, support, average precision and threshold; then the averages and whole-set figures.
fn label_report_table(title: &str, label_names: &[String], report: &LabelReport) -> String {
    let width = name_width(label_names);
    let mut text = format!(
        "{title}:\n  {:>width$}  precision  recall  f1-score  support  avg prec  threshold",
        ""
    );
    let mut row = |name: &str, m: &ClassMetrics, ap: Option<f64>, threshold: Option<f32>| {
        let ap = ap.map_or_else(|| "-".to_owned(), |ap| format!("{ap:.4}"));
        let threshold = threshold.map_or_else(String::new, |t| format!("{t:.4}"));
        text.push_str(&format!(
            "\n  {name:>width$}  {:>9.4}  {:>6.4}  {:>8.4}  {:>7}  {ap:>8}  {threshold:>9}",
            m.precision, m.recall, m.f1, m.support
        ));
    };
    for (name, label) in label_names.iter().zip(&report.per_label) {
        row(
            name,
            &label.at_threshold,
            label.average_precision,
            Some(label.threshold),
        );
    }
    row("micro avg", &report.micro_avg, None, None);
    row(
        "macro avg",
        &report.macro_avg,
        Some(report.mean_average_precision),
        None,
    );
    row("weighted avg", &report.weighted_avg, None, None);
    text.push_str(&format!(
        "\n  {:>width$}  mAP {:.4}, subset accuracy {:.4}, Hamming loss {:.4}",
        "", report.mean_average_precision, report.subset_accuracy, report.hamming_loss
    ));
    text
}

/// The width of a report's name column: its longest name, and room for "weighted avg".
fn name_width(names: &[String]) -> usize {
    names
        .iter()
        .map(|n| n.chars().count())
        .chain([12])
        .max()
        .unwrap_or(12)
}

/// Seconds as a person reads them: milliseconds below a tenth of a second (a linear probe's
/// epochs), else seconds with two decimals.
fn seconds(secs: f64) -> String {
    if secs < 0.1 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}
