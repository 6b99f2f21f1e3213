//! A look at a data set before training, as `kiln data inspect` and the window's Data view show
//! it: images per class in each split, the image shape and the sizes and colour modes of the
//! files it was read from, files that were left out, images found in more than one split (a
//! leak nobody sees otherwise), and a grid of samples per class.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use super::{ImageDataset, SkippedFile, SourceFormat, Split};

/// The splits in the order every report lists them.
pub const SPLIT_NAMES: [&str; 3] = ["train", "validation", "test"];

/// What a data set holds, split by split.
#[derive(Debug, Clone, PartialEq)]
pub struct DataReport {
    /// The data set's name.
    pub name: String,
    /// Channels, height and width of every image (after resizing, for a folder).
    pub shape: [usize; 3],
    /// One name per class.
    pub class_names: Vec<String>,
    /// Images per class in the training, validation and test splits (per label, in a
    /// multi-label set: an image counts once for each label it has).
    pub counts: [Vec<usize>; 3],
    /// Images in the training, validation and test splits.
    pub images: [usize; 3],
    /// Files left out of every split, with their reasons.
    pub skipped: Vec<SkippedFile>,
    /// Sentences about the source as a whole (a labels file's numeric labels, say).
    pub notes: Vec<String>,
    /// The sizes and colour modes of the files read, most common first (empty: not known).
    pub sources: Vec<SourceFormat>,
    /// Images with identical pixels in more than one split.
    pub duplicates: Vec<Duplicate>,
    /// For a multi-label set (its `counts` are then images per label), how labels go together.
    pub label_sets: Option<LabelSets>,
}

/// A label with fewer training images than this is named as too few to learn from.
pub const FEW_POSITIVES: usize = 10;

/// How the labels of a multi-label set's training images go together.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelSets {
    /// Training images by how many labels they have: `[with none, with one, with two, …]`.
    pub by_label_count: Vec<usize>,
    /// `together[a][b]`: training images with both label a and label b (the diagonal: with a).
    pub together: Vec<Vec<usize>>,
}

impl LabelSets {
    /// The sets of the training split `train` of a set with `classes` labels.
    fn of(train: &Split, classes: usize) -> Self {
        let mut by_label_count = Vec::new();
        let mut together = vec![vec![0; classes]; classes];
        for set in &train.label_sets {
            if by_label_count.len() <= set.len() {
                by_label_count.resize(set.len() + 1, 0);
            }
            by_label_count[set.len()] += 1;
            for &a in set {
                for &b in set {
                    if let Some(cell) = together
                        .get_mut(usize::from(a))
                        .and_then(|row| row.get_mut(usize::from(b)))
                    {
                        *cell += 1;
                    }
                }
            }
        }
        LabelSets {
            by_label_count,
            together,
        }
    }

    /// The `most` pairs of labels found together most often, as (a, b, images), a before b.
    pub fn top_pairs(&self, most: usize) -> Vec<(usize, usize, usize)> {
        let mut pairs: Vec<(usize, usize, usize)> = (0..self.together.len())
            .flat_map(|a| (a + 1..self.together.len()).map(move |b| (a, b)))
            .map(|(a, b)| (a, b, self.together[a][b]))
            .filter(|&(_, _, n)| n > 0)
            .collect();
        pairs.sort_by(|x, y| y.2.cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
        pairs.truncate(most);
        pairs
    }
}

/// One image that appears, pixel for pixel, in more than one split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// Every place it appears, in split order.
    pub places: Vec<Place>,
}

/// Where one copy of an image is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// The split, an index into [`SPLIT_NAMES`].
    pub split: usize,
    /// The image's position in that split.
    pub index: usize,
    /// The file it was read from, where the data set names one (a folder of images).
    pub file: Option<PathBuf>,
}

impl Duplicate {
    /// Its places in a line a person can act on: the files where the data set names them
    /// ("train: …/cat/a.png = test: …/cat/a copy.png"), else positions ("train #3 = test #0").
    pub fn describe(&self) -> String {
        let places: Vec<String> = self
            .places
            .iter()
            .map(|place| match &place.file {
                Some(file) => format!("{}: {}", SPLIT_NAMES[place.split], file.display()),
                None => format!("{} #{}", SPLIT_NAMES[place.split], place.index),
            })
            .collect();
        places.join(" = ")
    }
}

impl DataReport {
    /// The files' sizes and colour modes in a line: "12 × 640×480 RGB, 3 × 1024×768 RGBA";
    /// past `most` formats, how many more there are. `None` when the source does not say.
    pub fn sources_line(&self, most: usize) -> Option<String> {
        if self.sources.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = self
            .sources
            .iter()
            .take(most)
            .map(|s| format!("{} × {}×{} {}", s.files, s.width, s.height, s.colour))
            .collect();
        let rest: usize = self.sources.iter().skip(most).map(|s| s.files).sum();
        if rest > 0 {
            let kinds = self.sources.len() - most;
            parts.push(format!("{rest} more in {kinds} other size(s) or mode(s)"));
        }
        Some(parts.join(", "))
    }

