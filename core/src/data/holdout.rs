//! The three splits of a run. A data set that brings its own validation or test split (MNIST's
//! t10k files, an image folder's `val/` and `test/`) is used as given; what is missing is carved
//! from the training images, stratified by class so each split has the classes in the same
//! proportions (in a multi-label set, by every label at once: iterative stratification), and
//! seeded so the same run carves the same images.
//!
//! The test split of a flat folder is carved with a fixed seed, so every run of that folder,
//! whatever its seed, is tested on the same images and their test figures compare.

use super::{ImageDataset, Split};
use crate::config::{ConfigError, Experiment, Setting, Validation, invalid};
use crate::shuffle::ShuffleRng;

/// Seed of every carved test split: fixed, so runs of one folder share a test set.
const TEST_SPLIT_SEED: u64 = 0x7E57_5EED;

/// The data a run trains, validates and tests on, as `experiment` asks.
pub fn make_splits(
    mut data: ImageDataset,
    experiment: &Experiment,
) -> Result<ImageDataset, ConfigError> {
    if data.test.is_empty() {
        data.test = carve_some(
            &mut data,
            (Setting::TestSplit, experiment.test_split),
            TEST_SPLIT_SEED,
            "testing; add images, raise test_split, or add a test/ sub-folder",
        )?;
    }
    match experiment.validation {
        // The test split is what each epoch is evaluated on; a given validation split is unused.
        Validation::Test => data.val = Split::default(),
        Validation::Split if data.val.is_empty() && experiment.val_split > 0.0 => {
            data.val = carve_some(
                &mut data,
                (Setting::ValSplit, experiment.val_split),
                experiment.seed,
                "validation; raise val_split, or set it to 0 to train without validation",
            )?;
        }
        Validation::Split => {}
    }
    Ok(data)
}

/// Carves the `fraction` that `setting` asks for from `data`'s training split, refusing with
/// a sentence ending in `for_what` when not a single image would be held out.
fn carve_some(
    data: &mut ImageDataset,
    (setting, fraction): (Setting, f64),
    seed: u64,
    for_what: &str,
) -> Result<Split, ConfigError> {
    let (per_image, classes) = (data.shape.pixels_per_image(), data.num_classes());
    let carved = carve(&mut data.train, per_image, classes, fraction, seed);
    if carved.is_empty() {
        return Err(invalid(
            setting,
            fraction,
            format!("leaves no image of {} for {for_what}", data.name),
        ));
    }
    Ok(carved)
}

/// Moves `fraction` of each class of `from` (rounded, at least one image staying behind) into
/// the split returned; both keep their images' original order. In a multi-label set each
/// label's images are shared out so (as near as whole images allow) `fraction` of them move.
pub fn carve(
    from: &mut Split,
    pixels_per_image: usize,
    num_classes: usize,
    fraction: f64,
    seed: u64,
) -> Split {
    let held = match from.is_multi_label() {
        true => held_out_by_label(&from.label_sets, fraction, seed),
        false => held_out_by_class(&from.labels, num_classes, fraction, seed),
    };
    let mut kept = Split::default();
    let mut carved = Split::default();
    for (index, (&label, &is_held)) in from.labels.iter().zip(&held).enumerate() {
        let target = if is_held { &mut carved } else { &mut kept };
        target.labels.push(label);
        target
            .images
            .extend_from_slice(from.image(index, pixels_per_image));
        if let Some(file) = from.file(index) {
            target.files.push(file.to_owned());
        }
        if let Some(set) = from.label_sets.get(index) {
            target.label_sets.push(set.clone());
        }
    }
    *from = kept;
    carved
}

/// Which images of one class per image (`labels`) to hold out: `fraction` of each class,
/// rounded, at least one image of it staying behind, picked by a seeded partial shuffle.
fn held_out_by_class(labels: &[u8], num_classes: usize, fraction: f64, seed: u64) -> Vec<bool> {
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); num_classes.max(1)];
    for (index, &label) in labels.iter().enumerate() {
        if let Some(members) = by_class.get_mut(usize::from(label)) {
            members.push(index);
        }
    }
    let mut held = vec![false; labels.len()];
    for (class, members) in by_class.iter_mut().enumerate() {
        let count = members.len();
        let take = ((count as f64 * fraction).round() as usize).min(count.saturating_sub(1));
        // A partial Fisher–Yates shuffle picks `take` members, as likely as any other choice.
        let mut rng = ShuffleRng(seed ^ (class as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F));
        for i in 0..take {
            let j = i + (rng.next() % (count - i) as u64) as usize;
            members.swap(i, j);
            held[members[i]] = true;
        }
    }
    held
}

