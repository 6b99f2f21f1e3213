//! The setup panel: every setting the engine takes, typed as text where people type numbers, so
//! a bad value is marked where it was typed instead of being silently clamped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln_core::config::{
    self, ClassWeights, ConfigError, Experiment, ExperimentDraft, FineTune, InputScaling, Keep,
    LossInput, Monitor, OptimizerSpec, Precision, Schedule, Setting, Validation,
};
use kiln_core::data::{DEFAULT_FOLDER_IMAGE_SIZE_PX, DatasetSpec};
use kiln_core::device::{CUDA_BACKEND, DeviceChoice, DeviceClass, DeviceInfo};
use kiln_core::model::{Activation, InitScheme, ModelSpec, TorchvisionArch};
use kiln_core::settings::{ChoiceSetting, NUMBERS, NumberSetting, TypedNumber, show_number};
use kiln_core::weights::WeightsSource;
use kiln_core::weights::fetch::ImageNetWeights;
use serde::{Deserialize, Serialize};

use super::fetch::Download;

/// Which data set the form points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DatasetKind {
    /// The generated data set that needs no files.
    Synthetic,
    /// MNIST digits.
    Mnist,
    /// Fashion-MNIST clothing.
    FashionMnist,
    /// CIFAR-10.
    Cifar10,
    /// A folder of class sub-folders.
    Folder,
}

impl DatasetKind {
    const ALL: [Self; 5] = [
        Self::Synthetic,
        Self::Mnist,
        Self::FashionMnist,
        Self::Cifar10,
        Self::Folder,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Synthetic => "Built-in (synthetic, no download)",
            Self::Mnist => "MNIST",
            Self::FashionMnist => "Fashion-MNIST",
            Self::Cifar10 => "CIFAR-10",
            Self::Folder => "Image folder…",
        }
    }

    /// The downloadable data set behind this choice, if any.
    pub fn remote(self) -> Option<kiln_core::data::fetch::RemoteDataset> {
        use kiln_core::data::fetch::RemoteDataset;
        match self {
            Self::Mnist => Some(RemoteDataset::Mnist),
            Self::FashionMnist => Some(RemoteDataset::FashionMnist),
            Self::Cifar10 => Some(RemoteDataset::Cifar10),
            Self::Synthetic | Self::Folder => None,
        }
    }
}

/// Which architecture the form builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModelKind {
    /// Fully connected layers.
    Mlp,
    /// The small convolutional network.
    Cnn,
    /// VGG16, optionally with batch norm and a resized input.
    Vgg16,
    /// ResNet-18 in its CIFAR form.
    ResNet18,
    /// torchvision's ResNet-18, for ImageNet weights.
    ResNet18ImageNet,
    /// torchvision's ResNet-34.
    ResNet34,
    /// torchvision's ResNet-50.
    ResNet50,
    /// torchvision's MobileNetV2.
    MobileNetV2,
}

impl ModelKind {
    const ALL: [Self; 8] = [
        Self::Mlp,
        Self::Cnn,
        Self::Vgg16,
        Self::ResNet18,
        Self::ResNet18ImageNet,
        Self::ResNet34,
        Self::ResNet50,
        Self::MobileNetV2,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Mlp => "MLP",
            Self::Cnn => "Small CNN",
            Self::Vgg16 => "VGG16",
            Self::ResNet18 => "ResNet-18 (CIFAR)",
            Self::ResNet18ImageNet => "ResNet-18 (ImageNet)",
            Self::ResNet34 => "ResNet-34",
            Self::ResNet50 => "ResNet-50",
            Self::MobileNetV2 => "MobileNetV2",
        }
    }

    /// The spec of an architecture that has no parts to set in the form.
    fn plain_spec(self) -> Option<ModelSpec> {
        match self {
            Self::Mlp | Self::Vgg16 => None,
            Self::Cnn => Some(ModelSpec::Cnn),
            Self::ResNet18 => Some(ModelSpec::ResNet18),
            Self::ResNet18ImageNet => Some(ModelSpec::ResNet18ImageNet),
            Self::ResNet34 => Some(ModelSpec::ResNet34),
            Self::ResNet50 => Some(ModelSpec::ResNet50),
            Self::MobileNetV2 => Some(ModelSpec::MobileNetV2),
        }
    }
}

/// Where the weights of a torchvision architecture start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum StartFrom {
    /// Random weights, drawn by the init scheme.
    #[default]
    Scratch,
    /// torchvision's ImageNet weights, downloaded once.
    ImageNet,
    /// A .pth or .safetensors file.
    File,
}

impl StartFrom {
    const ALL: [Self; 3] = [Self::Scratch, Self::ImageNet, Self::File];

    fn label(self) -> &'static str {
        match self {
            Self::Scratch => "scratch (random weights)",
            Self::ImageNet => "ImageNet weights",
            Self::File => "a file…",
        }
    }
}

/// Which optimizer the form builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OptimizerKind {
    /// SGD with optional momentum.
    Sgd,
    /// Adam.
    Adam,
    /// AdamW.
    AdamW,
}

/// Which learning-rate schedule the form builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScheduleKind {
    /// One rate throughout.
    Constant,
    /// Drops by a factor every few epochs.
    Step,
    /// Cosine decay to a floor.
    Cosine,
}

/// Everything a person can set before pressing Start; persisted between launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetupForm {
    /// The text of every setting that is one number of the draft (`settings::NUMBERS`), as
    /// typed; the window never checks their ranges, the engine's `validate` does.
    pub numbers: BTreeMap<Setting, String>,
    /// Run name.
    pub name: String,
    /// Data set choice.
    pub dataset: DatasetKind,
    /// Folder holding MNIST / Fashion-MNIST / CIFAR-10 files; none means the usual search path.
    pub data_dir: Option<PathBuf>,
    /// The image folder, for [`DatasetKind::Folder`].
    pub folder: Option<PathBuf>,
    /// Side in pixels that folder images are resized to.
    pub folder_image_size: String,
    /// Architecture choice.
    pub model: ModelKind,
    /// MLP hidden widths, comma separated.
    pub mlp_widths: String,
    /// MLP activation.
    pub activation: Activation,
    /// MLP dropout probability.
    pub dropout: String,
    /// VGG batch norm.
    pub vgg_batch_norm: bool,
    /// VGG input side in pixels; empty keeps the data set's size.
    pub vgg_input_size: String,
    /// Where a torchvision architecture's weights start.
    pub start_from: StartFrom,
    /// The file [`StartFrom::File`] loads.
    pub weights_file: Option<PathBuf>,
    /// Weight init.
    pub init: InitScheme,
    /// Pixel scaling.
    pub input_scaling: InputScaling,
    /// Whether the loss is taken on logits or clipped probabilities.
    pub loss: LossInput,
    /// Optimizer choice.
    pub optimizer: OptimizerKind,
    /// SGD momentum.
    pub momentum: String,
    /// SGD Nesterov.
    pub nesterov: bool,
    /// Weight decay.
    pub weight_decay: String,
    /// Adam beta 1.
    pub beta_1: String,
    /// Adam beta 2.
    pub beta_2: String,
    /// Adam epsilon.
    pub epsilon: String,
    /// Schedule choice.
    pub schedule: ScheduleKind,
    /// Step schedule period in epochs.
    pub step_every_epochs: String,
    /// Step schedule factor.
    pub step_gamma: String,
    /// Cosine floor.
    pub cosine_min_lr: String,
    /// `auto`, `cpu` or `gpu:N`.
    pub device: String,
    /// Kept from a loaded preset or run so nothing the form does not show is lost.
    pub readback_interval_ms: u64,
    /// Whether a NaN or infinite loss ends the run.
    pub stop_on_non_finite_loss: bool,
    /// Random horizontal flips of training images.
    pub flip: bool,
    /// f32, or f16 mixed precision.
    pub precision: Precision,
    /// A validation split, or the test split (parity presets).
    pub validation: Validation,
    /// The figure that picks the best epoch.
    pub monitor: Monitor,
    /// Which epoch's weights the run keeps.
    pub keep: Keep,
    /// How each class weighs in the training loss.
    pub class_weights: ClassWeights,
    /// What of a pretrained network trains.
    pub fine_tune: FineTune,
}

