//! The built-in data set: ten kinds of shapes drawn on 28×28 grayscale images.
//!
//! It needs no file and no network, so a fresh install can train at once. Each image jitters
//! the shape's position (±3 px), size, stroke width and brightness and adds background and
//! pixel noise, so it cannot be learned by looking up a template, yet a small MLP learns it
//! well within a few epochs. Generation is deterministic: every run sees the same data.

use super::{ImageDataset, ImageShape, Split};

/// Side of every synthetic image.
const SIDE_PX: usize = 28;
/// Training images per class.
const TRAIN_PER_CLASS: usize = 1_200;
/// Test images per class.
const TEST_PER_CLASS: usize = 200;
const TRAIN_SEED: u64 = 0x4b49_4c4e_5452_4149; // "KILNTRAI"
const TEST_SEED: u64 = 0x4b49_4c4e_5445_5354; // "KILNTEST"

/// Class names, in label order; each is what its images show.
const CLASS_NAMES: [&str; 10] = [
    "horizontal bar",
    "vertical bar",
    "diagonal",
    "anti-diagonal",
    "ring",
    "filled square",
    "cross",
    "checker",
    "dot",
    "triangle",
];

/// SplitMix64: tiny, fast and good enough for drawing pictures.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in 0..n (n > 0); the modulo bias is irrelevant at these sizes.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Approximately standard normal: the sum of four 16-bit uniforms from one draw, rescaled.
    fn normal(&mut self) -> f32 {
        let r = self.next_u64();
        let sum = (r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48);
        // Each term has variance 1/12 after scaling to [0, 1); four have 1/3.
        (sum as f32 / 65536.0 - 2.0) * 1.732_050_8
    }
}

