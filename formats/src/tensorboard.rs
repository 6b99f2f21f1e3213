//! TensorBoard event files: the scalars Keras's `TensorBoard` callback, PyTorch's
//! `SummaryWriter` and Lightning's default logger write, read back; and Kiln's runs written the
//! same way, so `tensorboard --logdir runs/` and `wandb sync` show them beside the person's own.
//!
//! A file is a sequence of TFRecords ([`record`]: length, data, CRC-32C checksums), each holding
//! one `tensorflow.Event` ([`proto`]). Reading keeps every good record before a break and names
//! the break, so a run cut short or a damaged file still gives what it has.

pub mod crc32c;
pub mod proto;
pub mod record;
#[cfg(test)]
mod tests;

use prost::Message;

use proto::{DataType, Event, Payload, Summary, TensorProto, Value, What};
pub use record::RecordBreak;

/// The version every event file opens with; TensorBoard reads files of this version.
pub const FILE_VERSION: &str = "brain.Event:2";
/// The plugin of scalar values stored as tensors.
pub const SCALARS_PLUGIN: &str = "scalars";

/// One logged number of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The series: `epoch_loss`, `val_acc`, `Loss/train`…
    pub tag: String,
    /// The step it was logged at: Keras counts epochs from 0, Lightning and PyTorch count batches
    /// or epochs as the script chose.
    pub step: i64,
    /// Seconds since the Unix epoch when it was logged.
    pub wall_time: f64,
    /// The number.
    pub value: f64,
}

/// What an event file holds, as far as it could be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventLog {
    /// Every scalar, in file order.
    pub scalars: Vec<Scalar>,
    /// Values that are not scalars (histograms, images, text, graphs' summaries), left out.
    pub other_values: usize,
    /// Records that are framed well but hold no event; each left out with its sentence.
    pub problems: Vec<String>,
    /// Where reading stopped before the file's end, and why; the scalars before it are kept.
    pub stop: Option<RecordBreak>,
}

/// The name TensorFlow 2 gives an event file, which TensorBoard looks for (`tfevents`) and
/// sorts by (the time).
pub fn event_file_name(wall_secs: u64, host: &str, pid: u32) -> String {
    format!("events.out.tfevents.{wall_secs}.{host}.{pid}.0.v2")
}

/// Whether a file's name marks it as an event file, as TensorBoard decides.
pub fn is_event_file_name(name: &str) -> bool {
    name.contains("tfevents")
}

/// The record that opens an event file: its version.
pub fn file_version_record(wall_time: f64) -> Vec<u8> {
    framed(&Event {
        wall_time,
        step: 0,
        what: Some(What::FileVersion(FILE_VERSION.to_owned())),
    })
}

/// One record with `scalars` (tag, value) logged at `step`, stored as PyTorch's
/// `SummaryWriter` stores them (`simple_value`), which every reader of these files takes.
pub fn scalars_record(wall_time: f64, step: i64, scalars: &[(&str, f64)]) -> Vec<u8> {
    let value = scalars
        .iter()
        .map(|&(tag, value)| Value {
            tag: tag.to_owned(),
            metadata: None,
            // Event files store scalars as 32-bit floats.
            payload: Some(Payload::SimpleValue(value as f32)),
        })
        .collect();
    framed(&Event {
        wall_time,
        step,
        what: Some(What::Summary(Summary { value })),
    })
}

/// `event` encoded and framed as one record.
fn framed(event: &Event) -> Vec<u8> {
    let mut out = Vec::new();
    record::write_record(&mut out, &event.encode_to_vec());
    out
}

/// Reads the scalars of an event file's bytes; never fails: what cannot be read is counted,
/// named or marks where reading stopped.
pub fn read_event_file(bytes: &[u8]) -> EventLog {
    let (records, stop) = record::read_records(bytes);
    let mut log = EventLog {
        stop,
        ..EventLog::default()
    };
    for (index, data) in records.into_iter().enumerate() {
        let event = match Event::decode(data) {
            Ok(event) => event,
            Err(e) => {
                log.problems.push(format!(
                    "record {} is not a TensorBoard event ({e}); it is left out",
                    index + 1
                ));
                continue;
            }
        };
        let Some(What::Summary(summary)) = event.what else {
            continue;
        };
        for value in summary.value {
            match scalar_value(&value) {
                Some(number) => log.scalars.push(Scalar {
                    tag: value.tag,
                    step: event.step,
                    wall_time: event.wall_time,
                    value: number,
                }),
                None => log.other_values += 1,
            }
        }
    }
    log
}

/// The number a value holds, if it is a scalar: a `simple_value`, or a one-element numeric
/// tensor of the scalars plugin (or of no plugin).
fn scalar_value(value: &Value) -> Option<f64> {
    match value.payload.as_ref()? {
        Payload::SimpleValue(v) => Some(f64::from(*v)),
        Payload::Tensor(tensor) => {
            let plugin = value
                .metadata
                .as_ref()
                .and_then(|m| m.plugin_data.as_ref())
                .map_or("", |p| p.plugin_name.as_str());
            if !plugin.is_empty() && plugin != SCALARS_PLUGIN {
                return None;
            }
            tensor_scalar(tensor)
        }
    }
}

/// The only element of a one-element numeric tensor.
fn tensor_scalar(tensor: &TensorProto) -> Option<f64> {
    let elements = tensor
        .tensor_shape
        .as_ref()
        .map_or(1, |shape| shape.dim.iter().map(|d| d.size).product::<i64>());
    if elements != 1 {
        return None;
    }
    let content = tensor.tensor_content.as_slice();
    match DataType::from_number(tensor.dtype)? {
        DataType::Float => (tensor.float_val.first().copied())
            .or_else(|| content.first_chunk().map(|b| f32::from_le_bytes(*b)))
            .map(f64::from),
        DataType::Double => (tensor.double_val.first().copied())
            .or_else(|| content.first_chunk().map(|b| f64::from_le_bytes(*b))),
        DataType::Int32 => (tensor.int_val.first().copied())
            .or_else(|| content.first_chunk().map(|b| i32::from_le_bytes(*b)))
            .map(f64::from),
        DataType::Int64 => (tensor.int64_val.first().copied())
            .or_else(|| content.first_chunk().map(|b| i64::from_le_bytes(*b)))
            .map(|v| v as f64),
        DataType::Half => sixteen_bits(tensor, content).map(half_to_f64),
        DataType::BFloat16 => sixteen_bits(tensor, content)
            .map(|bits| f64::from(f32::from_bits(u32::from(bits) << 16))),
    }
}

/// A 16-bit element: from `half_val` or the packed content.
fn sixteen_bits(tensor: &TensorProto, content: &[u8]) -> Option<u16> {
    match tensor.half_val.first() {
        Some(&v) => Some(v as u16),
        None => content.first_chunk().map(|b| u16::from_le_bytes(*b)),
    }
}

/// An IEEE 754 half-precision number's bits as a double.
fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((bits >> 10) & 0x1F);
    let fraction = f64::from(bits & 0x3FF);
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + fraction / 1024.0) * 2f64.powi(e - 15),
    }
}
