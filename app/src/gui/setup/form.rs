//! The setup form's model, apart from its drawing: the draft it edits, the text typed in its
//! fields, and the one check that turns both into an experiment or into marks on the fields.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kiln_core::config::{
    ConfigError, Experiment, ExperimentDraft, OptimizerSpec, Schedule, Setting,
};
use kiln_core::data::{DEFAULT_FOLDER_IMAGE_SIZE_PX, DatasetSpec};
use kiln_core::device::DeviceChoice;
use kiln_core::model::{Activation, DEFAULT_MLP_WIDTHS, ModelSpec, TorchvisionArch};
use kiln_core::settings::{TypedNumber, numbers, show_number};
use kiln_core::weights::WeightsSource;
use serde::{Deserialize, Serialize};

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
    /// A CSV or JSON-lines file of image paths and labels.
    LabelsFile,
}

impl DatasetKind {
    /// Every choice, in the order the list shows them.
    pub(super) const ALL: [Self; 6] = [
        Self::Synthetic,
        Self::Mnist,
        Self::FashionMnist,
        Self::Cifar10,
        Self::Folder,
        Self::LabelsFile,
    ];

    /// What the list shows for it.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Synthetic => "Built-in (synthetic, no download)",
            Self::Mnist => "MNIST",
            Self::FashionMnist => "Fashion-MNIST",
            Self::Cifar10 => "CIFAR-10",
            Self::Folder => "Image folder…",
            Self::LabelsFile => "Labels file (CSV, JSON lines)…",
        }
    }

    /// The downloadable data set behind this choice, if any.
    pub fn remote(self) -> Option<kiln_core::data::fetch::RemoteDataset> {
        use kiln_core::data::fetch::RemoteDataset;
        match self {
            Self::Mnist => Some(RemoteDataset::Mnist),
            Self::FashionMnist => Some(RemoteDataset::FashionMnist),
            Self::Cifar10 => Some(RemoteDataset::Cifar10),
            Self::Synthetic | Self::Folder | Self::LabelsFile => None,
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
    /// One of torchvision's ImageNet architectures, for its weights.
    Torchvision(TorchvisionArch),
}

impl ModelKind {
    /// Every choice, in the order the list shows them.
    pub(super) fn all() -> Vec<Self> {
        let own = [Self::Mlp, Self::Cnn, Self::Vgg16, Self::ResNet18];
        own.into_iter()
            .chain(TorchvisionArch::ALL.map(Self::Torchvision))
            .collect()
    }

    /// What the list shows for it.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Mlp => "MLP",
            Self::Cnn => "Small CNN",
            Self::Vgg16 => "VGG16",
            Self::ResNet18 => "ResNet-18 (CIFAR)",
            Self::Torchvision(arch) => arch.title(),
        }
    }

    /// The spec of an architecture that has no parts to set in the form.
    pub(super) fn plain_spec(self) -> Option<ModelSpec> {
        match self {
            Self::Mlp | Self::Vgg16 => None,
            Self::Cnn => Some(ModelSpec::Cnn),
            Self::ResNet18 => Some(ModelSpec::ResNet18),
            Self::Torchvision(arch) => Some(arch.spec()),
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
    /// Every choice, in the order the list shows them.
    pub(super) const ALL: [Self; 3] = [Self::Scratch, Self::ImageNet, Self::File];

    /// What the list shows for it.
    pub(super) fn label(self) -> &'static str {
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

impl OptimizerKind {
    /// The spec of this kind with its defaults (written once, in `OptimizerSpec`).
    pub(super) fn defaults(self) -> OptimizerSpec {
        match self {
            Self::Sgd => OptimizerSpec::sgd(),
            Self::Adam => OptimizerSpec::adam(),
            Self::AdamW => OptimizerSpec::adamw(),
        }
    }
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
///
/// `draft` holds every setting the form sets as it is picked (the settings table's choices and
/// switches, the name, where data sets are found); `typed` holds the text of every field a
/// person types, read into the draft only when the form is checked, so a half-typed value is
/// marked where it was typed and never silently clamped. The rest are the spec choices a draft
/// cannot hold while another is picked (the folder while MNIST is chosen, the MLP's activation
/// while a CNN is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetupForm {
    /// The experiment as far as the form has set it.
    pub draft: ExperimentDraft,
    /// The text of each typed field, by its setting.
    pub typed: BTreeMap<Setting, String>,
    /// Data set choice.
    pub dataset: DatasetKind,
    /// The image folder, for [`DatasetKind::Folder`].
    pub folder: Option<PathBuf>,
    /// The CSV or JSON-lines file, for [`DatasetKind::LabelsFile`].
    pub labels_file: Option<PathBuf>,
    /// The header of the labels file's column of paths; blank finds it.
    pub path_column: String,
    /// The header of the labels file's column of labels; blank finds it.
    pub label_column: String,
    /// What parts several labels in one cell of the labels file; blank is `;`.
    pub label_separator: String,
    /// Read each image's labels as a set even where each row gives one.
    pub multi_label: bool,
    /// Architecture choice.
    pub model: ModelKind,
    /// MLP activation.
    pub activation: Activation,
    /// VGG batch norm.
    pub vgg_batch_norm: bool,
    /// Where a torchvision architecture's weights start.
    pub start_from: StartFrom,
    /// The file [`StartFrom::File`] loads.
    pub weights_file: Option<PathBuf>,
    /// Optimizer choice.
    pub optimizer: OptimizerKind,
    /// SGD Nesterov.
    pub nesterov: bool,
    /// Schedule choice.
    pub schedule: ScheduleKind,
    /// `auto`, `cpu`, `gpu:N`, a list of devices trained on together.
    pub device: String,
}

impl Default for SetupForm {
    fn default() -> Self {
        Self::from_draft(&ExperimentDraft::default())
    }
}

/// A new form, built once: the Setup panel compares every row with it on every frame.
pub(super) fn new_form() -> &'static SetupForm {
    static NEW: std::sync::OnceLock<SetupForm> = std::sync::OnceLock::new();
    NEW.get_or_init(SetupForm::default)
}

/// The settings of the specs that are typed as text, with their text in a draft that does not
/// hold them (the widths of an MLP while a CNN is chosen).
const SPEC_TEXT_DEFAULTS: &[(Setting, &str)] = &[
    (Setting::Dropout, "0"),
    (Setting::VggInputSize, ""),
    (Setting::StepEvery, "5"),
    (Setting::StepGamma, "0.1"),
    (Setting::CosineMinLr, "0"),
];

impl SetupForm {
    /// The form with `text` typed into the field of `setting`.
    pub fn with_text(mut self, setting: Setting, text: &str) -> Self {
        *self.text_mut(setting) = text.to_owned();
        self
    }

    /// The text of `setting`'s field, to type into. A form remembered before that field
    /// existed shows what a new form would.
    pub fn text_mut(&mut self, setting: Setting) -> &mut String {
        self.typed
            .entry(setting)
            .or_insert_with(|| new_form().text(setting))
    }

    /// What starting from `arch`'s weights asks of the data: ImageNet's input scaling, and the
    /// image side they were trained at where the folder's size is still a new form's.
    pub(super) fn take_pretrained_defaults(&mut self, arch: TorchvisionArch) {
        self.draft.input_scaling = kiln_core::config::InputScaling::ImageNet;
        let default = new_form().text(Setting::FolderImageSize);
        let size = self.text_mut(Setting::FolderImageSize);
        if *size == default {
            *size = arch.weights_side().to_string();
        }
    }

    /// The text of `setting`'s field as typed.
    fn text(&self, setting: Setting) -> String {
        match self.typed.get(&setting) {
            Some(text) => text.clone(),
            None => new_form().typed.get(&setting).cloned().unwrap_or_default(),
        }
    }

    /// The text a new form shows in `setting`'s field, for the optimizer chosen now (SGD's
    /// weight decay is not AdamW's).
    pub(super) fn default_text(&self, setting: Setting) -> String {
        let mut optimizer_part = None;
        optimizer_parts(&self.optimizer.defaults(), &mut |part, text| {
            if part == setting {
                optimizer_part = Some(text);
            }
        });
        optimizer_part.unwrap_or_else(|| new_form().text(setting))
    }

    /// The form showing `draft`, e.g. a preset or a past run's config.
    pub fn from_draft(draft: &ExperimentDraft) -> Self {
        let mut typed: BTreeMap<Setting, String> = numbers()
            .map(|n| (n.setting, n.show(draft)))
            .chain(
                SPEC_TEXT_DEFAULTS
                    .iter()
                    .map(|(setting, text)| (*setting, (*text).to_owned())),
            )
            .collect();
        let mut text = |setting: Setting, value: String| {
            typed.insert(setting, value);
        };
        let (mut folder, mut labels_file) = (None, None);
        let (mut path_column, mut label_column) = (String::new(), String::new());
        let (mut label_separator_text, mut multi) = (String::new(), false);
        let (dataset, folder_image_size) = match &draft.dataset {
            DatasetSpec::Synthetic => (DatasetKind::Synthetic, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::Mnist => (DatasetKind::Mnist, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::FashionMnist => (DatasetKind::FashionMnist, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::Cifar10 => (DatasetKind::Cifar10, DEFAULT_FOLDER_IMAGE_SIZE_PX),
            DatasetSpec::Folder { path, image_size } => {
                folder = Some(path.clone());
                (DatasetKind::Folder, *image_size)
            }
            DatasetSpec::LabelsFile {
                path,
                image_size,
                path_column: path_header,
                label_column: label_header,
                label_separator,
                multi_label,
            } => {
                labels_file = Some(path.clone());
                label_separator_text = label_separator.clone().unwrap_or_default();
                multi = *multi_label;
                path_column = path_header.clone().unwrap_or_default();
                label_column = label_header.clone().unwrap_or_default();
                (DatasetKind::LabelsFile, *image_size)
            }
        };
        text(Setting::FolderImageSize, folder_image_size.to_string());
        let widths = |widths: &[usize]| {
            widths
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        text(Setting::MlpWidths, widths(&DEFAULT_MLP_WIDTHS));
        let (mut model, mut activation, mut vgg_batch_norm) =
            (ModelKind::Mlp, Activation::Relu, false);
        match &draft.model {
            ModelSpec::Mlp {
                widths: w,
                activation: a,
                dropout,
            } => {
                text(Setting::MlpWidths, widths(w));
                text(Setting::Dropout, show_number(*dropout));
                activation = *a;
            }
            ModelSpec::Vgg16 {
                batch_norm,
                resize_to,
            } => {
                model = ModelKind::Vgg16;
                vgg_batch_norm = *batch_norm;
                text(
                    Setting::VggInputSize,
                    resize_to.map(|s| s.to_string()).unwrap_or_default(),
                );
            }
            plain => {
                model = ModelKind::all()
                    .into_iter()
                    .find(|kind| kind.plain_spec().as_ref() == Some(plain))
                    .unwrap_or(ModelKind::Mlp);
            }
        }
        // Every optimizer's fields start at that optimizer's defaults; the draft's fills its own.
        let (optimizer, nesterov) = optimizer_texts(&draft.optimizer, &mut text);
        let schedule = match &draft.schedule {
            Schedule::Constant => ScheduleKind::Constant,
            Schedule::Step {
                every_epochs,
                gamma,
            } => {
                text(Setting::StepEvery, every_epochs.to_string());
                text(Setting::StepGamma, show_number(*gamma));
                ScheduleKind::Step
            }
            Schedule::Cosine { min_lr } => {
                text(Setting::CosineMinLr, show_number(*min_lr));
                ScheduleKind::Cosine
            }
        };
        Self {
            draft: draft.clone(),
            typed,
            dataset,
            folder,
            labels_file,
            path_column,
            label_column,
            label_separator: label_separator_text,
            multi_label: multi,
            model,
            activation,
            vgg_batch_norm,
            start_from: match &draft.weights {
                None => StartFrom::Scratch,
                Some(WeightsSource::ImageNet) => StartFrom::ImageNet,
                Some(WeightsSource::File(_)) => StartFrom::File,
            },
            weights_file: match &draft.weights {
                Some(WeightsSource::File(file)) => Some(file.clone()),
                _ => None,
            },
            optimizer,
            nesterov,
            schedule,
            device: kiln_core::device::devices_text(&draft.devices()),
        }
    }

    /// Picks another optimizer: its own fields keep what was typed, the weight decay becomes
    /// the new one's default (AdamW's is decoupled, 0.01; the others' none).
    pub(super) fn set_optimizer(&mut self, kind: OptimizerKind) {
        if kind != self.optimizer {
            self.optimizer = kind;
            *self.text_mut(Setting::WeightDecay) = show_number(kind.defaults().weight_decay());
        }
    }

    /// Reads every field; a field that does not parse is reported against itself.
    pub(in crate::gui) fn to_draft(
        &self,
        errors: &mut BTreeMap<Setting, String>,
    ) -> ExperimentDraft {
        let mut draft = self.draft.clone();
        draft.name = draft.name.trim().to_owned();
        // Ranges are the engine's to check: the form only reads the numbers.
        for number in numbers() {
            if let Err(reason) = number.read_into(&mut draft, &self.text(number.setting)) {
                errors.insert(number.setting, reason);
            }
        }
        draft.dataset = self.dataset_spec(errors);
        draft.model = self.model_spec(errors);
        draft.weights = None;
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
        draft.optimizer = self.optimizer_spec(errors);
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

    /// A typed number of a spec; unreadable text is marked and `fallback` stands in, so the
    /// engine's own rules still run on the rest.
    fn read<T: TypedNumber>(
        &self,
        setting: Setting,
        fallback: T,
        errors: &mut BTreeMap<Setting, String>,
    ) -> T {
        T::read(&self.text(setting)).unwrap_or_else(|reason| {
            errors.insert(setting, reason);
            fallback
        })
    }

    /// The data set the form names; a folder data set needs its folder.
    fn dataset_spec(&self, errors: &mut BTreeMap<Setting, String>) -> DatasetSpec {
        match self.dataset {
            DatasetKind::Synthetic => DatasetSpec::Synthetic,
            DatasetKind::Mnist => DatasetSpec::Mnist,
            DatasetKind::FashionMnist => DatasetSpec::FashionMnist,
            DatasetKind::Cifar10 => DatasetSpec::Cifar10,
            DatasetKind::Folder => {
                let image_size = self.read(
                    Setting::FolderImageSize,
                    DEFAULT_FOLDER_IMAGE_SIZE_PX,
                    errors,
                );
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
            DatasetKind::LabelsFile => {
                let image_size = self.read(
                    Setting::FolderImageSize,
                    DEFAULT_FOLDER_IMAGE_SIZE_PX,
                    errors,
                );
                let header = |text: &str| Some(text.trim().to_owned()).filter(|t| !t.is_empty());
                match &self.labels_file {
                    Some(path) => DatasetSpec::LabelsFile {
                        path: path.clone(),
                        image_size,
                        path_column: header(&self.path_column),
                        label_column: header(&self.label_column),
                        label_separator: Some(self.label_separator.clone())
                            .filter(|s| !s.is_empty()),
                        multi_label: self.multi_label,
                    },
                    None => {
                        errors.insert(
                            Setting::Dataset,
                            "choose a CSV or JSON-lines file of image paths and labels".to_owned(),
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
                    .text(Setting::MlpWidths)
                    .split(',')
                    .map(|w| w.trim().parse::<usize>())
                    .collect();
                // A width of 0 parses: the engine refuses it, naming the layer.
                let widths = widths.unwrap_or_else(|_| {
                    errors.insert(
                        Setting::MlpWidths,
                        "hidden widths are whole numbers separated by commas, e.g. 512,512"
                            .to_owned(),
                    );
                    DEFAULT_MLP_WIDTHS.to_vec()
                });
                ModelSpec::Mlp {
                    widths,
                    activation: self.activation,
                    dropout: self.read(Setting::Dropout, 0.0, errors),
                }
            }
            ModelKind::Vgg16 => {
                let text = self.text(Setting::VggInputSize);
                let resize_to = if text.trim().is_empty() {
                    None
                } else {
                    usize::read(&text)
                        .map_err(|reason| errors.insert(Setting::VggInputSize, reason))
                        .ok()
                };
                ModelSpec::Vgg16 {
                    batch_norm: self.vgg_batch_norm,
                    resize_to,
                }
            }
            plain => plain.plain_spec().unwrap_or_default(),
        }
    }

    /// The optimizer and its parameters; unreadable numbers fall back to its defaults.
    fn optimizer_spec(&self, errors: &mut BTreeMap<Setting, String>) -> OptimizerSpec {
        let mut spec = self.optimizer.defaults();
        let weight_decay = self.read(Setting::WeightDecay, spec.weight_decay(), errors);
        match &mut spec {
            OptimizerSpec::Sgd {
                momentum, nesterov, ..
            } => {
                *momentum = self.read(Setting::Momentum, *momentum, errors);
                *nesterov = self.nesterov;
            }
            OptimizerSpec::Adam {
                beta_1,
                beta_2,
                epsilon,
                ..
            }
            | OptimizerSpec::AdamW {
                beta_1,
                beta_2,
                epsilon,
                ..
            } => {
                *beta_1 = self.read(Setting::Beta1, *beta_1, errors);
                *beta_2 = self.read(Setting::Beta2, *beta_2, errors);
                *epsilon = self.read(Setting::Epsilon, *epsilon, errors);
            }
        }
        spec.set_weight_decay(weight_decay);
        spec
    }

    /// The learning-rate schedule and its parameters.
    fn schedule_spec(&self, errors: &mut BTreeMap<Setting, String>) -> Schedule {
        match self.schedule {
            ScheduleKind::Constant => Schedule::Constant,
            ScheduleKind::Step => Schedule::Step {
                every_epochs: self.read(Setting::StepEvery, 1, errors),
                gamma: self.read(Setting::StepGamma, 0.1, errors),
            },
            ScheduleKind::Cosine => Schedule::Cosine {
                min_lr: self.read(Setting::CosineMinLr, 0.0, errors),
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

/// The optimizer fields' texts for `spec`: every optimizer's parameters at its defaults, then
/// `spec`'s own; returns its kind and Nesterov switch.
fn optimizer_texts(
    spec: &OptimizerSpec,
    text: &mut impl FnMut(Setting, String),
) -> (OptimizerKind, bool) {
    for kind in [
        OptimizerKind::Sgd,
        OptimizerKind::AdamW,
        OptimizerKind::Adam,
    ] {
        optimizer_parts(&kind.defaults(), text);
    }
    optimizer_parts(spec, text);
    match spec {
        OptimizerSpec::Sgd { nesterov, .. } => (OptimizerKind::Sgd, *nesterov),
        OptimizerSpec::Adam { .. } => (OptimizerKind::Adam, false),
        OptimizerSpec::AdamW { .. } => (OptimizerKind::AdamW, false),
    }
}

/// Writes the texts of `spec`'s own parameters.
fn optimizer_parts(spec: &OptimizerSpec, text: &mut impl FnMut(Setting, String)) {
    text(Setting::WeightDecay, show_number(spec.weight_decay()));
    match spec {
        OptimizerSpec::Sgd { momentum, .. } => text(Setting::Momentum, show_number(*momentum)),
        OptimizerSpec::Adam {
            beta_1,
            beta_2,
            epsilon,
            ..
        }
        | OptimizerSpec::AdamW {
            beta_1,
            beta_2,
            epsilon,
            ..
        } => {
            text(Setting::Beta1, show_number(*beta_1));
            text(Setting::Beta2, show_number(*beta_2));
            text(Setting::Epsilon, show_number(*epsilon));
        }
    }
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

#[cfg(test)]
mod tests;