impl Default for SetupForm {
    fn default() -> Self {
        Self::from_draft(&ExperimentDraft::default())
    }
}

impl SetupForm {
    /// The form with `text` typed into the field of the number `setting`.
    pub fn with_number(mut self, setting: Setting, text: &str) -> Self {
        *self.number_mut(setting) = text.to_owned();
        self
    }

    /// The text of the number `setting`'s field, to type into.
    pub fn number_mut(&mut self, setting: Setting) -> &mut String {
        number_text(&mut self.numbers, setting)
    }

    /// The form showing `draft`, e.g. a preset or a past run's config.
    pub fn from_draft(draft: &ExperimentDraft) -> Self {
        let (dataset, folder, folder_image_size) = match &draft.dataset {
            DatasetSpec::Synthetic => (DatasetKind::Synthetic, None, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::Mnist => (DatasetKind::Mnist, None, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::FashionMnist => (
                DatasetKind::FashionMnist,
                None,
                DEFAULT_FOLDER_IMAGE_SIZE_PX,
            ),
            DatasetSpec::Cifar10 => (DatasetKind::Cifar10, None, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::Folder { path, image_size } => {
                (DatasetKind::Folder, Some(path.clone()), *image_size)
            }
        };
        let mut form = Self {
            numbers: NUMBERS.iter().map(|n| (n.setting, n.show(draft))).collect(),
            name: draft.name.clone(),
            dataset,
            data_dir: draft.data_dir.clone(),
            folder,
            folder_image_size: folder_image_size.to_string(),
            model: ModelKind::Mlp,
            mlp_widths: "512,512".to_owned(),
            activation: Activation::Relu,
            dropout: "0".to_owned(),
            vgg_batch_norm: false,
            vgg_input_size: String::new(),
            start_from: match &draft.weights {
                None => StartFrom::Scratch,
                Some(WeightsSource::ImageNet) => StartFrom::ImageNet,
                Some(WeightsSource::File(_)) => StartFrom::File,
            },
            weights_file: match &draft.weights {
                Some(WeightsSource::File(file)) => Some(file.clone()),
                _ => None,
            },
            init: draft.init,
            input_scaling: draft.input_scaling,
            loss: draft.loss,
            optimizer: OptimizerKind::Adam,
            momentum: "0".to_owned(),
            nesterov: false,
            weight_decay: "0".to_owned(),
            beta_1: "0.9".to_owned(),
            beta_2: "0.999".to_owned(),
            epsilon: "1e-8".to_owned(),
            schedule: ScheduleKind::Constant,
            step_every_epochs: "5".to_owned(),
            step_gamma: "0.1".to_owned(),
            cosine_min_lr: "0".to_owned(),
            device: kiln_core::device::devices_text(&draft.devices()),
            readback_interval_ms: draft.readback_interval_ms,
            stop_on_non_finite_loss: draft.stop_on_non_finite_loss,
            flip: draft.flip,
            precision: draft.precision,
            validation: draft.validation,
            monitor: draft.monitor,
            keep: draft.keep,
            class_weights: draft.class_weights,
            fine_tune: draft.fine_tune,
        };
        match &draft.model {
            ModelSpec::Mlp {
                widths,
                activation,
                dropout,
            } => {
                form.model = ModelKind::Mlp;
                form.mlp_widths = widths
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",");
                form.activation = *activation;
                form.dropout = show_number(*dropout);
            }
            ModelSpec::Vgg16 {
                batch_norm,
                resize_to,
            } => {
                form.model = ModelKind::Vgg16;
                form.vgg_batch_norm = *batch_norm;
                form.vgg_input_size = resize_to.map(|s| s.to_string()).unwrap_or_default();
            }
            plain => {
                form.model = ModelKind::ALL
                    .into_iter()
                    .find(|kind| kind.plain_spec().as_ref() == Some(plain))
                    .unwrap_or(ModelKind::Mlp);
            }
        }
        match &draft.optimizer {
            OptimizerSpec::Sgd {
                momentum,
                nesterov,
                weight_decay,
            } => {
                form.optimizer = OptimizerKind::Sgd;
                form.momentum = show_number(*momentum);
                form.nesterov = *nesterov;
                form.weight_decay = show_number(*weight_decay);
            }
            OptimizerSpec::Adam {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            }
            | OptimizerSpec::AdamW {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            } => {
                form.optimizer = if matches!(draft.optimizer, OptimizerSpec::Adam { .. }) {
                    OptimizerKind::Adam
                } else {
                    OptimizerKind::AdamW
                };
                form.beta_1 = show_number(*beta_1);
                form.beta_2 = show_number(*beta_2);
                form.epsilon = show_number(*epsilon);
                form.weight_decay = show_number(*weight_decay);
            }
        }
        match &draft.schedule {
            Schedule::Constant => form.schedule = ScheduleKind::Constant,
            Schedule::Step {
                every_epochs,
                gamma,
            } => {
                form.schedule = ScheduleKind::Step;
                form.step_every_epochs = every_epochs.to_string();
                form.step_gamma = show_number(*gamma);
            }
            Schedule::Cosine { min_lr } => {
                form.schedule = ScheduleKind::Cosine;
                form.cosine_min_lr = show_number(*min_lr);
            }
        }
        form
    }

    /// Reads every field; a field that does not parse is reported against itself.
    fn to_draft(&self, errors: &mut BTreeMap<Setting, String>) -> ExperimentDraft {
        let mut draft = ExperimentDraft {
            name: self.name.trim().to_owned(),
            data_dir: self.data_dir.clone(),
            init: self.init,
            input_scaling: self.input_scaling,
            loss: self.loss,
            readback_interval_ms: self.readback_interval_ms,
            stop_on_non_finite_loss: self.stop_on_non_finite_loss,
            flip: self.flip,
            precision: self.precision,
            validation: self.validation,
            monitor: self.monitor,
            keep: self.keep,
            class_weights: self.class_weights,
            fine_tune: self.fine_tune,
            ..ExperimentDraft::default()
        };
        // Ranges are the engine's to check: the form only reads the numbers.
        for number in NUMBERS {
            let text = self.numbers.get(&number.setting);
            if let Some(Err(reason)) = text.map(|text| number.read_into(&mut draft, text)) {
                errors.insert(number.setting, reason);
            }
        }
        draft.dataset = self.dataset_spec(errors);
        draft.model = self.model_spec(errors);
        if draft.model.torchvision().is_some() {
            draft.weights = match self.start_from {
                StartFrom::Scratch => None,
                StartFrom::ImageNet => Some(WeightsSource::ImageNet),
                StartFrom::File => match &self.weights_file {
                    Some(file) => Some(WeightsSource::File(file.clone())),
                    None => {
                        errors.insert(Setting::Weights, "choose a weights file".to_owned());
                        None
                    }
                },
            };
        }
        let weight_decay = parse_float(&self.weight_decay, Setting::WeightDecay, errors);
        draft.optimizer = self.optimizer_spec(errors, weight_decay);
        draft.schedule = self.schedule_spec(errors);
        match kiln_core::device::parse_devices(&self.device) {
            Ok(devices) => draft.set_devices(devices),
            Err(e) => {
                errors.insert(Setting::Device, e.to_string());
                draft.set_devices(vec![DeviceChoice::Auto]);
            }
        }
        draft
    }

    /// The data set the form names; a folder data set needs its folder.
    fn dataset_spec(&self, errors: &mut BTreeMap<Setting, String>) -> DatasetSpec {
        match self.dataset {
            DatasetKind::Synthetic => DatasetSpec::Synthetic,
            DatasetKind::Mnist => DatasetSpec::Mnist,
            DatasetKind::FashionMnist => DatasetSpec::FashionMnist,
            DatasetKind::Cifar10 => DatasetSpec::Cifar10,
            DatasetKind::Folder => {
                let image_size =
                    parse_number(&self.folder_image_size, Setting::FolderImageSize, errors)
                        .unwrap_or(DEFAULT_FOLDER_IMAGE_SIZE_PX);
                match &self.folder {
                    Some(path) => DatasetSpec::Folder {
                        path: path.clone(),
                        image_size,
                    },
                    None => {
                        errors.insert(
                            Setting::Dataset,
                            "choose a folder with one sub-folder of images per class".to_owned(),
                        );
                        DatasetSpec::Synthetic
                    }
                }
            }
        }
    }

    /// The model spec from the architecture and its fields.
    fn model_spec(&self, errors: &mut BTreeMap<Setting, String>) -> ModelSpec {
        match self.model {
            ModelKind::Mlp => {
                let widths: Result<Vec<usize>, _> = self
                    .mlp_widths
                    .split(',')
                    .map(|w| w.trim().parse::<usize>())
                    .collect();
                // A width of 0 parses: the engine refuses it, naming the layer.
                let widths = match widths {
                    Ok(w) => w,
                    Err(_) => {
                        errors.insert(
                            Setting::MlpWidths,
                            "hidden widths are whole numbers separated by commas, e.g. 512,512"
                                .to_owned(),
                        );
                        vec![512, 512]
                    }
                };
                let dropout = parse_float(&self.dropout, Setting::Dropout, errors).unwrap_or(0.0);
                ModelSpec::Mlp {
                    widths,
                    activation: self.activation,
                    dropout,
                }
            }
            ModelKind::Vgg16 => {
                let resize_to = if self.vgg_input_size.trim().is_empty() {
                    None
                } else {
                    parse_number(&self.vgg_input_size, Setting::VggInputSize, errors)
                };
                ModelSpec::Vgg16 {
                    batch_norm: self.vgg_batch_norm,
                    resize_to,
                }
            }
            plain => plain.plain_spec().unwrap_or_default(),
        }
    }

    /// The optimizer and its parameters; unreadable numbers fall back to their defaults.
    fn optimizer_spec(
        &self,
        errors: &mut BTreeMap<Setting, String>,
        weight_decay: Option<f64>,
    ) -> OptimizerSpec {
        match self.optimizer {
            OptimizerKind::Sgd => OptimizerSpec::Sgd {
                momentum: parse_float(&self.momentum, Setting::Momentum, errors).unwrap_or(0.0),
                nesterov: self.nesterov,
                weight_decay: weight_decay.unwrap_or(0.0),
            },
            OptimizerKind::Adam | OptimizerKind::AdamW => {
                let beta_1 = parse_float(&self.beta_1, Setting::Beta1, errors).unwrap_or(0.9);
                let beta_2 = parse_float(&self.beta_2, Setting::Beta2, errors).unwrap_or(0.999);
                let epsilon = parse_float(&self.epsilon, Setting::Epsilon, errors).unwrap_or(1e-8);
                if self.optimizer == OptimizerKind::Adam {
                    OptimizerSpec::Adam {
                        beta_1,
                        beta_2,
                        epsilon,
                        weight_decay: weight_decay.unwrap_or(0.0),
                    }
                } else {
                    OptimizerSpec::AdamW {
                        beta_1,
                        beta_2,
                        epsilon,
                        weight_decay: weight_decay.unwrap_or(0.01),
                    }
                }
            }
        }
    }

    /// The learning-rate schedule and its parameters.
    fn schedule_spec(&self, errors: &mut BTreeMap<Setting, String>) -> Schedule {
        match self.schedule {
            ScheduleKind::Constant => Schedule::Constant,
            ScheduleKind::Step => Schedule::Step {
                every_epochs: parse_number(&self.step_every_epochs, Setting::StepEvery, errors)
                    .unwrap_or(1),
                gamma: parse_float(&self.step_gamma, Setting::StepGamma, errors).unwrap_or(0.1),
            },
            ScheduleKind::Cosine => Schedule::Cosine {
                min_lr: parse_float(&self.cosine_min_lr, Setting::CosineMinLr, errors)
                    .unwrap_or(0.0),
            },
        }
    }

    /// Checks the whole form: field marks for the panel, and the experiment when all is well.
    pub fn check(&self) -> FormCheck {
        let mut errors = BTreeMap::new();
        // Fields that did not parse hold usable stand-ins, so the engine's own rules still run
        // and can mark a second field at the same time.
        let draft = self.to_draft(&mut errors);
        match draft.validate() {
            Ok(experiment) if errors.is_empty() => FormCheck {
                experiment: Some(experiment),
                errors,
                summary: None,
            },
            Ok(_) => FormCheck {
                experiment: None,
                errors,
                summary: None,
            },
            Err(error) => {
                let summary = error.to_string();
                if let ConfigError::Invalid { field, reason, .. } = &error {
                    let field = match (*field, self.model) {
                        // The model check names the whole spec; put the mark where it was typed.
                        (Setting::Model, ModelKind::Mlp) => Setting::MlpWidths,
                        (Setting::Model, ModelKind::Vgg16) => Setting::VggInputSize,
                        (other, _) => other,
                    };
                    errors.entry(field).or_insert_with(|| reason.clone());
                }
                FormCheck {
                    experiment: None,
                    errors,
                    summary: Some(summary),
                }
            }
        }
    }
}

fn parse_float(text: &str, field: Setting, errors: &mut BTreeMap<Setting, String>) -> Option<f64> {
    f64::read(text)
        .map_err(|reason| errors.insert(field, reason))
        .ok()
}

/// A number as typed, of any size its type holds: the range is the engine's to check.
fn parse_number<T: TypedNumber>(
    text: &str,
    field: Setting,
    errors: &mut BTreeMap<Setting, String>,
) -> Option<T> {
    T::read(text)
        .map_err(|reason| errors.insert(field, reason))
        .ok()
}

/// The result of checking the form.
#[derive(Debug, Default)]
pub struct FormCheck {
    /// The experiment, when every field is usable.
    pub experiment: Option<Experiment>,
    /// Reasons shown next to the fields they concern.
    pub errors: BTreeMap<Setting, String>,
    /// A reason that names no single field of the form.
    pub summary: Option<String>,
}

impl FormCheck {
    /// Why Start is disabled, in one sentence; none when it is enabled.
    pub fn blocking_reason(&self) -> Option<String> {
        if self.experiment.is_some() {
            return None;
        }
        if let Some((field, reason)) = self.errors.iter().next() {
            return Some(format!("{}: {reason}", field.label()));
        }
        self.summary.clone()
    }
}

/// Width of the label column, shared by every group so the fields line up.
const LABEL_WIDTH: f32 = 104.0;

/// What the person asked for in the setup panel this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum SetupAction {
    /// Pick a folder of class sub-folders.
    ChooseImageFolder,
    /// Pick the folder holding MNIST / Fashion-MNIST / CIFAR-10 files.
    ChooseDataDir,
    /// Download the chosen data set.
    Fetch,
    /// Download torchvision's ImageNet weights of an architecture.
    FetchWeights(TorchvisionArch),
    /// Pick a weights file to start from.
    ChooseWeightsFile,
    /// Cancel the download.
    CancelFetch,
    /// Open the Data window on the chosen data set.
    InspectData,
    /// Open the *Add remote box* window.
    AddRemoteBox,
}

/// What the panel shows about the data set and devices, gathered outside the form.
#[derive(Debug, Default)]
pub struct SetupContext<'a> {
    /// Where the chosen data set was found, or why not.
    pub data_location: Option<Result<PathBuf, String>>,
    /// The running download: what, its file and the fraction done (none when unknown).
    pub fetch_progress: Option<(Download, (String, Option<f32>))>,
    /// The last download's outcome.
    pub fetch_message: Option<String>,
    /// Devices, or none while they are being listed.
    pub devices: Option<&'a [DeviceInfo]>,
    /// Why a remembered remote box could not be listed, one sentence each.
    pub box_problems: &'a [String],
    /// Whether a run is going (the form is then read-only).
    pub locked: bool,
}

