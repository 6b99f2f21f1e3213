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

/// Builds a batch on the host: crop, flip, resize, rotation, jitter and affine map, in NCHW
/// order, as [`BatchOptions`] spells them out.
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
    let mut out = Vec::with_capacity(indices.len() * shape.channels * out_h * out_w);
    let zeros = vec![0u8; per_image];
    for (position, &index) in indices.iter().enumerate() {
        let choice = options.choice(position, shape);
        let image = if index < image_count {
            &images[index * per_image..(index + 1) * per_image]
        } else {
            &zeros[..]
        };
        let rows = window_taps(choice.height as usize, out_h);
        let cols = window_taps(choice.width as usize, out_w);
        for (channel, plane) in image.chunks_exact(shape.plane().max(1)).enumerate() {
            let (offset, scale) = (
                options.transform.offset[channel],
                options.transform.scale[channel],
            );
            for (oy, row) in rows.iter().enumerate() {
                for (ox, col) in cols.iter().enumerate() {
                    let value = if options.rotates() {
                        let taps = warp_taps(shape, pad, (out_h, out_w), choice, oy, ox);
                        taps.index
                            .iter()
                            .zip(taps.weight)
                            .map(|(&at, weight)| weight * f32::from(plane[at]))
                            .sum()
                    } else {
                        bilinear(plane, shape, pad, choice, row, col)
                    };
                    let value = if options.jitters() {
                        jitter(value, choice)
                    } else {
                        value
                    };
                    out.push((value - offset) * scale);
                }
            }
        }
    }
    out
}

/// The taps of every output coordinate when a window of `input` samples is resized to `output`.
pub fn window_taps(input: usize, output: usize) -> Vec<Taps> {
    (0..output).map(|o| source_taps(input, output, o)).collect()
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
    let window_width = choice.width as usize;
    let mirror = |x: usize| {
        if choice.flip { window_width - 1 - x } else { x }
    };
    let (dy, dx) = (choice.dy as usize, choice.dx as usize);
    let at = |y: usize, x: usize| cropped_byte(plane, shape, pad, y + dy, mirror(x) + dx);
    let (h1, w1) = (row.lambda, col.lambda);
    let (h0, w0) = (1.0 - h1, 1.0 - w1);
    h0 * (w0 * at(row.first, col.first) + w1 * at(row.first, col.second))
        + h1 * (w0 * at(row.second, col.first) + w1 * at(row.second, col.second))
}

/// The four source pixels one output pixel of a rotated sample blends, with their weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarpTaps {
    /// Where each tap is in the image plane (row·W + column): top-left, top-right, bottom-left,
    /// bottom-right; 0 for a tap outside the image.
    pub index: [usize; 4],
    /// The bilinear weight of each tap; 0 for a tap outside the image, which reads as a zero byte.
    pub weight: [f32; 4],
}

/// Where output pixel `(oy, ox)` of a rotated sample reads: undo the rotation about the output's
/// centre, map the point into the (flipped) window as the resize does (`align_corners=False`,
/// without clamping), and read the unpadded image bilinearly, zero outside it.
pub fn warp_taps(
    shape: ImageShape,
    pad: usize,
    (out_h, out_w): (usize, usize),
    choice: SampleChoice,
    oy: usize,
    ox: usize,
) -> WarpTaps {
    let (sin, cos) = crate::batch::sin_cos_small(choice.angle);
    let centre_x = (out_w as f32 - 1.0) * 0.5;
    let centre_y = (out_h as f32 - 1.0) * 0.5;
    let (rx, ry) = (ox as f32 - centre_x, oy as f32 - centre_y);
    let ux = cos * rx - sin * ry + centre_x;
    let uy = sin * rx + cos * ry + centre_y;
    let scale_x = choice.width as f32 / out_w as f32;
    let scale_y = choice.height as f32 / out_h as f32;
    let mut wx = (ux + 0.5) * scale_x - 0.5;
    let wy = (uy + 0.5) * scale_y - 0.5;
    if choice.flip {
        wx = (choice.width as f32 - 1.0) - wx;
    }
    let x = wx + (choice.dx as f32 - pad as f32);
    let y = wy + (choice.dy as f32 - pad as f32);
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let mut taps = WarpTaps {
        index: [0; 4],
        weight: [0.0; 4],
    };
    let corners = [
        (y0, x0, (1.0 - fy) * (1.0 - fx)),
        (y0, x0 + 1.0, (1.0 - fy) * fx),
        (y0 + 1.0, x0, fy * (1.0 - fx)),
        (y0 + 1.0, x0 + 1.0, fy * fx),
    ];
    for (k, (ty, tx, weight)) in corners.into_iter().enumerate() {
        if ty >= 0.0 && tx >= 0.0 && ty < shape.height as f32 && tx < shape.width as f32 {
            taps.index[k] = ty as usize * shape.width + tx as usize;
            taps.weight[k] = weight;
        }
    }
    taps
}

/// Brightness, then contrast about mid-grey, each clamped to the byte range.
pub fn jitter(value: f32, choice: SampleChoice) -> f32 {
    let bright = (value * choice.brightness).clamp(0.0, 255.0);
    ((bright - MID_GREY) * choice.contrast + MID_GREY).clamp(0.0, 255.0)
}