/// Distance from point p to the segment a–b.
fn segment_distance(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (abx, aby) = (b.0 - a.0, b.1 - a.1);
    let (apx, apy) = (p.0 - a.0, p.1 - a.1);
    let len2 = abx * abx + aby * aby;
    let t = if len2 > 0.0 {
        ((apx * abx + apy * aby) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (apx - t * abx, apy - t * aby);
    (dx * dx + dy * dy).sqrt()
}

/// The random parameters of one drawing.
struct Shape {
    class: usize,
    cx: f32,
    cy: f32,
    /// Half the shape's extent in pixels.
    half_px: f32,
    stroke_px: f32,
}

impl Shape {
    /// Coverage of the shape at pixel centre p, in [0, 1], anti-aliased over about one pixel.
    fn coverage(&self, p: (f32, f32)) -> f32 {
        let (cx, cy, s) = (self.cx, self.cy, self.half_px);
        let (dx, dy) = (p.0 - cx, p.1 - cy);
        let stroke = |d: f32| (self.stroke_px * 0.5 - d + 0.5).clamp(0.0, 1.0);
        let fill = |signed: f32| (0.5 - signed).clamp(0.0, 1.0);
        match self.class {
            0 => stroke(segment_distance(p, (cx - s, cy), (cx + s, cy))),
            1 => stroke(segment_distance(p, (cx, cy - s), (cx, cy + s))),
            2 => {
                let k = s * 0.8;
                stroke(segment_distance(p, (cx - k, cy - k), (cx + k, cy + k)))
            }
            3 => {
                let k = s * 0.8;
                stroke(segment_distance(p, (cx - k, cy + k), (cx + k, cy - k)))
            }
            4 => stroke(((dx * dx + dy * dy).sqrt() - s * 0.8).abs()),
            5 => {
                let h = s * 0.65;
                fill((dx.abs() - h).max(dy.abs() - h))
            }
            6 => {
                let h = segment_distance(p, (cx - s, cy), (cx + s, cy));
                let v = segment_distance(p, (cx, cy - s), (cx, cy + s));
                stroke(h.min(v))
            }
            7 => {
                let h = s * 0.8;
                let inside = fill((dx.abs() - h).max(dy.abs() - h));
                // A 2×2 checker board: the top-left and bottom-right quarters are lit.
                let m = dx.abs().min(dy.abs());
                let lit = if dx * dy > 0.0 {
                    (0.5 + m).min(1.0)
                } else {
                    (0.5 - m).max(0.0)
                };
                inside * lit
            }
            8 => fill((dx * dx + dy * dy).sqrt() - s * 0.45),
            _ => {
                // Upward triangle; the largest distance to its three edge lines is a signed
                // distance that is exact along the edges, which is all anti-aliasing needs.
                let a = (cx, cy - s);
                let b = (cx + s, cy + s * 0.8);
                let c = (cx - s, cy + s * 0.8);
                let edge = |u: (f32, f32), v: (f32, f32)| {
                    let (ex, ey) = (v.0 - u.0, v.1 - u.1);
                    let len = (ex * ex + ey * ey).sqrt().max(1e-6);
                    // Outward normal of a clockwise (in image coordinates) triangle.
                    ((p.0 - u.0) * ey - (p.1 - u.1) * ex) / len
                };
                fill(edge(a, b).max(edge(b, c)).max(edge(c, a)))
            }
        }
    }
}

fn draw(rng: &mut SplitMix64, class: usize, out: &mut [u8]) {
    let centre = SIDE_PX as f32 / 2.0;
    let shape = Shape {
        class,
        cx: centre + rng.range(-3.0, 3.0),
        cy: centre + rng.range(-3.0, 3.0),
        half_px: rng.range(6.0, 9.0),
        stroke_px: rng.range(2.0, 3.5),
    };
    let brightness = rng.range(0.45, 1.0);
    let background = rng.range(0.0, 0.2);
    let noise = rng.range(0.05, 0.2);
    // Every shape lies within this distance of its centre; pixels beyond it skip the geometry.
    let reach_px = shape.half_px + shape.stroke_px + 1.0;
    for (i, px) in out.iter_mut().enumerate() {
        let p = ((i % SIDE_PX) as f32 + 0.5, (i / SIDE_PX) as f32 + 0.5);
        let near = (p.0 - shape.cx).abs() <= reach_px && (p.1 - shape.cy).abs() <= reach_px;
        let coverage = if near { shape.coverage(p) } else { 0.0 };
        let v = background + brightness * coverage + noise * rng.normal();
        *px = (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    }
}

/// The generator of image `index` of a split: each image has its own stream, so images can be
/// drawn on several threads and still come out the same.
fn image_rng(seed: u64, index: usize) -> SplitMix64 {
    let mut mixer = SplitMix64(seed ^ (index as u64).wrapping_mul(0xd1b5_4a32_d192_ed03));
    SplitMix64(mixer.next_u64())
}

/// `per_class` images of each class, in a shuffled but seed-determined order.
fn generate_split(seed: u64, per_class: usize) -> Split {
    let mut rng = SplitMix64(seed);
    let n = per_class * CLASS_NAMES.len();
    let mut labels: Vec<u8> = (0..n).map(|i| (i % CLASS_NAMES.len()) as u8).collect();
    for i in (1..n).rev() {
        labels.swap(i, rng.below(i + 1));
    }
    let pixels = SIDE_PX * SIDE_PX;
    let mut images = vec![0u8; n * pixels];
    let workers = std::thread::available_parallelism()
        .map(|w| w.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let images_per_worker = n.div_ceil(workers).max(1);
    let draw_range = |first: usize, chunk: &mut [u8]| {
        for (offset, img) in chunk.chunks_exact_mut(pixels).enumerate() {
            let index = first + offset;
            let label = labels.get(index).copied().unwrap_or(0);
            draw(&mut image_rng(seed, index), usize::from(label), img);
        }
    };
    let mut spawn_failed = false;
    std::thread::scope(|s| {
        for (w, chunk) in images.chunks_mut(images_per_worker * pixels).enumerate() {
            let draw_range = &draw_range;
            let first = w * images_per_worker;
            spawn_failed |= std::thread::Builder::new()
                .name(format!("kiln-synth-{w}"))
                .spawn_scoped(s, move || draw_range(first, chunk))
                .is_err();
        }
    });
    if spawn_failed {
        // No thread to be had: draw everything here; per-image streams give the same result.
        draw_range(0, &mut images);
    }
    Split {
        images,
        labels,
        files: Vec::new(),
        label_sets: Vec::new(),
    }
}

/// The built-in synthetic data set: 10 classes of shapes, 12 000 training and 2 000 test
/// images of 28×28 grayscale, the same on every call.
pub fn synthetic() -> ImageDataset {
    ImageDataset {
        name: "Synthetic shapes".into(),
        shape: ImageShape {
            channels: 1,
            height: SIDE_PX,
            width: SIDE_PX,
        },
        class_names: CLASS_NAMES.iter().map(|s| s.to_string()).collect(),
        train: generate_split(TRAIN_SEED, TRAIN_PER_CLASS),
        val: Default::default(),
        test: generate_split(TEST_SEED, TEST_PER_CLASS),
        skipped: Vec::new(),
        notes: Vec::new(),
        sources: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accuracy of classifying `test` by the nearest class mean of `train`.
    fn nearest_mean_accuracy(ds: &ImageDataset) -> f64 {
        let px = ds.shape.pixels_per_image();
        let k = ds.num_classes();
        let mut sums = vec![0u32; k * px];
        let mut counts = vec![0u32; k];
        for (img, &l) in ds.train.images.chunks_exact(px).zip(&ds.train.labels) {
            counts[l as usize] += 1;
            for (m, &v) in sums[l as usize * px..][..px].iter_mut().zip(img) {
                *m += u32::from(v);
            }
        }
        let means: Vec<f32> = sums
            .iter()
            .enumerate()
            .map(|(i, &s)| s as f32 / counts[i / px] as f32)
            .collect();
        let mut correct = 0;
        for (img, &l) in ds.test.images.chunks_exact(px).zip(&ds.test.labels) {
            let dist: Vec<f32> = means
                .chunks_exact(px)
                .map(|m| {
                    m.iter()
                        .zip(img)
                        .map(|(m, &v)| (m - f32::from(v)).powi(2))
                        .sum()
                })
                .collect();
            let best = (0..k).min_by(|&a, &b| dist[a].total_cmp(&dist[b])).unwrap();
            correct += usize::from(best == l as usize);
        }
        correct as f64 / ds.test.len() as f64
    }

    #[test]
    fn synthetic_shape_balance_determinism_and_difficulty() {
        let a = synthetic();
        assert_eq!(
            a.shape,
            ImageShape {
                channels: 1,
                height: 28,
                width: 28
            }
        );
        assert_eq!(a.num_classes(), 10);
        assert_eq!(a.train.len(), 12_000);
        assert_eq!(a.test.len(), 2_000);
        assert_eq!(a.train.images.len(), 12_000 * 784);
        assert_eq!(a.test.images.len(), 2_000 * 784);
        for (split, per_class) in [(&a.train, 1_200), (&a.test, 200)] {
            let mut counts = [0usize; 10];
            split.labels.iter().for_each(|&l| counts[l as usize] += 1);
            assert_eq!(counts, [per_class; 10]);
        }
        // Same data on every call, whatever the number of threads: redraw the test split
        // (cheaper than the whole set) and compare.
        let again = generate_split(TEST_SEED, TEST_PER_CLASS);
        assert_eq!(a.test.images, again.images);
        assert_eq!(a.test.labels, again.labels);
        let mut one_thread = vec![0u8; 784];
        draw(
            &mut image_rng(TEST_SEED, 7),
            usize::from(a.test.labels[7]),
            &mut one_thread,
        );
        assert_eq!(one_thread, a.test.images[7 * 784..8 * 784]);
        assert_ne!(a.train.images[..784 * 100], a.test.images[..784 * 100]);
        // Learnable, yet not solvable by template matching.
        let acc = nearest_mean_accuracy(&a);
        assert!(acc > 0.70 && acc < 1.0, "nearest-class-mean accuracy {acc}");
    }
}