/// A labelled single-line text field with its error mark under it; returns whether it changed.
fn text_row(
    ui: &mut egui::Ui,
    field: Setting,
    value: &mut String,
    errors: &BTreeMap<Setting, String>,
) -> bool {
    let tip = field.help();
    let label = ui.label(field.label()).on_hover_text(tip);
    let error = errors.get(&field);
    let mut edit = egui::TextEdit::singleline(value).desired_width(140.0);
    if error.is_some() {
        edit = edit.text_color(ui.visuals().error_fg_color);
    }
    let response = ui.add(edit).labelled_by(label.id).on_hover_text(tip);
    ui.end_row();
    if let Some(reason) = error {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
    response.changed()
}

/// The text field of a setting that is one number of the draft.
fn number_row(
    ui: &mut egui::Ui,
    field: Setting,
    numbers: &mut BTreeMap<Setting, String>,
    errors: &BTreeMap<Setting, String>,
) -> bool {
    text_row(ui, field, number_text(numbers, field), errors)
}

/// The text of `setting`'s field; a form remembered before that number existed shows its
/// default rather than an empty field the engine would refuse.
fn number_text(numbers: &mut BTreeMap<Setting, String>, setting: Setting) -> &mut String {
    numbers.entry(setting).or_insert_with(|| {
        NumberSetting::of(setting)
            .map(|n| n.show(&ExperimentDraft::default()))
            .unwrap_or_default()
    })
}

/// A chosen folder's or file's name, cut to fit beside its button with the whole path on hover:
/// a long path would otherwise widen the Setup panel and squeeze the plots.
fn path_label(ui: &mut egui::Ui, path: Option<&Path>) {
    let Some(path) = path else {
        ui.label("(none chosen)");
        return;
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    ui.scope(|ui| {
        ui.set_max_width(120.0);
        ui.add(egui::Label::new(name).truncate())
            .on_hover_text(path.display().to_string());
    });
}

/// A reason in the error colour, wrapped to the field column so it never runs off the panel.
fn error_label(ui: &mut egui::Ui, reason: &str) {
    let color = ui.visuals().error_fg_color;
    ui.vertical(|ui| {
        ui.set_max_width(210.0);
        ui.add(egui::Label::new(egui::RichText::new(reason).color(color)).wrap());
    });
}

fn error_row(ui: &mut egui::Ui, field: Setting, errors: &BTreeMap<Setting, String>) {
    if let Some(reason) = errors.get(&field) {
        ui.label("");
        error_label(ui, reason);
        ui.end_row();
    }
}

/// The list of a setting that is one choice of the draft, labelled from `settings::CHOICES`.
fn choice_row<T: Copy + PartialEq + std::str::FromStr>(
    ui: &mut egui::Ui,
    setting: Setting,
    value: &mut T,
) {
    let options: Vec<(T, &str)> = ChoiceSetting::of(setting)
        .into_iter()
        .flat_map(|choice| choice.options)
        .filter_map(|(word, label)| Some((word.parse::<T>().ok()?, *label)))
        .collect();
    combo_row(ui, setting, value, &options);
}

fn combo_row<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    setting: Setting,
    value: &mut T,
    options: &[(T, &str)],
) {
    let (label, tip) = (setting.label(), setting.help());
    let label_response = ui.label(label).on_hover_text(tip);
    let selected = options
        .iter()
        .find(|(option, _)| option == value)
        .map_or("", |(_, text)| *text);
    egui::ComboBox::from_id_salt(label)
        .selected_text(selected)
        .width(180.0)
        .show_ui(ui, |ui| {
            for (option, text) in options {
                ui.selectable_value(value, *option, *text);
            }
        })
        .response
        .labelled_by(label_response.id)
        .on_hover_text(tip);
    ui.end_row();
}

/// The setup panel; returns the actions to carry out (pickers, downloads) outside the frame.
pub fn setup_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    check: &FormCheck,
    context: &SetupContext<'_>,
) -> Vec<SetupAction> {
    let mut actions = Vec::new();
    let errors = &check.errors;
    ui.add_enabled_ui(!context.locked, |ui| {
        presets_ui(ui, form);
        section_ui(ui, "Data", |ui| {
            data_rows_ui(ui, form, errors, context, &mut actions);
        });
        section_ui(ui, "Model", |ui| {
            model_rows_ui(ui, form, errors, context, &mut actions);
        });
        section_ui(ui, "Optimizer", |ui| optimizer_rows_ui(ui, form, errors));
        section_ui(ui, "Validation", |ui| validation_rows_ui(ui, form, errors));
        section_ui(ui, "Run", |ui| {
            run_rows_ui(ui, form, errors, context, &mut actions);
        });
    });
    actions
}

