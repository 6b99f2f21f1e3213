//! What a batch's images truly are: one class each, or (in a multi-label set) a 0/1 row per
//! image with a column per label. Both stay on the device and are gathered with the batch's own
//! indices, so a multi-label step syncs no more than a single-label one.

use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::data::Split;

/// The truth of a batch, as the loss and the right-answer count take it.
#[derive(Debug, Clone)]
pub(crate) enum Targets {
    /// One class index per image: `[B]`.
    Classes(Tensor<1, Int>),
    /// One row per image, 1.0 where it has the label and 0.0 where not: `[B, labels]`.
    Sets(Tensor<2>),
}

impl Targets {
    /// Images in the batch.
    pub(crate) fn rows(&self) -> usize {
        match self {
            Self::Classes(classes) => classes.dims()[0],
            Self::Sets(sets) => sets.dims()[0],
        }
    }

    /// The same truth on the autodiff side of its device, as the loss of a step needs it.
    pub(crate) fn autodiff(self) -> Self {
        match self {
            Self::Classes(classes) => Self::Classes(classes.autodiff()),
            Self::Sets(sets) => Self::Sets(sets.autodiff()),
        }
    }

    /// How many images of the batch `logits` got right, as a one-value tensor on the device: an
    /// image of one class counts 1 when its top logit is that class; an image of a label set
    /// counts the share of its labels decided right at probability 0.5 (logit 0), so the sum
    /// over images divided by their count is the label accuracy, 1 − Hamming loss.
    pub(crate) fn right(&self, logits: Tensor<2>) -> Tensor<1> {
        match self {
            Self::Classes(classes) => {
                let rows = classes.dims()[0];
                logits
                    .argmax(1)
                    .reshape([rows])
                    .equal(classes.clone())
                    .int()
                    .sum()
                    .float()
            }
            Self::Sets(sets) => {
                let labels = sets.dims()[1].max(1);
                let given = logits.greater_elem(0.0);
                let has = sets.clone().greater_elem(0.5);
                given.equal(has).float().sum().div_scalar(labels as f64)
            }
        }
    }
}

/// `split`'s label sets as a `[N, labels]` 0/1 matrix on `device`, where the split has label
/// sets (a multi-label set); none where each image has one class.
pub(crate) fn label_matrix(split: &Split, labels: usize, device: &Device) -> Option<Tensor<2>> {
    if !split.is_multi_label() {
        return None;
    }
    let mut values = vec![0.0_f32; split.len() * labels];
    for (image, set) in split.label_sets.iter().enumerate() {
        for &label in set {
            if let Some(value) = values.get_mut(image * labels + usize::from(label)) {
                *value = 1.0;
            }
        }
    }
    Some(Tensor::from_data(
        TensorData::new(values, [split.len(), labels]),
        device,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(tensor: Tensor<1>) -> f32 {
        tensor.into_data().iter::<f32>().next().unwrap_or(f32::NAN)
    }

    #[test]
    fn a_label_set_counts_the_share_of_its_labels_decided_right() {
        let device = Device::flex();
        let split = Split {
            labels: vec![0, 1],
            label_sets: vec![vec![0, 2], vec![]],
            images: vec![0, 0],
            files: Vec::new(),
        };
        let sets = label_matrix(&split, 3, &device).expect("a multi-label split");
        assert_eq!(
            sets.clone().into_data().iter::<f32>().collect::<Vec<_>>(),
            [1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        );
        // Image 0: labels 0 and 1 right, 2 missed; image 1: 0 and 2 right, 1 wrongly given.
        let logits = Tensor::<2>::from_data(
            TensorData::new(vec![3.0_f32, -1.0, -0.5, -2.0, 0.5, -4.0], [2, 3]),
            &device,
        );
        let right = read(Targets::Sets(sets).right(logits));
        assert!((right - 4.0 / 3.0).abs() < 1e-6, "{right}");
    }

    #[test]
    fn a_split_of_one_class_per_image_has_no_label_matrix() {
        let split = Split {
            labels: vec![0, 1],
            images: vec![0, 0],
            ..Split::default()
        };
        assert!(label_matrix(&split, 2, &Device::flex()).is_none());
    }
}