/// Which images of a multi-label set (`sets`, each image's labels) to hold out, by iterative
/// stratification (Sechidis, Tsoumakas and Vlahavas, 2011): the label with the fewest images
/// not yet placed goes first, each of its images to the side (held out or kept) that still
/// wants most of that label, then most images; images without a label fill the sides last.
/// Each side wants its share of each label's images, so a rare label is split as a common one
/// is, which stratifying by each image's first label does not do. Seeded through the order the
/// images are visited in.
fn held_out_by_label(sets: &[Vec<u8>], fraction: f64, seed: u64) -> Vec<bool> {
    let mut wants = Wants::new(sets, fraction);
    let mut order: Vec<usize> = (0..sets.len()).collect();
    let mut rng = ShuffleRng(seed ^ 0x5EC1_D15A_57A7_1F1E);
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let mut side: Vec<Option<usize>> = vec![None; sets.len()];
    while let Some(label) = wants.rarest_unplaced() {
        for &image in &order {
            if side[image].is_none() && sets[image].contains(&(label as u8)) {
                let to = wants.side_for(Some(label));
                wants.place(&sets[image], to);
                side[image] = Some(to);
            }
        }
    }
    for &image in &order {
        if side[image].is_none() {
            let to = wants.side_for(None);
            wants.place(&sets[image], to);
            side[image] = Some(to);
        }
    }
    let mut held: Vec<bool> = side.iter().map(|s| *s == Some(0)).collect();
    // At least one image stays behind to train on.
    if let Some(&first) = order.first()
        && held.iter().all(|&h| h)
    {
        held[first] = false;
    }
    held
}

/// What each side of a multi-label holdout (0 held out, 1 kept) still wants: images, and
/// images of each label; and each label's images not placed yet.
struct Wants {
    images: [f64; 2],
    labels: Vec<[f64; 2]>,
    unplaced: Vec<usize>,
}

impl Wants {
    /// Each side's share of `sets`' images and of each label's, `fraction` held out.
    fn new(sets: &[Vec<u8>], fraction: f64) -> Self {
        let labels = sets
            .iter()
            .flatten()
            .map(|&l| usize::from(l) + 1)
            .max()
            .unwrap_or(0);
        let mut unplaced = vec![0usize; labels];
        for &label in sets.iter().flatten() {
            unplaced[usize::from(label)] += 1;
        }
        let shares = [fraction, 1.0 - fraction];
        Self {
            images: shares.map(|share| share * sets.len() as f64),
            labels: unplaced
                .iter()
                .map(|&n| shares.map(|share| share * n as f64))
                .collect(),
            unplaced,
        }
    }

    /// The label with the fewest images not placed yet (the lowest such label of equals).
    fn rarest_unplaced(&self) -> Option<usize> {
        (0..self.unplaced.len())
            .filter(|&l| self.unplaced[l] > 0)
            .min_by_key(|&l| (self.unplaced[l], l))
    }

    /// The side an image of `label` goes to: the one wanting more of the label, then more
    /// images, then the kept side.
    fn side_for(&self, label: Option<usize>) -> usize {
        let by_images = usize::from(self.images[0] <= self.images[1]);
        match label.and_then(|l| self.labels.get(l)) {
            Some([held, kept]) => match held.total_cmp(kept) {
                std::cmp::Ordering::Greater => 0,
                std::cmp::Ordering::Less => 1,
                std::cmp::Ordering::Equal => by_images,
            },
            None => by_images,
        }
    }