/// A titled group of rows in a two-column grid whose label column lines up with the others.
fn section_ui(ui: &mut egui::Ui, title: &str, add_rows: impl FnOnce(&mut egui::Ui)) {
    ui.separator();
    ui.strong(title);
    egui::Grid::new(format!("setup-{}", title.to_lowercase()))
        .num_columns(2)
        .min_col_width(LABEL_WIDTH)
        .spacing([8.0, 4.0])
        .show(ui, add_rows);
}

/// The Data rows: the data set, where its files are (or a folder of images), input scaling and
/// augmentation.
fn data_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    let options: Vec<(DatasetKind, &str)> =
        DatasetKind::ALL.iter().map(|k| (*k, k.label())).collect();
    combo_row(ui, Setting::Dataset, &mut form.dataset, &options);
    error_row(ui, Setting::Dataset, errors);
    if form.dataset == DatasetKind::Folder {
        ui.label("Folder");
        ui.horizontal(|ui| {
            path_label(ui, form.folder.as_deref());
            if ui
                .button("Choose folder…")
                .on_hover_text("A folder with one sub-folder of PNG/JPEG images per class.")
                .clicked()
            {
                actions.push(SetupAction::ChooseImageFolder);
            }
        });
        ui.end_row();
        text_row(
            ui,
            Setting::FolderImageSize,
            &mut form.folder_image_size,
            errors,
        );
    }
    if form.dataset.remote().is_some() {
        ui.label("Data folder");
        ui.vertical(|ui| {
                match &context.data_location {
                    Some(Ok(path)) => {
                        ui.label(format!("found in {}", path.display()));
                    }
                    Some(Err(reason)) => {
                        ui.colored_label(ui.visuals().warn_fg_color, reason);
                    }
                    None => {
                        ui.label("looking…");
                    }
                }
                ui.horizontal(|ui| {
                    if ui
                        .button("Choose data folder…")
                        .on_hover_text("The folder holding the data set's files, or a parent of mnist/, fashion-mnist/, cifar-10-batches-bin/.")
                        .clicked()
                    {
                        actions.push(SetupAction::ChooseDataDir);
                    }
                    if form.data_dir.is_some() && ui.button("Use default folders").clicked() {
                        form.data_dir = None;
                    }
                });
                let fetch = ("Fetch", "Download the data set and check every file's SHA-256 before keeping it.");
                if let Some(remote) = form.dataset.remote() {
                    download_ui(ui, context, fetch, Download::Dataset(remote), actions);
                }
            });
        ui.end_row();
    }
    ui.label("");
    if ui
        .button("Look at the data…")
        .on_hover_text("Images per class and split, samples of each class, files left out, and images found in more than one split.")
        .clicked()
    {
        actions.push(SetupAction::InspectData);
    }
    ui.end_row();
    choice_row(ui, Setting::InputScaling, &mut form.input_scaling);
    number_row(ui, Setting::CropPadding, &mut form.numbers, errors);
    ui.label("");
    ui.checkbox(&mut form.flip, Setting::Flip.label())
        .on_hover_text(Setting::Flip.help());
    ui.end_row();
    number_row(ui, Setting::CropScale, &mut form.numbers, errors);
    number_row(ui, Setting::RotationDegrees, &mut form.numbers, errors);
    number_row(ui, Setting::Brightness, &mut form.numbers, errors);
    number_row(ui, Setting::Contrast, &mut form.numbers, errors);
}

