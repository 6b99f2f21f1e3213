//! Plain-Rust host loops that define what a batch is. The kernel and the tensor-op path are both
//! tested against these, so every rule of the pipeline is spelled out once, here.

use crate::batch::{BatchOptions, ImageShape, SampleChoice};

/// Where bilinear resampling reads for one output coordinate: two source taps and the weight of
/// the second one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taps {
    /// The lower source coordinate.
    pub first: usize,
    /// The upper source coordinate (equal to `first` at the last row or column).
    pub second: usize,
    /// Weight of `second`; `first` gets `1 - lambda`.
    pub lambda: f32,
}

/// Source taps of output coordinate `out` when `input` samples are resized to `output`.
///
/// PyTorch's `F.interpolate(mode="bilinear", align_corners=False)` without `scale_factor`: the
/// scale is `input / output` in f32, the source coordinate `(out + 0.5) * scale - 0.5` clamped at
/// 0, the taps its floor and the next sample (the last one repeats), the weight its fraction.
pub fn source_taps(input: usize, output: usize, out: usize) -> Taps {
    let scale = input as f32 / output as f32;
    let real = (scale * (out as f32 + 0.5) - 0.5).max(0.0);
    // Truncation is the floor here: `real` is never negative.
    let first = (real as usize).min(input.saturating_sub(1));
    let lambda = real - first as f32;
    let second = if first + 1 < input { first + 1 } else { first };
    Taps {
        first,
        second,
        lambda,
    }
}

/// The byte at row `y`, column `x` of the crop window of one image plane, zero in the padding.
///
/// `(y, x)` are crop coordinates; the window starts at `(dy, dx)` in the image padded by `pad`
/// on every side.
fn cropped_byte(plane: &[u8], shape: ImageShape, pad: usize, y: usize, x: usize) -> f32 {
    if y < pad || x < pad || y - pad >= shape.height || x - pad >= shape.width {
        return 0.0;
    }
    f32::from(plane[(y - pad) * shape.width + (x - pad)])
}

/// Builds a batch on the host: crop, flip, resize, affine map, in NCHW order.
///
/// `indices` name images in `images` (planar C×H×W each). An index past the last image reads as
/// an all-padding image (every byte 0), which is what the device kernel does too.
pub fn batch_reference(
    images: &[u8],
    shape: ImageShape,
    indices: &[usize],
    options: &BatchOptions,
) -> Vec<f32> {
    let (out_h, out_w) = options.output_size(shape);
    let pad = options.crop_padding;
    let per_image = shape.values();
    let image_count = images.len() / per_image.max(1);
    let rows: Vec<Taps> = (0..out_h)
        .map(|o| source_taps(shape.height, out_h, o))
        .collect();
    let cols: Vec<Taps> = (0..out_w)
        .map(|o| source_taps(shape.width, out_w, o))
        .collect();
    let mut out = Vec::with_capacity(indices.len() * shape.channels * out_h * out_w);
    let zeros = vec![0u8; per_image];
    for (position, &index) in indices.iter().enumerate() {
        let choice = options.choice(position);
        let image = if index < image_count {
            &images[index * per_image..(index + 1) * per_image]
        } else {
            &zeros[..]
        };
        for (channel, plane) in image.chunks_exact(shape.plane().max(1)).enumerate() {
            let (offset, scale) = (
                options.transform.offset[channel],
                options.transform.scale[channel],
            );
            for row in &rows {
                for col in &cols {
                    let value = bilinear(plane, shape, pad, choice, row, col);
                    out.push((value - offset) * scale);
                }
            }
        }
    }
    out
}

/// One output pixel: the four taps in the flipped crop window, blended as PyTorch does.
fn bilinear(
    plane: &[u8],
    shape: ImageShape,
    pad: usize,
    choice: SampleChoice,
    row: &Taps,
    col: &Taps,
) -> f32 {
    // A flip mirrors the crop window, so it only renames which column each tap reads.
    let mirror = |x: usize| {
        if choice.flip { shape.width - 1 - x } else { x }
    };
    let (dy, dx) = (choice.dy as usize, choice.dx as usize);
    let at = |y: usize, x: usize| cropped_byte(plane, shape, pad, y + dy, mirror(x) + dx);
    let (h1, w1) = (row.lambda, col.lambda);
    let (h0, w0) = (1.0 - h1, 1.0 - w1);
    h0 * (w0 * at(row.first, col.first) + w1 * at(row.first, col.second))
        + h1 * (w0 * at(row.second, col.first) + w1 * at(row.second, col.second))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PixelTransform;

    #[test]
    fn taps_match_pytorch_for_a_doubling() {
        // torch: F.interpolate(x, size=8, mode="bilinear", align_corners=False) on 4 samples
        // reads 0, 0.25, 0.75, ... with the first coordinate clamped to 0.
        let taps: Vec<(usize, usize, f32)> = (0..8)
            .map(|o| {
                let t = source_taps(4, 8, o);
                (t.first, t.second, t.lambda)
            })
            .collect();
        assert_eq!(
            taps,
            vec![
                (0, 1, 0.0),
                (0, 1, 0.25),
                (0, 1, 0.75),
                (1, 2, 0.25),
                (1, 2, 0.75),
                (2, 3, 0.25),
                (2, 3, 0.75),
                // Past the last sample both taps read it: the weight stays, the value does not move.
                (3, 3, 0.25),
            ]
        );
    }

    #[test]
    fn bilinear_upsampling_of_a_ramp_matches_torch_values() {
        // torch.arange(4.).view(1,1,1,4) resized to (1, 8): [0, .25, .75, 1.25, 1.75, 2.25, 2.75, 3].
        let shape = ImageShape::new(1, 1, 4);
        let options = BatchOptions {
            output_size: Some((1, 8)),
            ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
        };
        let out = batch_reference(&[0, 1, 2, 3], shape, &[0], &options);
        assert_eq!(out, vec![0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0]);
    }

    #[test]
    fn crop_and_flip_move_pixels_and_pad_with_zero_bytes() {
        let shape = ImageShape::new(1, 2, 2);
        let mut options = BatchOptions::new(PixelTransform::uniform(1, 1.0, 1.0));
        options.crop_padding = 1;
        options.flip = true;
        let image = [10u8, 20, 30, 40];
        let choice = options.choice(0);
        let out = batch_reference(&image, shape, &[0], &options);
        // Rebuild the expected window by hand from the drawn choice.
        let padded = |y: usize, x: usize| -> f32 {
            if (1..3).contains(&y) && (1..3).contains(&x) {
                f32::from(image[(y - 1) * 2 + (x - 1)])
            } else {
                0.0
            }
        };
        let mut expected = Vec::new();
        for y in 0..2 {
            for x in 0..2 {
                let x = if choice.flip { 1 - x } else { x };
                expected.push(padded(y + choice.dy as usize, x + choice.dx as usize) - 1.0);
            }
        }
        assert_eq!(out, expected);
    }

    #[test]
    fn an_index_past_the_end_reads_as_padding() {
        let shape = ImageShape::new(1, 1, 2);
        let options = BatchOptions::new(PixelTransform::uniform(1, 2.0, 0.5));
        let out = batch_reference(&[8, 8], shape, &[1], &options);
        assert_eq!(out, vec![-1.0, -1.0]);
    }
}