    /// Sentences on a multi-label set: labels per image, the labels found together most often,
    /// and each label too few training images have to learn it; empty for one label per image.
    pub fn label_set_lines(&self) -> Vec<String> {
        let Some(sets) = &self.label_sets else {
            return Vec::new();
        };
        let images: usize = sets.by_label_count.iter().sum();
        let labels: usize = sets
            .by_label_count
            .iter()
            .enumerate()
            .map(|(count, images)| count * images)
            .sum();
        let none = sets.by_label_count.first().copied().unwrap_or(0);
        let mut lines = vec![format!(
            "several labels per image: {:.2} labels per training image on average, {none} of {images} with none",
            labels as f64 / images.max(1) as f64
        )];
        let name = |i: usize| self.class_names.get(i).map_or("?", String::as_str);
        for (a, b, n) in sets.top_pairs(5) {
            let share = |label: usize| 100.0 * n as f64 / sets.together[label][label].max(1) as f64;
            lines.push(format!(
                "`{}` and `{}` together on {n} training images ({:.0} % of `{}`'s, {:.0} % of `{}`'s)",
                name(a),
                name(b),
                share(a),
                name(a),
                share(b),
                name(b)
            ));
        }
        for (label, &count) in self.counts[0].iter().enumerate() {
            if count < FEW_POSITIVES {
                lines.push(format!(
                    "warning: `{}` is on {count} training image(s), too few to learn it (aim for {FEW_POSITIVES} or more), and its scores will be noise",
                    name(label)
                ));
            }
        }
        lines
    }

    /// The training images of the largest class over those of the smallest (∞ when a class
    /// has none).
    pub fn imbalance(&self) -> f64 {
        let train = &self.counts[0];
        let largest = train.iter().copied().max().unwrap_or(0);
        let smallest = train.iter().copied().min().unwrap_or(0);
        largest as f64 / smallest as f64
    }
}

/// The report of `data`, split as a run would split it.
pub fn inspect(data: &ImageDataset) -> DataReport {
    let splits = [&data.train, &data.val, &data.test];
    let classes = data.num_classes();
    // A multi-label set counts an image once for each of its labels.
    let counts = splits.map(|split| split.label_counts(classes));
    DataReport {
        name: data.name.clone(),
        shape: data.shape.chw(),
        class_names: data.class_names.clone(),
        counts,
        images: splits.map(Split::len),
        skipped: data.skipped.clone(),
        notes: data.notes.clone(),
        sources: data.sources.clone(),
        duplicates: duplicates_across(&splits, data.shape.pixels_per_image()),
        label_sets: data
            .is_multi_label()
            .then(|| LabelSets::of(&data.train, classes)),
    }
}

/// Images whose pixels are equal in two or more splits; hashed first, then compared byte for
/// byte, so a hash collision never reports a leak that is not there.
fn duplicates_across(splits: &[&Split; 3], per_image: usize) -> Vec<Duplicate> {
    let image = |split: usize, index: usize| splits[split].image(index, per_image);
    let mut by_hash: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (split, content) in splits.iter().enumerate() {
        for index in 0..content.len() {
            let mut hasher = DefaultHasher::new();
            image(split, index).hash(&mut hasher);
            by_hash
                .entry(hasher.finish())
                .or_default()
                .push((split, index));
        }
    }
    let mut found = Vec::new();
    for places in by_hash.into_values() {
        let mut rest = places;
        while let Some(&first) = rest.first() {
            let (same, other): (Vec<_>, Vec<_>) = rest
                .into_iter()
                .partition(|&(s, i)| image(s, i) == image(first.0, first.1));
            rest = other;
            if same.iter().any(|&(s, _)| s != first.0) {
                let places = same
                    .into_iter()
                    .map(|(split, index)| Place {
                        split,
                        index,
                        file: splits[split].file(index).map(|f| f.to_owned()),
                    })
                    .collect();
                found.push(Duplicate { places });
            }
        }
    }
    found.sort_by(|a, b| a.places.cmp(&b.places));
    found
}