/// The bar with Cancel of the download `what`, or the button that starts it; and the last
/// download's outcome.
fn download_ui(
    ui: &mut egui::Ui,
    context: &SetupContext<'_>,
    (button, tip): (&str, &str),
    what: Download,
    actions: &mut Vec<SetupAction>,
) {
    match &context.fetch_progress {
        Some((running, (file, fraction))) if *running == what => {
            ui.horizontal(|ui| {
                let bar = egui::ProgressBar::new(fraction.unwrap_or(0.0))
                    .text(format!("downloading {file}"))
                    .desired_width(180.0);
                ui.add(bar);
                if ui.button("Cancel download").clicked() {
                    actions.push(SetupAction::CancelFetch);
                }
            });
        }
        _ => {
            if ui.button(button).on_hover_text(tip).clicked() {
                actions.push(match what {
                    Download::Dataset(_) => SetupAction::Fetch,
                    Download::Weights(arch) => SetupAction::FetchWeights(arch),
                });
            }
        }
    }
    if let Some(message) = &context.fetch_message {
        ui.label(message);
    }
}

/// The "Start from" rows of a torchvision architecture: random, ImageNet's (downloaded here),
/// or a file.
fn start_from_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    arch: TorchvisionArch,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    let before = form.start_from;
    let options: Vec<(StartFrom, &str)> = StartFrom::ALL.iter().map(|s| (*s, s.label())).collect();
    combo_row(ui, Setting::Weights, &mut form.start_from, &options);
    if before == StartFrom::Scratch && form.start_from != StartFrom::Scratch {
        // torchvision's weights were trained on ImageNet-normalized pixels.
        form.input_scaling = InputScaling::ImageNet;
    }
    match form.start_from {
        StartFrom::Scratch => {}
        StartFrom::ImageNet => {
            ui.label("");
            ui.vertical(|ui| {
                let published = ImageNetWeights::of(arch);
                let kept = kiln_core::data::data_roots(form.data_dir.as_deref())
                    .iter()
                    .find_map(|root| published.find_in(root));
                match kept {
                    Some(path) => {
                        ui.label(format!("downloaded: {}", path.display()));
                    }
                    None => {
                        ui.label(format!(
                            "{} ({:.1} % top-1 on ImageNet), not downloaded yet",
                            published.file_name, published.top1_percent
                        ));
                        let fetch = (
                            "Download",
                            "Download torchvision's weights once and check their SHA-256 before keeping them.",
                        );
                        download_ui(ui, context, fetch, Download::Weights(arch), actions);
                    }
                }
            });
            ui.end_row();
        }
        StartFrom::File => {
            ui.label("");
            ui.horizontal(|ui| {
                path_label(ui, form.weights_file.as_deref());
                if ui.button("Choose file…").clicked() {
                    actions.push(SetupAction::ChooseWeightsFile);
                }
            });
            ui.end_row();
        }
    }
}

