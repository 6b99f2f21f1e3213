//! Kiln's input pipeline on the device: the step from pixel bytes to a batch the model eats.
//!
//! The data set is uploaded once; every step gathers its batch by index on the device, so the
//! host never touches a pixel while training. Two ways exist:
//!
//! - [`ByteSplit`] keeps the raw bytes on the device and builds each batch from them: gather by
//!   index, random crop with zero padding, horizontal flip, bilinear resize and the per-channel
//!   affine map, in NCHW order. On a CubeCL device (wgpu) one fused kernel does all of it and a
//!   batch uploads nothing: the crop and flip draws are hashed in the kernel from the step's
//!   seed, and the affine map stays on the device between batches. On the CPU's `flex` Burn
//!   tensor ops do the same.
//! - [`DeviceSplit`] uploads pre-scaled f32 rows and gathers them with `select`.
//!
//! [`reference`] holds the plain-Rust host loops that define both; the tests compare every path
//! against them.

mod batch;
mod kernel;
mod ops;
pub mod reference;

pub use batch::{
    BatchError, BatchOptions, ByteSplit, ImageShape, MAX_JITTER, MAX_ROTATION_DEGREES,
    MIN_CROP_SCALE, SampleChoice,
};

use burn::tensor::{Int, Tensor, TensorData};

/// Per-channel affine map from a byte `b` to `(b - offset) * scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct PixelTransform {
    /// Subtracted from the raw byte value, one per channel.
    pub offset: Vec<f32>,
    /// Multiplied after the subtraction, one per channel.
    pub scale: Vec<f32>,
}

impl PixelTransform {
    /// The same map for every channel.
    pub fn uniform(channels: usize, offset: f32, scale: f32) -> Self {
        Self {
            offset: vec![offset; channels],
            scale: vec![scale; channels],
        }
    }

    /// Number of channels the map covers.
    pub fn channels(&self) -> usize {
        self.scale.len()
    }

    /// Applies the map to planar C×H×W images on the host: the reference, and the upload path.
    ///
    /// `pixels_per_channel` is H×W. Bytes past the last whole image are ignored.
    pub fn apply_reference(&self, images: &[u8], pixels_per_channel: usize) -> Vec<f32> {
        let channels = self.channels().max(1);
        let per_image = channels * pixels_per_channel;
        let mut out = Vec::with_capacity(images.len());
        for image in images.chunks_exact(per_image.max(1)) {
            for (channel, plane) in image.chunks_exact(pixels_per_channel.max(1)).enumerate() {
                let (offset, scale) = (self.offset[channel], self.scale[channel]);
                out.extend(plane.iter().map(|&b| (f32::from(b) - offset) * scale));
            }
        }
        out
    }
}

/// A split resident on the device: scaled pixels as one `[N, C·H·W]` float tensor, labels as `[N]`.
#[derive(Debug, Clone)]
pub struct DeviceSplit {
    /// Every image, already scaled, one row each.
    pub images: Tensor<2>,
    /// One class index per row.
    pub labels: Tensor<1, Int>,
    /// Number of rows.
    pub len: usize,
}

impl DeviceSplit {
    /// Scales the bytes once on the host and uploads them in one transfer.
    pub fn upload(
        images: &[u8],
        labels: &[u8],
        values_per_image: usize,
        pixels_per_channel: usize,
        transform: &PixelTransform,
        device: &burn::tensor::Device,
    ) -> Self {
        let len = labels.len();
        let pixels = transform.apply_reference(images, pixels_per_channel);
        let images =
            Tensor::<2>::from_data(TensorData::new(pixels, [len, values_per_image]), device);
        let labels: Vec<i32> = labels.iter().map(|&l| i32::from(l)).collect();
        let labels = Tensor::<1, Int>::from_data(TensorData::new(labels, [len]), device);
        Self {
            images,
            labels,
            len,
        }
    }

    /// Gathers the rows named by `indices` (on the device) into a batch of images and labels.
    pub fn gather(&self, indices: Tensor<1, Int>) -> (Tensor<2>, Tensor<1, Int>) {
        let images = self.images.clone().select(0, indices.clone());
        let labels = self.labels.clone().select(0, indices);
        (images, labels)
    }

    /// The contiguous rows `start..end`, for evaluation in order.
    pub fn range(&self, start: usize, end: usize) -> (Tensor<2>, Tensor<1, Int>) {
        (
            self.images.clone().slice(start..end),
            self.labels.clone().slice(start..end),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Device;

    #[test]
    fn reference_scales_each_channel_with_its_own_map() {
        let transform = PixelTransform {
            offset: vec![0.0, 100.0],
            scale: vec![1.0 / 255.0, 0.5],
        };
        // One image, two channels of two pixels each.
        let out = transform.apply_reference(&[0, 255, 100, 102], 2);
        assert_eq!(out, vec![0.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn gather_on_the_device_matches_indexing_on_the_host() {
        let device = Device::flex();
        let images: Vec<u8> = (0..24).collect(); // 6 images of 4 values
        let labels: Vec<u8> = vec![5, 4, 3, 2, 1, 0];
        let transform = PixelTransform::uniform(1, 0.0, 0.5);
        let split = DeviceSplit::upload(&images, &labels, 4, 4, &transform, &device);
        let order = [4_i32, 0, 5];
        let indices = Tensor::<1, Int>::from_data(TensorData::new(order.to_vec(), [3]), &device);
        let (batch, batch_labels) = split.gather(indices);
        let got: Vec<f32> = batch.into_data().try_to_vec().unwrap();
        let reference = transform.apply_reference(&images, 4);
        let expected: Vec<f32> = order
            .iter()
            .flat_map(|&i| reference[i as usize * 4..i as usize * 4 + 4].to_vec())
            .collect();
        assert_eq!(got, expected);
        let got_labels: Vec<i64> = batch_labels.into_data().iter::<i64>().collect();
        assert_eq!(got_labels, vec![1, 5, 0]);
    }
}
