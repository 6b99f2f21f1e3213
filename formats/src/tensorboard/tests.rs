use prost::Message;

use super::crc32c::{crc32c, masked};
use super::proto::{
    Dimension, Event, Payload, PluginData, Summary, SummaryMetadata, TensorProto, TensorShape,
    Value, What,
};
use super::record::{read_records, write_record};
use super::*;

/// RFC 3720, appendix B.4: the CRC-32C test vectors of iSCSI.
#[test]
fn crc32c_matches_the_published_rfc_3720_vectors() {
    let ascending: Vec<u8> = (0..32).collect();
    let descending: Vec<u8> = (0..32).rev().collect();
    assert_eq!(crc32c(&[0; 32]), 0x8A91_36AA);
    assert_eq!(crc32c(&[0xFF; 32]), 0x62A8_AB43);
    assert_eq!(crc32c(&ascending), 0x46DD_794E);
    assert_eq!(crc32c(&descending), 0x113F_DB5C);
    // The iSCSI read command PDU.
    let read_command: [u8; 48] = [
        0x01, 0xC0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0,
        0, 0x14, 0, 0, 0, 0x18, 0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(crc32c(&read_command), 0xD996_3A56);
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c(b""), 0);
}

#[test]
fn a_masked_checksum_is_rotated_by_15_bits_and_offset_as_tensorflow_masks_it() {
    assert_eq!(masked(0), 0xA282_EAD8);
    assert_eq!(masked(0x0000_8000), 0xA282_EAD9);
    assert_eq!(masked(1), 0xA284_EAD8);
    let unmask = |m: u32| m.wrapping_sub(0xA282_EAD8).rotate_left(15);
    for crc in [0x8A91_36AA, 0xE306_9283, u32::MAX] {
        assert_ne!(masked(crc), crc);
        assert_eq!(unmask(masked(crc)), crc);
    }
}

#[test]
fn a_record_is_its_length_its_checksums_and_its_data() {
    let mut out = Vec::new();
    write_record(&mut out, b"abc");
    assert_eq!(out.len(), 8 + 4 + 3 + 4);
    assert_eq!(&out[..8], &3u64.to_le_bytes());
    assert_eq!(
        &out[8..12],
        &masked(crc32c(&3u64.to_le_bytes())).to_le_bytes()
    );
    assert_eq!(&out[12..15], b"abc");
    assert_eq!(&out[15..], &masked(crc32c(b"abc")).to_le_bytes());
    assert_eq!(read_records(&out), (vec![&b"abc"[..]], None));
}

/// The three records of [`two_epochs`].
fn two_epochs_records() -> [Vec<u8>; 3] {
    [
        file_version_record(1_700_000_000.0),
        scalars_record(
            1_700_000_001.5,
            0,
            &[("epoch_loss", 0.75), ("epoch_accuracy", 0.5)],
        ),
        scalars_record(1_700_000_003.0, 1, &[("epoch_loss", 0.25)]),
    ]
}

/// An event file as Kiln writes it: a version record, then scalars at two steps.
fn two_epochs() -> Vec<u8> {
    two_epochs_records().concat()
}

#[test]
fn scalars_written_read_back_with_their_tags_steps_and_times() {
    let log = read_event_file(&two_epochs());
    assert_eq!(log.stop, None);
    assert!(log.problems.is_empty());
    let seen: Vec<(&str, i64, f64, f64)> = log
        .scalars
        .iter()
        .map(|s| (s.tag.as_str(), s.step, s.wall_time, s.value))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("epoch_loss", 0, 1_700_000_001.5, 0.75),
            ("epoch_accuracy", 0, 1_700_000_001.5, 0.5),
            ("epoch_loss", 1, 1_700_000_003.0, 0.25),
        ]
    );
    let file = two_epochs();
    let (records, _) = read_records(&file);
    let first = Event::decode(records[0]).unwrap();
    assert_eq!(first.what, Some(What::FileVersion("brain.Event:2".into())));
}

#[test]
fn a_record_that_fails_its_checksum_keeps_the_records_before_it_and_names_where() {
    let mut file = two_epochs();
    let third_record_starts = file.len() - two_epochs_records()[2].len();
    let last = file.len() - 6;
    file[last] ^= 0x40;
    let log = read_event_file(&file);
    assert_eq!(log.scalars.len(), 2, "the first epoch is kept");
    assert_eq!(
        log.stop,
        Some(RecordBreak::BadData {
            offset: third_record_starts
        })
    );
    let sentence = log.stop.unwrap().to_string();
    assert!(
        sentence.contains(&format!("byte {third_record_starts}")),
        "{sentence}"
    );
    assert!(sentence.contains("CRC-32C"), "{sentence}");

    let mut bad_length = two_epochs();
    bad_length[third_record_starts + 9] ^= 1;
    assert_eq!(
        read_event_file(&bad_length).stop,
        Some(RecordBreak::BadLength {
            offset: third_record_starts
        })
    );
}

