//! Any bytes as a TensorBoard event file: read without a panic, and whatever is read back is
//! what the records before the break give alone.
#![no_main]

use kiln_formats::tensorboard::{RecordBreak, read_event_file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let log = read_event_file(data);
    let offset = match log.stop {
        Some(RecordBreak::Cut { offset, present }) => {
            assert_eq!(offset + present, data.len());
            offset
        }
        Some(RecordBreak::BadLength { offset } | RecordBreak::BadData { offset }) => offset,
        None => data.len(),
    };
    let before = read_event_file(&data[..offset]);
    assert_eq!(before.stop, None);
    // Bits, not values: a logged NaN (a diverged run) is not equal to itself.
    let key = |l: &kiln_formats::tensorboard::EventLog| -> Vec<(String, i64, u64)> {
        l.scalars
            .iter()
            .map(|s| (s.tag.clone(), s.step, s.value.to_bits()))
            .collect()
    };
    assert_eq!(key(&before), key(&log));
});