/// The Model rows: the architecture and its parts, where its weights start, init and loss.
fn model_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    let options: Vec<(ModelKind, &str)> = ModelKind::ALL.iter().map(|k| (*k, k.label())).collect();
    combo_row(ui, Setting::Model, &mut form.model, &options);
    if let Some(arch) = form.model.plain_spec().and_then(|spec| spec.torchvision()) {
        start_from_ui(ui, form, arch, context, actions);
        error_row(ui, Setting::Weights, errors);
        if form.start_from != StartFrom::Scratch {
            choice_row(ui, Setting::FineTune, &mut form.fine_tune);
            error_row(ui, Setting::FineTune, errors);
            if form.fine_tune == FineTune::LinearProbe {
                number_row(ui, Setting::UnfreezeAfter, &mut form.numbers, errors);
            }
            number_row(ui, Setting::BackboneLrScale, &mut form.numbers, errors);
        }
    }
    match form.model {
        ModelKind::Mlp => {
            text_row(ui, Setting::MlpWidths, &mut form.mlp_widths, errors);
            let options: Vec<(Activation, &str)> =
                Activation::ALL.iter().map(|a| (*a, a.name())).collect();
            combo_row(ui, Setting::Activation, &mut form.activation, &options);
            text_row(ui, Setting::Dropout, &mut form.dropout, errors);
        }
        ModelKind::Vgg16 => {
            let label = ui
                .label("Batch norm")
                .on_hover_text("Adds batch normalization after each convolution (VGG16-BN).");
            ui.checkbox(&mut form.vgg_batch_norm, "")
                .labelled_by(label.id);
            ui.end_row();
            text_row(ui, Setting::VggInputSize, &mut form.vgg_input_size, errors);
        }
        _ => error_row(ui, Setting::Model, errors),
    }
    choice_row(ui, Setting::Init, &mut form.init);
    choice_row(ui, Setting::Loss, &mut form.loss);
    choice_row(ui, Setting::ClassWeights, &mut form.class_weights);
}

/// The Optimizer rows: the update rule, its parameters and the learning-rate schedule.
fn optimizer_rows_ui(ui: &mut egui::Ui, form: &mut SetupForm, errors: &BTreeMap<Setting, String>) {
    let before = form.optimizer;
    let options = [
        (OptimizerKind::Sgd, "SGD"),
        (OptimizerKind::Adam, "Adam"),
        (OptimizerKind::AdamW, "AdamW"),
    ];
    combo_row(ui, Setting::Optimizer, &mut form.optimizer, &options);
    if before != form.optimizer {
        // AdamW's decay is decoupled and defaults to 0.01; the others default to none.
        form.weight_decay = if form.optimizer == OptimizerKind::AdamW {
            "0.01"
        } else {
            "0"
        }
        .to_owned();
    }
    number_row(ui, Setting::Lr, &mut form.numbers, errors);
    match form.optimizer {
        OptimizerKind::Sgd => {
            text_row(ui, Setting::Momentum, &mut form.momentum, errors);
            let label = ui
                .label(Setting::Nesterov.label())
                .on_hover_text(Setting::Nesterov.help());
            ui.checkbox(&mut form.nesterov, "").labelled_by(label.id);
            ui.end_row();
            error_row(ui, Setting::Nesterov, errors);
        }
        OptimizerKind::Adam | OptimizerKind::AdamW => {
            text_row(ui, Setting::Beta1, &mut form.beta_1, errors);
            text_row(ui, Setting::Beta2, &mut form.beta_2, errors);
            text_row(ui, Setting::Epsilon, &mut form.epsilon, errors);
        }
    }
    text_row(ui, Setting::WeightDecay, &mut form.weight_decay, errors);
    let options = [
        (ScheduleKind::Constant, "constant"),
        (ScheduleKind::Step, "step decay"),
        (ScheduleKind::Cosine, "cosine"),
    ];
    combo_row(ui, Setting::Schedule, &mut form.schedule, &options);
    match form.schedule {
        ScheduleKind::Constant => {}
        ScheduleKind::Step => {
            text_row(ui, Setting::StepEvery, &mut form.step_every_epochs, errors);
            text_row(ui, Setting::StepGamma, &mut form.step_gamma, errors);
        }
        ScheduleKind::Cosine => {
            text_row(ui, Setting::CosineMinLr, &mut form.cosine_min_lr, errors);
        }
    }
}

/// The Validation rows: where epochs are evaluated, how the best one is chosen, early stopping.
fn validation_rows_ui(ui: &mut egui::Ui, form: &mut SetupForm, errors: &BTreeMap<Setting, String>) {
    let validated_on = form.validation;
    choice_row(ui, Setting::Validation, &mut form.validation);
    if let Some(keep) = validated_on.keep_after_switch_to(form.validation) {
        form.keep = keep;
    }
    if form.validation == Validation::Split {
        number_row(ui, Setting::ValSplit, &mut form.numbers, errors);
    }
    if form.dataset == DatasetKind::Folder {
        number_row(ui, Setting::TestSplit, &mut form.numbers, errors);
    }
    choice_row(ui, Setting::Monitor, &mut form.monitor);
    number_row(ui, Setting::EarlyStop, &mut form.numbers, errors);
    number_row(ui, Setting::MinDelta, &mut form.numbers, errors);
    choice_row(ui, Setting::Keep, &mut form.keep);
}

