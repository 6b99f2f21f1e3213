//! Converting the planar C×H×W bytes Kiln keeps images in to what screens and PNG files take.

/// Planar C×H×W bytes (grayscale or RGB) as interleaved RGBA, row by row, for a texture.
pub fn planar_to_rgba([channels, height, width]: [usize; 3], pixels: &[u8]) -> Vec<u8> {
    let plane = height * width;
    let mut rgba = Vec::with_capacity(plane * 4);
    for i in 0..plane {
        let value = |c: usize| pixels.get(c * plane + i).copied().unwrap_or(0);
        let (r, g, b) = if channels >= 3 {
            (value(0), value(1), value(2))
        } else {
            (value(0), value(0), value(0))
        };
        rgba.extend_from_slice(&[r, g, b, 255]);
    }
    rgba
}
