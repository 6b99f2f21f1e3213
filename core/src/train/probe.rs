//! A linear probe: a pretrained network's backbone frozen, its features computed once per
//! image (the pipeline keeps them on the device), and only its classifier head trained on
//! them, so an epoch costs a linear layer's steps. Batch norm statistics stay as the weights
//! had them. After `unfreeze_after` epochs, when set, the trained head goes back onto the
//! backbone and every layer trains from there.

use crate::config::{Experiment, FineTune};
use crate::model::Classifier;

/// The frozen backbone of a probing run.
pub(super) struct Probe {
    /// The whole pretrained network on the autodiff device; its own head is not used.
    backbone: Classifier,
    /// The (0-based) epoch from which every layer trains; none keeps the backbone frozen.
    unfreeze_at: Option<usize>,
}

impl Probe {
    /// The probe of `experiment` at `epoch` for `backbone`, when the run probes then.
    pub(super) fn at(experiment: &Experiment, epoch: usize, backbone: &Classifier) -> Option<Self> {
        Self::probes(experiment, epoch).then(|| Self {
            backbone: backbone.clone(),
            unfreeze_at: (experiment.unfreeze_after > 0).then_some(experiment.unfreeze_after),
        })
    }

    /// Whether `experiment` trains only the head at `epoch`.
    pub(super) fn probes(experiment: &Experiment, epoch: usize) -> bool {
        experiment.fine_tune == FineTune::LinearProbe
            && (experiment.unfreeze_after == 0 || epoch < experiment.unfreeze_after)
    }

    /// The frozen network the features are computed with.
    pub(super) fn backbone(&self) -> &Classifier {
        &self.backbone
    }

    /// Whether every layer trains from `epoch` on.
    pub(super) fn unfreezes_at(&self, epoch: usize) -> bool {
        self.unfreeze_at == Some(epoch)
    }

    /// The whole network, with `head` (a linear probe's trained head) on the backbone.
    pub(super) fn assemble(&self, head: &Classifier) -> Classifier {
        self.backbone.clone().with_head(head)
    }
}