/// The Run rows: batch, epochs, seed, device, precision, profiling, name, NaN handling.
fn run_rows_ui(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    errors: &BTreeMap<Setting, String>,
    context: &SetupContext<'_>,
    actions: &mut Vec<SetupAction>,
) {
    number_row(ui, Setting::BatchSize, &mut form.numbers, errors);
    number_row(ui, Setting::Epochs, &mut form.numbers, errors);
    number_row(ui, Setting::Seed, &mut form.numbers, errors);
    device_row(ui, form, context.devices, actions);
    for problem in context.box_problems {
        ui.label("");
        ui.colored_label(ui.visuals().warn_fg_color, problem);
        ui.end_row();
    }
    error_row(ui, Setting::Device, errors);
    precision_row(ui, form, context.devices);
    number_row(ui, Setting::ProfileSteps, &mut form.numbers, errors);
    text_row(ui, Setting::Name, &mut form.name, errors);
    ui.label("");
    ui.checkbox(
        &mut form.stop_on_non_finite_loss,
        Setting::StopOnNonFiniteLoss.label(),
    )
    .on_hover_text(Setting::StopOnNonFiniteLoss.help());
    ui.end_row();
}

/// The precision choice, with a red line when the chosen device cannot compute in f16; the engine
/// refuses such a run with the same reason.
fn precision_row(ui: &mut egui::Ui, form: &mut SetupForm, devices: Option<&[DeviceInfo]>) {
    choice_row(ui, Setting::Precision, &mut form.precision);
    if form.precision != Precision::F16 {
        return;
    }
    let Some(devices) = devices else {
        return;
    };
    let chosen = match form.device.as_str() {
        "auto" => kiln_core::device::auto_choice(devices).to_string(),
        id => id.to_owned(),
    };
    let problem = match devices.iter().find(|d| d.id == chosen) {
        Some(device) if device.class == DeviceClass::Cpu => {
            Some("the CPU trains in f32 only; pick a GPU or f32")
        }
        Some(device) if !device.shader_f16 => {
            Some("this GPU has no 16-bit float shaders; pick f32")
        }
        _ => None,
    };
    if let Some(problem) = problem {
        ui.label("");
        ui.colored_label(ui.visuals().error_fg_color, problem);
        ui.end_row();
    }
}