#[test]
fn a_file_cut_inside_a_record_keeps_its_whole_records() {
    let file = two_epochs();
    let [first, second, _] = two_epochs_records();
    let boundaries = [first.len(), first.len() + second.len()];
    for cut in (1..file.len()).filter(|cut| !boundaries.contains(cut)) {
        let log = read_event_file(&file[..cut]);
        assert!(
            matches!(log.stop, Some(RecordBreak::Cut { .. })),
            "cut at {cut}: {:?}",
            log.stop
        );
        assert!(log.scalars.len() <= 3);
    }
    assert_eq!(read_event_file(&[]), EventLog::default());
}

#[test]
fn an_absurd_length_with_a_good_checksum_is_a_cut_file_not_an_allocation() {
    let length = u64::MAX.to_le_bytes();
    let mut file = length.to_vec();
    file.extend(masked(crc32c(&length)).to_le_bytes());
    file.extend([0u8; 20]);
    let log = read_event_file(&file);
    assert_eq!(
        log.stop,
        Some(RecordBreak::Cut {
            offset: 0,
            present: 32
        })
    );
}

#[test]
fn framed_bytes_that_are_no_event_are_named_and_the_rest_read() {
    let mut file = Vec::new();
    write_record(&mut file, &[0xFF, 0xFF, 0xFF]);
    file.extend(scalars_record(2.0, 7, &[("loss", 1.0)]));
    let log = read_event_file(&file);
    assert_eq!(log.problems.len(), 1);
    assert!(log.problems[0].starts_with("record 1 is not a TensorBoard event"));
    assert_eq!(log.scalars.len(), 1);
    assert_eq!(log.scalars[0].step, 7);
}

/// One event holding `value` at step 3.
fn event_with(value: Value) -> Vec<u8> {
    let mut file = Vec::new();
    let event = Event {
        wall_time: 5.0,
        step: 3,
        what: Some(What::Summary(Summary { value: vec![value] })),
    };
    write_record(&mut file, &event.encode_to_vec());
    file
}

/// A tensor value as TensorFlow 2's `tf.summary` writes it, for `plugin`.
fn tensor_value(tag: &str, plugin: &str, tensor: TensorProto) -> Value {
    Value {
        tag: tag.to_owned(),
        metadata: Some(SummaryMetadata {
            plugin_data: Some(PluginData {
                plugin_name: plugin.to_owned(),
            }),
        }),
        payload: Some(Payload::Tensor(tensor)),
    }
}

#[test]
fn scalar_tensors_as_keras_and_tensorflow_2_write_them_are_read_in_every_numeric_form() {
    let scalar = |dtype: i32| TensorProto {
        dtype,
        tensor_shape: Some(TensorShape { dim: vec![] }),
        ..TensorProto::default()
    };
    let cases = [
        (
            TensorProto {
                tensor_content: 0.125f32.to_le_bytes().to_vec(),
                ..scalar(1)
            },
            0.125,
        ),
        (
            TensorProto {
                float_val: vec![0.5],
                ..scalar(1)
            },
            0.5,
        ),
        (
            TensorProto {
                double_val: vec![0.1],
                ..scalar(2)
            },
            0.1,
        ),
        (
            TensorProto {
                int64_val: vec![42],
                ..scalar(9)
            },
            42.0,
        ),
        (
            TensorProto {
                half_val: vec![0x3C00],
                ..scalar(19)
            },
            1.0,
        ),
        (
            TensorProto {
                tensor_content: 0xC000u16.to_le_bytes().to_vec(),
                ..scalar(19)
            },
            -2.0,
        ),
        (
            TensorProto {
                half_val: vec![0x3F80],
                ..scalar(14)
            },
            1.0,
        ),
    ];
    for (tensor, expected) in cases {
        let log = read_event_file(&event_with(tensor_value(
            "epoch_loss",
            "scalars",
            tensor.clone(),
        )));
        assert_eq!(log.scalars.len(), 1, "{tensor:?}");
        assert_eq!(log.scalars[0].value, expected, "{tensor:?}");
        assert_eq!(log.scalars[0].step, 3);
    }
}

#[test]
fn values_that_are_not_scalars_are_counted_and_left_out() {
    let histogram = TensorProto {
        dtype: 2,
        tensor_shape: Some(TensorShape {
            dim: vec![Dimension { size: 30 }, Dimension { size: 3 }],
        }),
        double_val: vec![0.0; 90],
        ..TensorProto::default()
    };
    let text = TensorProto {
        dtype: 7,
        ..TensorProto::default()
    };
    let one_number_of_another_plugin = TensorProto {
        dtype: 1,
        float_val: vec![1.0],
        ..TensorProto::default()
    };
    let mut file = event_with(tensor_value("weights", "histograms", histogram));
    file.extend(event_with(tensor_value("notes", "text", text)));
    file.extend(event_with(tensor_value(
        "hp",
        "hparams",
        one_number_of_another_plugin,
    )));
    let log = read_event_file(&file);
    assert!(log.scalars.is_empty());
    assert_eq!(log.other_values, 3);
}

#[test]
fn event_files_are_named_as_tensorflow_2_names_them() {
    let name = event_file_name(1_700_000_000, "box", 42);
    assert_eq!(name, "events.out.tfevents.1700000000.box.42.0.v2");
    assert!(is_event_file_name(&name));
    assert!(is_event_file_name("events.out.tfevents.1700000000.host"));
    assert!(!is_event_file_name("metrics.csv"));
}
