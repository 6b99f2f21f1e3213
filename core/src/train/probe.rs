//! A linear probe: a pretrained network's backbone frozen, its features computed once per
//! image (the pipeline keeps them on the device), and only its classifier head trained on
//! them, so an epoch costs a linear layer's steps. Batch norm statistics stay as the weights
//! had them. After `unfreeze_after` epochs, when set, the trained head goes back onto the
//! backbone and every layer trains from there.

use crate::config::{Experiment, FineTune};
use crate::model::Classifier;

/// Whether a run of `experiment` that resumes after `resumes_after` epochs (none: a new run)
/// loads its pretrained weights file: a new run does, and a probing one, whose checkpoint holds
/// the head only; any other resumed run has them in its checkpoint.
pub(crate) fn loads_pretrained(experiment: &Experiment, resumes_after: Option<usize>) -> bool {
    experiment.weights.is_some()
        && (resumes_after.is_none()
            || Probe::probes(experiment, Probe::starting_epoch(resumes_after)))
}

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

    /// The (0-based) epoch whose network a launch starts from: the first for a new run, and
    /// for a resumed one the last epoch its checkpoint completed, whose network (a probe's
    /// head, or the whole) the checkpoint holds, even when the next epoch unfreezes.
    pub(super) fn starting_epoch(resumes_after: Option<usize>) -> usize {
        resumes_after.map_or(0, |completed| completed.saturating_sub(1))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::model::ModelSpec;
    use crate::weights::WeightsSource;

    #[test]
    fn a_run_resumed_where_it_unfreezes_starts_from_the_probes_head() {
        let experiment = ExperimentDraft {
            model: ModelSpec::ResNet18ImageNet,
            weights: Some(WeightsSource::ImageNet),
            fine_tune: FineTune::LinearProbe,
            unfreeze_after: 2,
            epochs: 4,
            ..ExperimentDraft::default()
        }
        .validate()
        .expect("a valid draft");
        let probes_from =
            |resumes_after| Probe::probes(&experiment, Probe::starting_epoch(resumes_after));
        assert!(probes_from(None), "a new run starts with the head");
        assert!(probes_from(Some(1)));
        // Two probe epochs done: the checkpoint holds a head, though epoch 3 trains everything.
        assert!(probes_from(Some(2)));
        assert!(
            !probes_from(Some(3)),
            "after an unfrozen epoch the checkpoint is the whole network"
        );
    }

    #[test]
    fn a_resumed_run_needs_its_weights_file_only_while_its_checkpoint_holds_a_head() {
        let fine_tuned = ExperimentDraft {
            model: ModelSpec::ResNet18ImageNet,
            weights: Some(WeightsSource::File("gone.safetensors".into())),
            epochs: 4,
            ..ExperimentDraft::default()
        };
        let probing = ExperimentDraft {
            fine_tune: FineTune::LinearProbe,
            unfreeze_after: 2,
            ..fine_tuned.clone()
        };
        let (fine_tuned, probing) = (fine_tuned.validate().unwrap(), probing.validate().unwrap());
        assert!(
            loads_pretrained(&fine_tuned, None),
            "a new run starts from them"
        );
        // A file moved away (or a page's chosen file gone with a reload) must not stop a resume
        // whose checkpoint holds the whole network; it did.
        assert!(!loads_pretrained(&fine_tuned, Some(2)));
        assert!(
            loads_pretrained(&probing, Some(2)),
            "the checkpoint holds the head"
        );
        assert!(!loads_pretrained(&probing, Some(3)));
        let from_scratch = ExperimentDraft::default().validate().unwrap();
        assert!(!loads_pretrained(&from_scratch, None));
    }
}