fn presets_ui(ui: &mut egui::Ui, form: &mut SetupForm) {
    ui.horizontal(|ui| {
        let label = ui.label("Preset");
        egui::ComboBox::from_id_salt("preset")
            .selected_text("load a reference workload…")
            .show_ui(ui, |ui| {
                for name in config::preset_names() {
                    if ui.selectable_label(false, name).clicked()
                        && let Ok(draft) = config::preset(name)
                    {
                        *form = SetupForm::from_draft(&draft);
                    }
                }
                ui.separator();
                if ui.selectable_label(false, "defaults").clicked() {
                    *form = SetupForm::default();
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text("Fill the form with one of the reference workloads from user reports.");
    });
}

/// The devices that can train one model together, each group as its `--devices` list and a
/// label: every hardware GPU of this machine (its wgpu adapters, and apart from them its CUDA
/// devices, the same cards by another backend), and every box's devices, when there are two or
/// more.
fn parallel_groups(devices: &[DeviceInfo]) -> Vec<(String, String)> {
    let mut groups: Vec<(String, Vec<&DeviceInfo>)> = Vec::new();
    for device in devices {
        let group = match device.class {
            DeviceClass::Remote => device.id.rsplit_once('/').map(|(at, _)| at.to_owned()),
            _ if device.backend == CUDA_BACKEND => Some("cuda".to_owned()),
            class if class.is_hardware_gpu() => Some("gpu".to_owned()),
            _ => None,
        };
        let Some(group) = group else { continue };
        match groups.iter_mut().find(|(name, _)| *name == group) {
            Some((_, members)) => members.push(device),
            None => groups.push((group, vec![device])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|(group, members)| {
            let ids: Vec<&str> = members.iter().map(|d| d.id.as_str()).collect();
            let text = match group.strip_prefix("remote:") {
                Some(address) => format!("all {} devices of {address} at once", members.len()),
                None if group == "cuda" => format!("all {} GPUs at once, on CUDA", members.len()),
                None => format!("all {} GPUs at once", members.len()),
            };
            (ids.join(","), text)
        })
        .collect()
}

fn device_row(
    ui: &mut egui::Ui,
    form: &mut SetupForm,
    devices: Option<&[DeviceInfo]>,
    actions: &mut Vec<SetupAction>,
) {
    let label = ui
        .label(Setting::Device.label())
        .on_hover_text(Setting::Device.help());
    let Some(devices) = devices else {
        ui.label("listing devices…");
        ui.end_row();
        return;
    };
    let describe = |device: &DeviceInfo| {
        if device.class.is_hardware_gpu() {
            format!("{} ({})", device.name, device.backend)
        } else {
            format!("{} [{}]", device.name, device.class.label())
        }
    };
    let auto = kiln_core::device::auto_choice(devices);
    let auto_name = devices
        .iter()
        .find(|d| d.id == auto.to_string())
        .map_or_else(|| "CPU".to_owned(), |d| d.name.clone());
    let auto_text = format!("auto: {auto_name}");
    let together = parallel_groups(devices);
    let selected = if form.device == "auto" {
        auto_text.clone()
    } else if let Some((_, text)) = together.iter().find(|(ids, _)| *ids == form.device) {
        text.clone()
    } else {
        devices
            .iter()
            .find(|d| d.id == form.device)
            .map_or_else(|| form.device.clone(), describe)
    };
    egui::ComboBox::from_id_salt("device")
        .selected_text(selected)
        .width(220.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut form.device, "auto".to_owned(), auto_text);
            for device in devices {
                ui.selectable_value(&mut form.device, device.id.clone(), describe(device));
            }
            for (ids, text) in together {
                ui.selectable_value(&mut form.device, ids, text).on_hover_text(
                    "Data parallel: each step's batch is split across these devices and their gradients summed.",
                );
            }
            // A browser page cannot reach a box (RemoteError::FromBrowser).
            if cfg!(target_arch = "wasm32") {
                return;
            }
            ui.separator();
            if ui
                .selectable_label(false, "Add remote box…")
                .on_hover_text("Train on a device of a machine that runs `kiln serve`.")
                .clicked()
            {
                actions.push(SetupAction::AddRemoteBox);
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(Setting::Device.help());
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_survives_the_form() {
        for name in config::preset_names() {
            let draft = config::preset(name).expect("preset");
            let form = SetupForm::from_draft(&draft);
            let check = form.check();
            assert!(check.errors.is_empty(), "{name}: {:?}", check.errors);
            let experiment = check.experiment.expect("valid");
            assert_eq!(experiment.draft(), &draft, "{name}");
        }
    }

    #[test]
    fn two_gpus_or_a_box_of_two_are_offered_together_and_the_form_keeps_the_list() {
        let gpu = |index: usize, class| DeviceInfo {
            id: format!("gpu:{index}"),
            class,
            ..DeviceInfo::cpu()
        };
        // The same two cards through CUDA, in a build with it: a group of their own.
        let cuda = |index: usize| DeviceInfo {
            id: format!("cuda:{index}"),
            backend: CUDA_BACKEND.to_owned(),
            ..gpu(index, DeviceClass::DiscreteGpu)
        };
        let big: kiln_core::remote::BoxAddress = "big:7340".parse().unwrap();
        let small: kiln_core::remote::BoxAddress = "small:7340".parse().unwrap();
        let devices = vec![
            gpu(0, DeviceClass::DiscreteGpu),
            gpu(1, DeviceClass::DiscreteGpu),
            gpu(2, DeviceClass::Software),
            cuda(0),
            cuda(1),
            DeviceInfo::remote(&big, 0),
            DeviceInfo::remote(&big, 1),
            DeviceInfo::remote(&small, 0),
            DeviceInfo::cpu(),
        ];
        let groups = parallel_groups(&devices);
        assert_eq!(
            groups,
            vec![
                ("gpu:0,gpu:1".to_owned(), "all 2 GPUs at once".to_owned()),
                (
                    "cuda:0,cuda:1".to_owned(),
                    "all 2 GPUs at once, on CUDA".to_owned()
                ),
                (
                    "remote:big:7340/0,remote:big:7340/1".to_owned(),
                    "all 2 devices of big:7340 at once".to_owned()
                ),
            ]
        );
        let form = SetupForm {
            device: groups[0].0.clone(),
            ..SetupForm::default()
        };
        let experiment = form.check().experiment.expect("valid");
        assert_eq!(experiment.data_parallel, vec![DeviceChoice::Gpu(1)]);
        assert_eq!(
            SetupForm::from_draft(experiment.draft()).device,
            "gpu:0,gpu:1"
        );
    }

    #[test]
    fn bad_text_is_marked_on_its_field() {
        let form = SetupForm::default()
            .with_number(Setting::Lr, "fast")
            .with_number(Setting::BatchSize, "0");
        let check = form.check();
        assert!(check.experiment.is_none());
        assert!(check.errors[&Setting::Lr].contains("not a number"));
        assert!(check.errors[&Setting::BatchSize].contains("between 1"));
        assert!(check.blocking_reason().is_some());
    }

    #[test]
    fn a_typo_does_not_hide_an_engine_rule_elsewhere() {
        let form = SetupForm::default()
            .with_number(Setting::Lr, "-1")
            .with_number(Setting::BatchSize, "lots");
        let check = form.check();
        assert!(
            check.errors.contains_key(&Setting::BatchSize),
            "{:?}",
            check.errors
        );
        assert!(
            check.errors[&Setting::Lr].contains("positive"),
            "{:?}",
            check.errors
        );
    }

    #[test]
    fn profile_steps_reach_the_run_or_are_marked() {
        let form = SetupForm::default().with_number(Setting::ProfileSteps, "5");
        let check = form.check();
        assert_eq!(check.experiment.map(|e| e.profile_steps), Some(5));
        let form = SetupForm::default().with_number(Setting::ProfileSteps, "20000");
        let check = form.check();
        assert!(check.experiment.is_none());
        assert!(
            check.errors.contains_key(&Setting::ProfileSteps),
            "{:?}",
            check.errors
        );
    }

    #[test]
    fn engine_rules_are_marked_on_their_field() {
        let form = SetupForm::default().with_number(Setting::Lr, "50");
        let check = form.check();
        assert!(
            check.errors[&Setting::Lr].contains("above 10"),
            "{:?}",
            check.errors
        );

        let form = SetupForm {
            optimizer: OptimizerKind::Sgd,
            nesterov: true,
            momentum: "0".to_owned(),
            ..SetupForm::default()
        };
        assert!(form.check().errors.contains_key(&Setting::Nesterov));
    }

    #[test]
    fn ranges_the_engine_owns_are_marked_on_the_field_they_were_typed_in() {
        let form = SetupForm {
            dataset: DatasetKind::Folder,
            folder: Some(PathBuf::from("photos")),
            folder_image_size: "100000".to_owned(),
            model: ModelKind::Vgg16,
            vgg_input_size: "4096".to_owned(),
            ..SetupForm::default()
        };
        let check = form.check();
        assert!(check.experiment.is_none());
        // validate stops at its first refusal; the VGG side is checked before the folder's.
        assert!(
            check.errors[&Setting::VggInputSize].contains("at most"),
            "{:?}",
            check.errors
        );
        let form = SetupForm {
            vgg_input_size: "224".to_owned(),
            ..form
        };
        let check = form.check();
        assert!(
            check.errors[&Setting::FolderImageSize].contains("1 to 4096"),
            "{:?}",
            check.errors
        );
    }

    #[test]
    fn a_zero_width_is_refused_by_the_engine_on_the_widths_field() {
        let form = SetupForm {
            mlp_widths: "512,0".to_owned(),
            ..SetupForm::default()
        };
        let errors = form.check().errors;
        assert!(
            errors[&Setting::MlpWidths].contains("Hidden layer 2"),
            "{errors:?}"
        );
        let form = SetupForm {
            mlp_widths: "wide".to_owned(),
            ..SetupForm::default()
        };
        let errors = form.check().errors;
        assert!(
            errors[&Setting::MlpWidths].contains("whole numbers"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_number_missing_from_a_remembered_form_shows_its_default() {
        let mut form = SetupForm::default();
        form.numbers.remove(&Setting::Epochs);
        assert_eq!(form.number_mut(Setting::Epochs), "5");
        assert!(form.check().errors.is_empty());
    }

    #[test]
    fn a_folder_data_set_needs_a_folder() {
        let form = SetupForm {
            dataset: DatasetKind::Folder,
            ..SetupForm::default()
        };
        let check = form.check();
        assert!(check.errors.contains_key(&Setting::Dataset));
    }

    #[test]
    fn a_pretrained_start_reaches_the_draft_and_survives_the_form() {
        let form = SetupForm {
            model: ModelKind::ResNet50,
            start_from: StartFrom::ImageNet,
            fine_tune: FineTune::LinearProbe,
            ..SetupForm::default()
        }
        .with_number(Setting::UnfreezeAfter, "2");
        let draft = form.to_draft(&mut BTreeMap::new());
        assert_eq!(draft.model, ModelSpec::ResNet50);
        assert_eq!(draft.weights, Some(WeightsSource::ImageNet));
        assert_eq!(draft.unfreeze_after, 2);
        let again = SetupForm::from_draft(&draft);
        assert_eq!(
            (again.model, again.start_from),
            (ModelKind::ResNet50, StartFrom::ImageNet)
        );
        // A file start needs its file; an architecture without weights ignores the choice.
        let no_file = SetupForm {
            start_from: StartFrom::File,
            ..form.clone()
        };
        assert!(no_file.check().errors.contains_key(&Setting::Weights));
        let cnn = SetupForm {
            model: ModelKind::Cnn,
            ..no_file
        };
        assert_eq!(cnn.to_draft(&mut BTreeMap::new()).weights, None);
    }
}
