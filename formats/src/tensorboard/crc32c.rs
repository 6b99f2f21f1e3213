//! CRC-32C (Castagnoli), the checksum of TFRecord framing, and the rotation TensorFlow applies
//! so a checksum stored inside checksummed data does not cancel itself out.

/// The reflected Castagnoli polynomial (iSCSI, RFC 3720).
const POLYNOMIAL: u32 = 0x82F6_3B78;

/// One entry per byte value, built at compile time: a byte at a time is fast enough for logs of
/// scalars, and the table costs 1 KiB.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = byte as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLYNOMIAL
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[byte] = crc;
        byte += 1;
    }
    table
};

/// The CRC-32C of `bytes`.
pub fn crc32c(bytes: &[u8]) -> u32 {
    let crc = bytes.iter().fold(!0u32, |crc, &b| {
        TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8)
    });
    !crc
}

/// TensorFlow's `crc32c::Mask`: rotated right by 15 bits plus a constant.
pub fn masked(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xA282_EAD8)
}

/// The masked CRC-32C of `bytes`, as a TFRecord stores it.
pub fn masked_crc32c(bytes: &[u8]) -> u32 {
    masked(crc32c(bytes))
}
