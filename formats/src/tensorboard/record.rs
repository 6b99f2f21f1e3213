//! TFRecord framing: each record is its length (u64, little-endian), the masked CRC-32C of
//! those 8 bytes, the data, and the masked CRC-32C of the data.

use super::crc32c::masked_crc32c;

/// Bytes of framing around a record's data: length, its checksum, the data's checksum.
const FRAMING_BYTES: usize = 8 + 4 + 4;

/// Appends `data` to `out` as one framed record.
pub fn write_record(out: &mut Vec<u8>, data: &[u8]) {
    let length = (data.len() as u64).to_le_bytes();
    out.extend_from_slice(&length);
    out.extend_from_slice(&masked_crc32c(&length).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc32c(data).to_le_bytes());
}

/// Where and why reading a file of records stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordBreak {
    /// The file ends inside a record: a writer still at work, or one that was stopped.
    Cut {
        /// Byte offset of the record's first byte.
        offset: usize,
        /// How many of the record's bytes the file holds.
        present: usize,
    },
    /// A record's length does not match its checksum: the file is damaged from there on.
    BadLength {
        /// Byte offset of the record's first byte.
        offset: usize,
    },
    /// A record's data does not match its checksum.
    BadData {
        /// Byte offset of the record's first byte.
        offset: usize,
    },
}

impl std::fmt::Display for RecordBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cut { offset, present } => write!(
                f,
                "the file ends inside the record at byte {offset} ({present} of its bytes are there): it was cut short or is still being written"
            ),
            Self::BadLength { offset } => write!(
                f,
                "the record at byte {offset} has a length that fails its CRC-32C check: the file is damaged from there on"
            ),
            Self::BadData { offset } => write!(
                f,
                "the record at byte {offset} fails its CRC-32C check: the file is damaged from there on"
            ),
        }
    }
}

/// The records of `bytes` up to the first that cannot be trusted, and why reading stopped
/// there. A length is believed only once its checksum matches and the file holds that many
/// bytes, so a damaged header never asks for memory.
pub fn read_records(bytes: &[u8]) -> (Vec<&[u8]>, Option<RecordBreak>) {
    let mut records = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let rest = &bytes[offset..];
        let cut = RecordBreak::Cut {
            offset,
            present: rest.len(),
        };
        let Some((length_bytes, after)) = rest.split_first_chunk::<8>() else {
            return (records, Some(cut));
        };
        let Some((length_crc, after)) = after.split_first_chunk::<4>() else {
            return (records, Some(cut));
        };
        if masked_crc32c(length_bytes) != u32::from_le_bytes(*length_crc) {
            return (records, Some(RecordBreak::BadLength { offset }));
        }
        let length = u64::from_le_bytes(*length_bytes);
        let Some(length) = usize::try_from(length)
            .ok()
            .filter(|&n| n <= after.len().saturating_sub(4))
        else {
            return (records, Some(cut));
        };
        let (data, after) = after.split_at(length);
        let Some((data_crc, _)) = after.split_first_chunk::<4>() else {
            return (records, Some(cut));
        };
        if masked_crc32c(data) != u32::from_le_bytes(*data_crc) {
            return (records, Some(RecordBreak::BadData { offset }));
        }
        records.push(data);
        offset += FRAMING_BYTES + length;
    }
    (records, None)
}