    /// Counts an image of labels `set` as placed on side `to`.
    fn place(&mut self, set: &[u8], to: usize) {
        self.images[to] -= 1.0;
        for &label in set {
            let label = usize::from(label);
            self.labels[label][to] -= 1.0;
            self.unplaced[label] -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExperimentDraft;
    use crate::data::ImageShape;

    /// `counts[c]` one-pixel images of class c, each image's pixel its index.
    fn split(counts: &[usize]) -> Split {
        let labels: Vec<u8> = counts
            .iter()
            .enumerate()
            .flat_map(|(c, &n)| std::iter::repeat_n(c as u8, n))
            .collect();
        Split {
            images: (0..labels.len()).map(|i| i as u8).collect(),
            labels,
            files: Vec::new(),
            label_sets: Vec::new(),
        }
    }

    fn count(labels: &[u8], class: u8) -> usize {
        labels.iter().filter(|&&l| l == class).count()
    }

    #[test]
    fn a_carved_split_is_stratified_seeded_and_keeps_every_image_once() {
        let mut train = split(&[100, 50, 10]);
        let val = carve(&mut train, 1, 3, 0.1, 7);
        assert_eq!([0, 1, 2].map(|c| count(&val.labels, c)), [10, 5, 1]);
        assert_eq!(train.len() + val.len(), 160);
        let mut pixels: Vec<u8> = train.images.iter().chain(&val.images).copied().collect();
        pixels.sort_unstable();
        assert_eq!(pixels, (0..160).map(|i| i as u8).collect::<Vec<_>>());
        // Each image keeps its label: pixel i was made with class of position i.
        let whole = split(&[100, 50, 10]);
        for (pixel, label) in val.images.iter().zip(&val.labels) {
            assert_eq!(whole.labels[usize::from(*pixel)], *label);
        }
        let mut again = split(&[100, 50, 10]);
        assert_eq!(carve(&mut again, 1, 3, 0.1, 7).images, val.images);
        let mut other = split(&[100, 50, 10]);
        assert_ne!(carve(&mut other, 1, 3, 0.1, 8).images, val.images);
    }

    #[test]
    fn a_carved_image_takes_its_label_set_along() {
        let mut whole = split(&[10, 10]);
        // Each image's set names its pixel (its index) and its class, so a moved set is seen.
        whole.label_sets = (0..20u8).map(|i| vec![i % 2, 10 + i]).collect();
        let held = carve(&mut whole, 1, 2, 0.3, 7);
        for part in [&whole, &held] {
            assert_eq!(part.label_sets.len(), part.len());
            for (pixel, set) in part.images.iter().zip(&part.label_sets) {
                assert_eq!(set[1], 10 + pixel);
            }
        }
    }

    #[test]
    fn a_multi_label_set_is_carved_so_every_label_even_a_rare_one_keeps_its_share() {
        // Every image has label 0 first, so stratifying by the first label is no stratifying.
        let mut rng = ShuffleRng(5);
        let sets: Vec<Vec<u8>> = (0..200)
            .map(|i| {
                let mut set = vec![0u8];
                if rng.next().is_multiple_of(2) {
                    set.push(1);
                }
                if i % 20 == 3 {
                    set.push(2);
                }
                set
            })
            .collect();
        let counts =
            |sets: &[Vec<u8>], label: u8| sets.iter().filter(|s| s.contains(&label)).count();
        for seed in 0..6 {
            let mut whole = split(&[200]);
            whole.label_sets = sets.clone();
            let held = carve(&mut whole, 1, 3, 0.1, seed);
            for label in 0..3u8 {
                let share = 0.1 * counts(&sets, label) as f64;
                let got = counts(&held.label_sets, label) as f64;
                assert!(
                    (got - share).abs() <= 1.0,
                    "seed {seed}, label {label}: {got} held of a share of {share}"
                );
            }
            assert_eq!(held.len() + whole.len(), 200);
            assert!((held.len() as f64 - 20.0).abs() <= 1.0, "{}", held.len());
        }
        // The rare label (10 images): exactly one held out, whatever the seed.
        let mut whole = split(&[200]);
        whole.label_sets = sets.clone();
        let held = carve(&mut whole, 1, 3, 0.1, 9);
        assert_eq!(counts(&held.label_sets, 2), 1);
        let mut again = split(&[200]);
        again.label_sets = sets;
        assert_eq!(carve(&mut again, 1, 3, 0.1, 9).images, held.images);
    }

    #[test]
    fn a_class_of_one_image_stays_in_training() {
        let mut train = split(&[1, 4]);
        let held = carve(&mut train, 1, 2, 0.5, 1);
        assert_eq!(held.labels, vec![1, 1]);
        assert_eq!(train.labels, vec![0, 1, 1]);
    }

    fn dataset(train: Split, test: Split) -> ImageDataset {
        ImageDataset {
            name: "dots".into(),
            shape: ImageShape {
                channels: 1,
                height: 1,
                width: 1,
            },
            class_names: vec!["a".into(), "b".into()],
            train,
            val: Split::default(),
            test,
            skipped: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
        }
    }

    #[test]
    fn a_flat_folder_gets_a_test_split_that_does_not_depend_on_the_seed() {
        let mut draft = ExperimentDraft::default();
        let first = make_splits(
            dataset(split(&[20, 20]), Split::default()),
            &draft.clone().validate().unwrap(),
        )
        .unwrap();
        assert_eq!(
            (first.train.len(), first.val.len(), first.test.len()),
            (28, 4, 8)
        );
        draft.seed = 99;
        let other = make_splits(
            dataset(split(&[20, 20]), Split::default()),
            &draft.validate().unwrap(),
        )
        .unwrap();
        assert_eq!(first.test.images, other.test.images);
        assert_ne!(first.val.images, other.val.images);
    }

    #[test]
    fn validated_on_test_or_without_validation_carves_nothing_from_training() {
        let mut draft = ExperimentDraft {
            validation: Validation::Test,
            ..ExperimentDraft::default()
        };
        let data = make_splits(
            dataset(split(&[5, 5]), split(&[2, 2])),
            &draft.clone().validate().unwrap(),
        )
        .unwrap();
        assert_eq!((data.train.len(), data.val.len()), (10, 0));
        draft.validation = Validation::Split;
        draft.val_split = 0.0;
        let data = make_splits(
            dataset(split(&[5, 5]), split(&[2, 2])),
            &draft.validate().unwrap(),
        )
        .unwrap();
        assert_eq!((data.train.len(), data.val.len()), (10, 0));
    }

    #[test]
    fn a_split_too_small_to_hold_an_image_is_refused_with_what_to_do() {
        let draft = ExperimentDraft::default();
        let err = make_splits(
            dataset(split(&[2, 2]), split(&[1, 1])),
            &draft.validate().unwrap(),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("val_split = 0.1: leaves no image of dots"),
            "{text}"
        );
        assert!(matches!(
            err,
            ConfigError::Invalid {
                field: Setting::ValSplit,
                ..
            }
        ));
    }
}