/// The pivot of the contrast jitter.
pub const MID_GREY: f32 = 127.5;

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
        let choice = options.choice(0, shape);
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

    /// A 1×h×w ramp with value `step·x` in column x: bilinear reads of it are exact inside.
    fn ramp(height: usize, width: usize, step: u8) -> Vec<u8> {
        (0..height * width)
            .map(|i| (i % width) as u8 * step)
            .collect()
    }

    #[test]
    fn a_rotation_turns_the_sampling_grid_about_the_centre() {
        let shape = ImageShape::new(1, 7, 7);
        let image = ramp(7, 7, 30);
        let options = BatchOptions {
            rotation_degrees: 20.0,
            seed: 9,
            ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
        };
        let choice = options.choice(0, shape);
        assert!(choice.angle.abs() > 0.05, "a visible angle: {choice:?}");
        let out = batch_reference(&image, shape, &[0], &options);
        let (sin, cos) = (f64::from(choice.angle).sin(), f64::from(choice.angle).cos());
        for oy in 0..7 {
            for ox in 0..7 {
                let (rx, ry) = (ox as f64 - 3.0, oy as f64 - 3.0);
                let x = cos * rx - sin * ry + 3.0;
                let y = sin * rx + cos * ry + 3.0;
                // Only points whose four taps are all inside the image: the ramp is exact there.
                if x < 0.0 || y < 0.0 || x >= 6.0 || y >= 6.0 {
                    continue;
                }
                let got = f64::from(out[oy * 7 + ox]);
                assert!(
                    (got - 30.0 * x).abs() < 1e-3,
                    "({oy}, {ox}): {got} vs {}",
                    30.0 * x
                );
            }
        }
        // The centre pixel is where the rotation turns about, and it does not move.
        assert!((out[3 * 7 + 3] - 90.0).abs() < 1e-4);
    }

    #[test]
    fn rotation_fills_with_zero_only_past_the_image() {
        let shape = ImageShape::new(1, 6, 6);
        let image = vec![200u8; 36];
        let options = BatchOptions {
            rotation_degrees: 30.0,
            seed: 1,
            ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
        };
        let choice = options.choice(0, shape);
        assert!(choice.angle.abs() > 0.2, "{choice:?}");
        let out = batch_reference(&image, shape, &[0], &options);
        // A corner leaves the image, the middle stays inside it.
        assert!(out[0] < 200.0, "corner {}", out[0]);
        assert_eq!(out[2 * 6 + 2], 200.0);
        // Weights that sum to one up to rounding keep every value in the byte range it read.
        assert!(out.iter().all(|&v| (0.0..=200.001).contains(&v)));
    }

    #[test]
    fn a_resized_crop_is_the_window_cut_out_and_resized_back() {
        let shape = ImageShape::new(1, 9, 12);
        let image: Vec<u8> = (0..108u32).map(|i| (i * 37 % 251) as u8).collect();
        let map = PixelTransform::uniform(1, 0.0, 1.0);
        for seed in 0..20 {
            let options = BatchOptions {
                crop_scale: 0.2,
                flip: true,
                seed,
                ..BatchOptions::new(map.clone())
            };
            let choice = options.choice(0, shape);
            let (h, w) = (choice.height as usize, choice.width as usize);
            // The window by hand, mirrored when drawn so, then a plain resize back to 9×12.
            let mut window = Vec::with_capacity(h * w);
            for y in 0..h {
                for x in 0..w {
                    let x = if choice.flip { w - 1 - x } else { x };
                    window.push(image[(y + choice.dy as usize) * 12 + x + choice.dx as usize]);
                }
            }
            let resize = BatchOptions {
                output_size: Some((9, 12)),
                ..BatchOptions::new(map.clone())
            };
            let expected = batch_reference(&window, ImageShape::new(1, h, w), &[0], &resize);
            assert_eq!(
                batch_reference(&image, shape, &[0], &options),
                expected,
                "{choice:?}"
            );
        }
    }

    #[test]
    fn brightness_scales_and_contrast_spreads_about_mid_grey_within_the_byte_range() {
        let shape = ImageShape::new(1, 1, 4);
        let image = [0u8, 100, 128, 255];
        let options = BatchOptions {
            brightness: 0.5,
            contrast: 0.5,
            seed: 3,
            ..BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0))
        };
        let choice = options.choice(0, shape);
        assert!(
            choice.brightness != 1.0 && choice.contrast != 1.0,
            "{choice:?}"
        );
        let out = batch_reference(&image, shape, &[0], &options);
        let expected: Vec<f32> = image
            .iter()
            .map(|&b| {
                let bright = (f64::from(b) * f64::from(choice.brightness)).min(255.0);
                ((bright - 127.5) * f64::from(choice.contrast) + 127.5).clamp(0.0, 255.0) as f32
            })
            .collect();
        for (got, want) in out.iter().zip(&expected) {
            assert!((got - want).abs() < 1e-3, "{out:?} vs {expected:?}");
        }
        // Evaluation's options carry no jitter: the bytes come back as they are.
        let plain = BatchOptions::new(PixelTransform::uniform(1, 0.0, 1.0));
        assert_eq!(
            batch_reference(&image, shape, &[0], &plain),
            vec![0.0, 100.0, 128.0, 255.0]
        );
    }

    #[test]
    fn the_small_polynomials_match_the_standard_functions() {
        for i in -100..=100 {
            let x = i as f32 / 100.0 * crate::batch::LOG_4_3;
            let exp = crate::batch::exp_small(x);
            assert!((exp - x.exp()).abs() < 2e-7, "exp({x})");
            let angle = i as f32 / 100.0 * 30f32.to_radians();
            let (sin, cos) = crate::batch::sin_cos_small(angle);
            assert!((sin - angle.sin()).abs() < 2e-7 && (cos - angle.cos()).abs() < 2e-7);
        }
    }
}
