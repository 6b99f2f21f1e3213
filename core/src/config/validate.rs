//! The one check that turns a draft into an [`Experiment`] every later stage trusts.

use std::ops::Deref;

use super::{ConfigError, ExperimentDraft, FineTune, Precision, Setting, invalid};
use crate::data::ImageDataset;

impl ExperimentDraft {
    /// Checks every field that does not depend on the data; the first problem found is returned.
    pub fn validate(self) -> Result<Experiment, ConfigError> {
        if self.name.trim().is_empty() {
            return Err(invalid(Setting::Name, "\"\"", "give the run a name"));
        }
        if self
            .name
            .chars()
            .any(|c| std::path::is_separator(c) || c.is_control() || ":*?\"<>|".contains(c))
        {
            return Err(invalid(
                Setting::Name,
                &self.name,
                "is used in a folder name, so it may not contain / \\ : * ? \" < > |",
            ));
        }
        // Every number's range, from its row of the settings table.
        crate::settings::check_ranges(&self)?;
        self.validate_data_parallel()?;
        self.validate_selection()?;
        self.optimizer.validate()?;
        self.schedule.validate(self.lr)?;
        self.model
            .check_spec()
            .map_err(|e| invalid(e.setting(), &self.model, e.to_string()))?;
        self.validate_fine_tuning()?;
        if let Some(image_size) = self.dataset.image_size()
            && !(1..=crate::data::MAX_IMAGE_SIZE_PX).contains(&image_size)
        {
            return Err(invalid(
                Setting::FolderImageSize,
                image_size,
                format!(
                    "images are resized to 1 to {} pixels a side; 64 to 224 is usual",
                    crate::data::MAX_IMAGE_SIZE_PX
                ),
            ));
        }
        Ok(Experiment { draft: self })
    }

    fn validate_data_parallel(&self) -> Result<(), ConfigError> {
        let devices = self.devices();
        if devices.len() < 2 {
            return Ok(());
        }
        let refuse = |reason: String| {
            Err(invalid(
                Setting::Device,
                crate::device::devices_text(&devices),
                reason,
            ))
        };
        if let Some(problem) = crate::device::data_parallel_problem(&devices) {
            return refuse(problem);
        }
        if self.batch_size < devices.len() {
            return refuse(format!(
                "a batch of {} cannot be split across {} devices; use a batch of at least {}",
                self.batch_size,
                devices.len(),
                devices.len()
            ));
        }
        if self.precision != Precision::F32 {
            return refuse(
                "data-parallel runs train in f32: each device's f16 loss scale would skip steps the others took (`--precision f32`)"
                    .to_owned(),
            );
        }
        if self.fine_tune == FineTune::LinearProbe {
            return refuse(
                "a linear probe trains its head on features cached on one device, seconds per epoch; train it on one device"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// Checks the pretrained start: weights only for torchvision's architectures, and a linear
    /// probe only from weights, with nothing for augmentation to act on while it lasts.
    fn validate_fine_tuning(&self) -> Result<(), ConfigError> {
        if let Some(source) = &self.weights
            && self.model.torchvision().is_none()
        {
            return Err(invalid(
                Setting::Weights,
                source,
                format!(
                    "{} has no pretrained weights; pick a torchvision architecture ({}) to start from a weights file",
                    self.model.title(),
                    crate::model::TorchvisionArch::kiln_names()
                ),
            ));
        }
        if self.fine_tune != FineTune::LinearProbe {
            return Ok(());
        }
        if self.weights.is_none() {
            return Err(invalid(
                Setting::FineTune,
                self.fine_tune,
                "a linear probe trains a head on pretrained features; start from ImageNet weights or a file, or train the whole network",
            ));
        }
        if self.unfreeze_after >= self.epochs {
            return Err(invalid(
                Setting::UnfreezeAfter,
                self.unfreeze_after,
                format!(
                    "the run has {} epochs, so the backbone would never unfreeze; use fewer, or 0 to keep it frozen",
                    self.epochs
                ),
            ));
        }
        if self.unfreeze_after == 0 && self.augments() {
            return Err(invalid(
                Setting::FineTune,
                self.fine_tune,
                "a linear probe computes each image's features once, so augmentation has nothing to act on; turn it off, or unfreeze after some epochs",
            ));
        }
        Ok(())
    }

    /// Checks that early stopping has a figure to watch (the ranges are the rows').
    fn validate_selection(&self) -> Result<(), ConfigError> {
        if self.early_stop > 0 && !self.evaluates_epochs() {
            return Err(invalid(
                Setting::EarlyStop,
                self.early_stop,
                "early stopping watches the validation split, and val_split is 0; set val_split above 0 or early_stop to 0",
            ));
        }
        Ok(())
    }
}

/// A checked experiment: every value is usable. Reads like the draft it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    draft: ExperimentDraft,
}

impl Deref for Experiment {
    type Target = ExperimentDraft;

    fn deref(&self) -> &ExperimentDraft {
        &self.draft
    }
}

impl Experiment {
    /// The draft this was checked from, e.g. to write `config.toml` or to edit and re-check.
    pub fn draft(&self) -> &ExperimentDraft {
        &self.draft
    }

    /// Checks what needs the loaded data: batch size against the split, model against the image.
    pub fn check_against(&self, data: &ImageDataset) -> Result<(), ConfigError> {
        if data.train.is_empty() {
            return Err(invalid(
                Setting::Dataset,
                &self.dataset,
                "the training split has no image",
            ));
        }
        if self.monitor == crate::selection::Monitor::ValMap && !data.is_multi_label() {
            return Err(invalid(
                Setting::Monitor,
                self.monitor,
                "watches the mean average precision over labels, which needs a data set of several labels per image; watch val-loss or val-accuracy",
            ));
        }
        if data.is_multi_label() && !self.data_parallel.is_empty() {
            return Err(invalid(
                Setting::Dataset,
                &self.dataset,
                "its images have several labels each (a multi-label set), which Kiln trains on one device so far; give one device",
            ));
        }
        if self.batch_size > data.train.len() {
            return Err(invalid(
                Setting::BatchSize,
                self.batch_size,
                format!(
                    "is larger than the {} training images of {}",
                    data.train.len(),
                    data.name
                ),
            ));
        }
        self.model
            .validate(data.shape, data.num_classes())
            .map_err(|e| invalid(e.setting(), &self.model, e.to_string()))
    }

    /// Optimizer steps in one epoch; the last batch of an epoch may be short, never dropped.
    pub fn steps_per_epoch(&self, train_len: usize) -> usize {
        train_len.div_ceil(self.batch_size)
    }
}