/// Up to `per_class` training images of each class, one row per class, as RGBA pixels of a
/// `(per_class × side) × (classes × side)` image with a one-pixel gap; returns it with its
/// width and height.
pub fn sample_grid(data: &ImageDataset, per_class: usize) -> (Vec<u8>, usize, usize) {
    let [channels, height, width] = data.shape.chw();
    let per_image = channels * height * width;
    let (cell_w, cell_h) = (width + 1, height + 1);
    let classes = data.num_classes();
    let (grid_w, grid_h) = (per_class * cell_w, classes * cell_h);
    let mut rgba = vec![0u8; grid_w * grid_h * 4];
    let mut shown = vec![0usize; classes];
    for (index, &label) in data.train.labels.iter().enumerate() {
        let class = usize::from(label);
        let Some(column) = shown.get_mut(class).filter(|n| **n < per_class) else {
            continue;
        };
        let pixels = data.train.image(index, per_image);
        let image = crate::pixels::planar_to_rgba(data.shape.chw(), pixels);
        for y in 0..height {
            let row = (class * cell_h + y) * grid_w + *column * cell_w;
            let target = rgba.get_mut(row * 4..(row + width) * 4);
            if let (Some(target), Some(source)) =
                (target, image.get(y * width * 4..(y + 1) * width * 4))
            {
                target.copy_from_slice(source);
            }
        }
        *column += 1;
    }
    (rgba, grid_w, grid_h)
}

/// The bytes of up to `count` training images, one per class in turn (the first image of each
/// class, then the second, …), so a preview shows every class before it shows one twice.
pub fn preview_images(data: &ImageDataset, count: usize) -> Vec<u8> {
    let per_image = data.shape.pixels_per_image();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); data.num_classes()];
    for (index, &label) in data.train.labels.iter().enumerate() {
        if let Some(list) = by_class.get_mut(usize::from(label)) {
            list.push(index);
        }
    }
    let deepest = by_class.iter().map(Vec::len).max().unwrap_or(0);
    (0..deepest)
        .flat_map(|rank| {
            by_class
                .iter()
                .filter_map(move |list| list.get(rank).copied())
        })
        .take(count)
        .flat_map(|index| data.train.image(index, per_image).iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ImageShape;

    fn split(pixels: &[u8], labels: &[u8]) -> Split {
        Split {
            images: pixels.to_vec(),
            labels: labels.to_vec(),
            files: Vec::new(),
            label_sets: Vec::new(),
        }
    }

    fn dataset() -> ImageDataset {
        ImageDataset {
            name: "dots".into(),
            shape: ImageShape {
                channels: 1,
                height: 1,
                width: 2,
            },
            class_names: vec!["a".into(), "b".into()],
            // Image [7, 7] is in train twice and once in test; [1, 2] in train and validation.
            train: split(&[7, 7, 1, 2, 7, 7, 3, 3, 4, 4], &[0, 1, 0, 1, 1]),
            val: split(&[1, 2], &[1]),
            test: split(&[9, 9, 7, 7], &[0, 0]),
            skipped: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
        }
    }

    fn duplicate(places: &[(usize, usize)]) -> Duplicate {
        Duplicate {
            places: places
                .iter()
                .map(|&(split, index)| Place {
                    split,
                    index,
                    file: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_report_counts_each_class_in_each_split_and_finds_leaks_across_splits() {
        let report = inspect(&dataset());
        assert_eq!(report.counts, [vec![2, 3], vec![0, 1], vec![2, 0]]);
        assert_eq!(report.shape, [1, 1, 2]);
        assert_eq!(
            report.duplicates,
            vec![
                duplicate(&[(0, 0), (0, 2), (2, 1)]),
                duplicate(&[(0, 1), (1, 0)]),
            ]
        );
        assert_eq!(report.duplicates[1].describe(), "train #1 = validation #0");
        assert!((report.imbalance() - 1.5).abs() < 1e-9);
    }

    #[test]
    fn the_preview_takes_one_image_per_class_in_turn() {
        // Train labels a, b, a, b, b: a's images are [7, 7], [7, 7]; b's [1, 2], [3, 3], [4, 4].
        assert_eq!(preview_images(&dataset(), 3), vec![7, 7, 1, 2, 7, 7]);
        assert_eq!(preview_images(&dataset(), 9).len(), 10);
    }

    #[test]
    fn the_sample_grid_has_one_row_per_class_and_leaves_missing_cells_black() {
        let (rgba, width, height) = sample_grid(&dataset(), 3);
        // Cells of 2×1 pixels plus a one-pixel gap: 3 columns of 3, 2 rows of 2.
        assert_eq!((width, height), (9, 4));
        let pixel = |x: usize, y: usize| rgba[(y * width + x) * 4];
        // Class a: [7, 7] twice, then nothing; class b: [1, 2], [3, 3], [4, 4].
        assert_eq!(
            [pixel(0, 0), pixel(1, 0), pixel(3, 0), pixel(6, 0)],
            [7, 7, 7, 0]
        );
        assert_eq!(
            [pixel(0, 2), pixel(1, 2), pixel(3, 2), pixel(6, 2)],
            [1, 2, 3, 4]
        );
        assert_eq!(rgba[3], 255, "drawn cells are opaque");
    }
}
