//! Evaluating a run's model: each epoch on the split it is judged on, and at the end, when the
//! run tests the weights it keeps once, saves them and sums itself up.

use super::*;
use crate::config::Threshold;
use crate::results::multi_label::{
    LabelPredictions, LabelScores, mean_average_precision, thresholds,
};
use crate::selection::Monitor;

impl RunState<'_> {
    /// Evaluates `model` on the split each epoch is judged on; none when there is none.
    pub(in crate::train) async fn evaluate(
        &self,
        model: &Classifier,
    ) -> Result<Option<Evaluation>, TrainError> {
        let (split, truth) = match self.validated_on {
            ValidatedOn::Validation => (&self.pipeline.val, &self.data.val),
            ValidatedOn::Test => (&self.pipeline.test, &self.data.test),
            ValidatedOn::Nothing => return Ok(None),
        };
        let mut evaluation = self.evaluate_on(model, split).await?;
        if self.experiment.monitor == Monitor::ValMap && self.data.is_multi_label() {
            let started = Instant::now();
            let predicted = self.predict(model, split).await?;
            let scores = LabelScores {
                labels: self.data.num_classes(),
                probabilities: predicted.label_probabilities,
                truth: truth.label_sets.clone(),
            };
            evaluation.map = Some(mean_average_precision(&scores));
            evaluation.secs += started.elapsed().as_secs_f64();
        }
        Ok(Some(evaluation))
    }

    /// Evaluates `model` on `split`, unaugmented.
    pub(super) async fn evaluate_on(
        &self,
        model: &Classifier,
        split: &BatchSource,
    ) -> Result<Evaluation, TrainError> {
        let started = Instant::now();
        let (loss_input, device) = (self.experiment.loss, &self.target.device);
        let reader = self.eval_split(split);
        let mut totals = DeviceTotals::zeros(device);
        self.each_eval_span(split.len(), |span| {
            reader.add_totals(&mut totals, model, span, loss_input, device)
        })
        .await?;
        let (loss, accuracy) = totals.means(split.len()).await?;
        Ok(Evaluation {
            loss,
            accuracy,
            map: None,
            secs: started.elapsed().as_secs_f64(),
        })
    }

    /// The run's summary; a completed run also tests the weights it keeps, once, and hands out
    /// every test prediction and the saved model.
    pub(in crate::train) async fn finish(
        mut self,
        model: Classifier,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> Result<RunSummary, TrainError> {
        if self.outcome == RunOutcome::Completed && !self.pipeline.test.is_empty() {
            // A probe's head goes onto its backbone: the run tests and keeps the whole network.
            let probe = self.probe.take();
            if probe.is_some() {
                self.pipeline.unfreeze();
            }
            let (kept, epoch) = self.kept_model(model, on_event);
            let kept = match &probe {
                Some(probe) => probe.assemble(&kept),
                None => kept,
            };
            let tested = self.evaluate_on(&kept, &self.pipeline.test).await?;
            let tested = TestResult {
                epoch,
                loss: tested.loss,
                accuracy: tested.accuracy,
            };
            on_event(TrainEvent::Tested(tested.clone()));
            self.tested = Some(tested);
            let mut thresholds = None;
            if self.data.is_multi_label() {
                let predictions = self.label_predictions(&kept).await?;
                self.label_report = Some(predictions.report());
                thresholds = Some(predictions.thresholds.clone());
                on_event(TrainEvent::LabelPredictions(Box::new(predictions)));
            } else {
                let predictions = self.predictions(&kept).await?;
                self.reports = (Some(predictions.report()), self.val_report(&kept).await?);
                on_event(TrainEvent::Predictions(predictions));
            }
            let card = ModelCard {
                shape: self.data.shape.chw(),
                class_names: self.data.class_names.clone(),
                offset: self.transform.offset.clone(),
                scale: self.transform.scale.clone(),
                thresholds,
            };
            // A model that cannot be written costs the person the model, not the run.
            if let Err(reason) = self.save_model(&kept, &card).await {
                on_event(TrainEvent::Warning(TrainWarning::ModelNotSaved { reason }));
            }
        }
        let summary = self.summary();
        on_event(TrainEvent::Finished(Box::new(summary.clone())));
        Ok(summary)
    }

    /// Hands the kept model to the store; a page first brings its weights to the CPU without
    /// blocking, since the store's reads would block.
    pub(super) async fn save_model(
        &mut self,
        kept: &Classifier,
        card: &ModelCard,
    ) -> Result<(), String> {
        #[cfg(target_arch = "wasm32")]
        let kept = &crate::train::device_reads::on_cpu_async(kept.clone()).await?;
        self.store.save_model(kept, card)
    }

    /// The weights the run keeps and their (1-based) epoch: the last, or the best one, held in
    /// memory or, when it came before a resume, read back from the store.
    pub(super) fn kept_model(
        &mut self,
        last: Classifier,
        on_event: &mut dyn FnMut(TrainEvent),
    ) -> (Classifier, usize) {
        let last_epoch = self.counters.epochs_completed;
        let best_epoch = self.counters.selection.best_epoch;
        if self.experiment.keep == Keep::Last || best_epoch == 0 || best_epoch == last_epoch {
            return (last, last_epoch);
        }
        if let Some(best) = self.best_model.take() {
            return (best, best_epoch);
        }
        match self.store.restore_best(last.clone()) {
            Ok(Some(best)) => (best, best_epoch),
            Ok(None) => (last, last_epoch),
            Err(reason) => {
                on_event(TrainEvent::Warning(TrainWarning::BestNotKept { reason }));
                (last, last_epoch)
            }
        }
    }

    pub(super) fn summary(&self) -> RunSummary {
        let counters = &self.counters;
        let evaluated = counters.epochs_completed > 0;
        let after_an_epoch = |value: f64| evaluated.then_some(value);
        let evaluated_on =
            |on: ValidatedOn, value: f64| (evaluated && self.validated_on == on).then_some(value);
        let on_test = |value| evaluated_on(ValidatedOn::Test, value);
        let on_val = |value| evaluated_on(ValidatedOn::Validation, value);
        let tested = self.tested.as_ref();
        RunSummary {
            outcome: self.outcome,
            epochs_completed: counters.epochs_completed,
            steps: counters.steps,
            samples_seen: counters.samples_seen,
            final_test_accuracy: tested
                .map(|t| t.accuracy)
                .or(on_test(counters.eval_accuracy)),
            final_test_loss: tested.map(|t| t.loss).or(on_test(counters.eval_loss)),
            best_test_accuracy: on_test(counters.best_eval_accuracy),
            validated_on: self.validated_on,
            split_sizes: Some(SplitSizes {
                train: self.pipeline.train.len(),
                val: self.val_len(),
                test: self.pipeline.test.len(),
            }),
            final_val_accuracy: on_val(counters.eval_accuracy),
            final_val_loss: on_val(counters.eval_loss),
            best_val_accuracy: on_val(counters.best_eval_accuracy),
            best_epoch: (self.validated_on != ValidatedOn::Nothing
                && counters.selection.best_epoch > 0)
                .then_some(counters.selection.best_epoch),
            kept_epoch: tested.map(|t| t.epoch),
            stopped_early: self.stopped_early.clone(),
            pruned: self.pruned.clone(),
            skipped_files: self.data.skipped.clone(),
            test_report: self.reports.0.clone(),
            val_report: self.reports.1.clone(),
            label_report: self.label_report.clone(),
            final_train_accuracy: after_an_epoch(counters.train_accuracy),
            final_train_loss: after_an_epoch(counters.train_loss),
            warmup_secs: counters.warmup_secs,
            steady_samples_per_sec: self.speed.steady_rate(counters),
            mean_epoch_train_secs: counters.train_secs_total
                / counters.epochs_completed.max(1) as f64,
            total_secs: self.wall_secs(),
            profile: step_profile(&self.profile),
            precision: self.experiment.precision,
            cpu_threads: self.stepper.threads.choice().cloned(),
            loss_scale: self.precision.report(),
            ..RunSummary::new(
                &self.target.name,
                self.parameter_count,
                self.load_secs,
                self.upload_secs,
            )
        }
    }

    /// The classification report of `model` on the validation split, for a run that has one.
    pub(super) async fn val_report(
        &self,
        model: &Classifier,
    ) -> Result<Option<ClassReport>, TrainError> {
        if self.validated_on != ValidatedOn::Validation {
            return Ok(None);
        }
        let predicted = self.predict(model, &self.pipeline.val).await?;
        let predictions = TestPredictions {
            class_names: self.data.class_names.clone(),
            labels: self.data.val.labels.clone(),
            predicted: predicted.classes,
            confidence: predicted.confidence,
            label_rank: predicted.label_rank,
            gallery: Vec::new(),
        };
        Ok(Some(predictions.report()))
    }

    /// Every test image's probability per label by `model`, with the thresholds the run's
    /// setting asks for, chosen on the validation images where it chooses them.
    pub(super) async fn label_predictions(
        &self,
        model: &Classifier,
    ) -> Result<LabelPredictions, TrainError> {
        let labels = self.data.num_classes();
        let scores = |predicted: Predicted, split: &crate::data::Split| LabelScores {
            labels,
            probabilities: predicted.label_probabilities,
            truth: split.label_sets.clone(),
        };
        let validation = match self.validated_on {
            ValidatedOn::Validation if self.experiment.threshold != Threshold::Half => {
                let predicted = self.predict(model, &self.pipeline.val).await?;
                Some(scores(predicted, &self.data.val))
            }
            _ => None,
        };
        let test = self.predict(model, &self.pipeline.test).await?;
        Ok(LabelPredictions {
            label_names: self.data.class_names.clone(),
            scores: scores(test, &self.data.test),
            thresholds: thresholds(self.experiment.threshold, labels, validation.as_ref()),
            files: self.data.test.files.clone(),
        })
    }

    /// `split` read unaugmented in evaluation batches.
    pub(super) fn eval_split<'s>(&'s self, split: &'s BatchSource) -> EvalSplit<'s> {
        EvalSplit {
            split,
            options: &self.pipeline.plain,
            batch_size: self.eval_batch,
        }
    }

    /// What `model` says about every image of `split`, read back once; in a page, a few
    /// batches between the page's turns.
    pub(super) async fn predict(
        &self,
        model: &Classifier,
        split: &BatchSource,
    ) -> Result<Predicted, TrainError> {
        let reader = self.eval_split(split);
        let mut predicted = PredictionTensors::default();
        self.each_eval_span(split.len(), |span| {
            reader.add_predictions(&mut predicted, model, span)
        })
        .await?;
        predicted.read().await
    }

    /// Runs `work` on each evaluation span of a split of `len` images on the CPU's threads
    /// (where the device is the CPU), giving a page its turn between spans.
    pub(super) async fn each_eval_span(
        &self,
        len: usize,
        mut work: impl FnMut(Range<usize>) -> Result<(), TrainError> + Send,
    ) -> Result<(), TrainError> {
        #[cfg(target_arch = "wasm32")]
        let mut turns = crate::executor::PageTurns::default();
        for span in eval_spans(len, self.eval_batch) {
            #[cfg(target_arch = "wasm32")]
            turns.give_if_due().await;
            self.stepper.threads.run(|| work(span))?;
        }
        Ok(())
    }

    /// Every test image's prediction by `model`, with the surest wrong ones' pixels for a
    /// gallery.
    pub(super) async fn predictions(
        &self,
        model: &Classifier,
    ) -> Result<TestPredictions, TrainError> {
        let predicted = self.predict(model, &self.pipeline.test).await?;
        let test = &self.data.test;
        let mut predictions = TestPredictions {
            class_names: self.data.class_names.clone(),
            labels: test.labels.clone(),
            predicted: predicted.classes,
            confidence: predicted.confidence,
            label_rank: predicted.label_rank,
            gallery: Vec::new(),
        };
        let values = self.data.shape.pixels_per_image();
        predictions.gallery = predictions
            .confidently_wrong(GALLERY_SIZE)
            .into_iter()
            .map(|index| GalleryImage {
                index,
                shape: self.data.shape.chw(),
                pixels: test.image(index, values).to_vec(),
            })
            .collect();
        Ok(predictions)
    }
}
