//! Run folders written by the real writer, read back, listed, renamed and deleted.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::config::ExperimentDraft;
use crate::data::test_dir;
use crate::train::{RunOutcome, RunSummary, TrainEvent};

/// A readback of the 0-based `epoch`, as the loop counts.
fn progress(epoch: usize, step: usize, loss: f64) -> MetricsRow {
    MetricsRow {
        wall_secs: step as f64 * 0.5,
        epoch: epoch + 1,
        step,
        global_step: epoch * 10 + step,
        samples_seen: (epoch * 10 + step) as u64 * 32,
        train_loss: loss,
        train_accuracy: 0.5,
        samples_per_sec: 1000.0,
        step_ms: 2.5,
        data_ms: 0.1,
        compute_ms: 2.0,
        sync_ms: 0.4,
        lr: 1e-3,
    }
}

/// The end of the 0-based `epoch`.
fn epoch_end(epoch: usize) -> EpochRow {
    EpochRow {
        epoch: epoch + 1,
        train_loss: Some(1.0),
        train_accuracy: Some(0.6),
        val_loss: None,
        val_accuracy: None,
        test_loss: Some(1.1),
        test_accuracy: Some(0.55),
        epoch_secs: Some(5.0),
        eval_secs: Some(0.5),
        samples_per_sec: Some(900.0),
    }
}

/// A run folder written by the real writer: two epochs of five readbacks each.
fn write_run(runs_dir: &Path, name: &str, lr: f64) -> PathBuf {
    let draft = ExperimentDraft {
        name: name.to_owned(),
        lr,
        ..ExperimentDraft::default()
    };
    let experiment = draft.validate().unwrap();
    let mut folder = RunFolder::create(runs_dir, &experiment).unwrap();
    record_two_epochs(&mut folder);
    folder.path().to_owned()
}

/// Two epochs of five readbacks each, then a summary.
fn record_two_epochs(folder: &mut RunFolder) {
    for epoch in 0..2 {
        for step in 1..=5 {
            folder
                .record(&TrainEvent::Progress(progress(
                    epoch,
                    step,
                    2.0 / step as f64,
                )))
                .unwrap();
        }
        folder
            .record(&TrainEvent::EpochEnd(epoch_end(epoch)))
            .unwrap();
    }
    let mut summary = RunSummary::new("cpu", 100, 0.1, 0.0);
    summary.epochs_completed = 2;
    folder
        .record(&TrainEvent::Finished(Box::new(summary)))
        .unwrap();
}

#[test]
fn a_folder_written_by_run_folder_reads_back() {
    let dir = test_dir("history-load");
    let path = write_run(&dir, "first", 0.01);
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.name, "first");
    // config.toml round-trips the whole draft, an absent data_dir included.
    let expected = ExperimentDraft {
        name: "first".to_owned(),
        lr: 0.01,
        ..ExperimentDraft::default()
    };
    assert_eq!(run.config.as_ref(), Some(&expected));
    assert_eq!(run.metrics.len(), 10);
    assert_eq!(run.epochs.len(), 2);
    let first = &run.metrics[0];
    assert_eq!(first, &progress(0, 1, 2.0));
    assert_eq!(run.metrics[9].epoch, 2);
    assert_eq!(run.epochs[1], epoch_end(1));
    assert_eq!(run.summary.as_ref().unwrap().outcome, RunOutcome::Completed);
    assert!(run.folder_name().ends_with("-first"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_truncated_last_row_is_skipped_silently() {
    let dir = test_dir("history-truncated");
    let path = write_run(&dir, "cut", 0.01);
    fs::remove_file(path.join("summary.json")).unwrap();
    let mut metrics = fs::read_to_string(path.join("metrics.csv")).unwrap();
    metrics.push_str("3.000,3,1,21,672,0.9");
    fs::write(path.join("metrics.csv"), metrics).unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.metrics.len(), 10);
    assert!(run.summary.is_none());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn garbage_rows_are_skipped_and_named() {
    let dir = test_dir("history-garbage");
    let path = write_run(&dir, "garbage", 0.01);
    let text = fs::read_to_string(path.join("epochs.csv")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "2,oops,0.5,1,0.5,,,1,1,1");
    fs::write(path.join("epochs.csv"), lines.join("\n") + "\n").unwrap();
    fs::write(path.join("summary.json"), "{ not json").unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert_eq!(run.epochs.len(), 2);
    assert_eq!(run.problems.len(), 2, "{:?}", run.problems);
    assert!(
        run.problems[0].contains("epochs.csv line 3") && run.problems[0].contains("oops"),
        "{:?}",
        run.problems
    );
    assert!(
        run.problems[1].contains("summary.json"),
        "{:?}",
        run.problems
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn hand_written_files_and_a_bad_config_still_load() {
    let dir = test_dir("history-hand");
    let path = dir.join("20260101-000000-hand");
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("config.toml"), "batch = 3\n").unwrap();
    // Columns reordered and one added, CRLF line ends, NaN loss.
    fs::write(
        path.join("metrics.csv"),
        "epoch,wall_secs,step,global_step,samples_seen,train_loss,train_accuracy,samples_per_sec,step_ms,data_ms,compute_ms,sync_ms,lr,extra\r\n\
         1,0.5,1,1,32,NaN,0.1,100,1,0,1,0,0.1,x\r\n",
    )
    .unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert_eq!(run.name, "20260101-000000-hand");
    assert!(run.config.is_none());
    assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
    assert!(run.problems[0].contains("config.toml"));
    assert_eq!(run.metrics.len(), 1);
    assert_eq!(run.metrics[0].epoch, 1);
    assert_eq!(run.metrics[0].wall_secs, 0.5);
    assert!(run.metrics[0].train_loss.is_nan());
    assert!(run.epochs.is_empty());
    let _ = fs::remove_dir_all(&dir);
}

/// A run folder as Kiln wrote it before validation splits: epochs.csv without `val_*`
/// columns, config.toml without `validation`, summary.json without `validated_on`.
#[test]
fn a_folder_from_before_validation_splits_reads_as_validated_on_test() {
    let dir = test_dir("history-older");
    let path = dir.join("20260101-000000-older");
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("config.toml"), "name = \"older\"\nepochs = 2\n").unwrap();
    fs::write(
        path.join("epochs.csv"),
        "epoch,train_loss,train_accuracy,test_loss,test_accuracy,epoch_secs,eval_secs,samples_per_sec\n\
         1,0.9,0.7,0.8,0.75,1.0,0.1,6000\n",
    )
    .unwrap();
    let run = RunHistory::load(&path).unwrap();
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let row = &run.epochs[0];
    assert_eq!((row.val_loss, row.val_accuracy), (None, None));
    assert_eq!((row.test_loss, row.test_accuracy), (Some(0.8), Some(0.75)));
    assert_eq!(row.held_out(), Some((0.8, 0.75)));
    assert_eq!(run.validated_on(), crate::selection::ValidatedOn::Test);
    let config = run.config.as_ref().unwrap();
    assert_eq!(config.validation, crate::config::Validation::Test);
    assert_eq!(config.keep, crate::config::Keep::Last);
    let mut summary = serde_json::to_value(RunSummary::new("CPU", 1, 0.0, 0.0)).unwrap();
    summary.as_object_mut().unwrap().remove("validated_on");
    let older: RunSummary = serde_json::from_value(summary).unwrap();
    assert_eq!(older.validated_on, crate::selection::ValidatedOn::Test);
    // Renamed, it still reads as the run it was: its config is written back as validated on
    // test and keeping its last epoch (a resume must not carve validation out of its training).
    let renamed = rename_run(&path, "older-renamed").unwrap();
    let config = RunHistory::load(&renamed).unwrap().config.unwrap();
    assert_eq!(config.name, "older-renamed");
    assert_eq!(config.validation, crate::config::Validation::Test);
    assert_eq!(config.keep, crate::config::Keep::Last);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn missing_and_non_run_folders_are_errors() {
    let dir = test_dir("history-missing");
    let err = RunHistory::load(&dir.join("nope")).unwrap_err();
    assert!(matches!(err, FolderError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("nope"), "{err}");
    let err = RunHistory::load(&dir).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn runs_are_listed_newest_first() {
    let dir = test_dir("history-list");
    assert!(list_runs(&dir.join("missing")).unwrap().is_empty());
    for name in [
        "20260102-000000-b",
        "20260103-000000-c",
        "20260101-000000-a",
    ] {
        fs::create_dir_all(dir.join(name)).unwrap();
        fs::write(dir.join(name).join("metrics.csv"), MetricsRow::HEADER).unwrap();
    }
    fs::create_dir_all(dir.join("20270101-000000-not-a-run")).unwrap();
    fs::write(dir.join("20280101-000000-file"), "x").unwrap();
    let names: Vec<String> = list_runs(&dir)
        .unwrap()
        .iter()
        .map(|p| folder_name_of(p))
        .collect();
    assert_eq!(
        names,
        [
            "20260103-000000-c",
            "20260102-000000-b",
            "20260101-000000-a"
        ]
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn rename_moves_the_folder_and_rewrites_the_config() {
    let dir = test_dir("history-rename");
    let path = write_run(&dir, "old", 0.01);
    let stamp = folder_name_of(&path)[..15].to_owned();
    let renamed = rename_run(&path, "new_name-2.b").unwrap();
    assert_eq!(folder_name_of(&renamed), format!("{stamp}-new_name-2.b"));
    assert!(!path.exists());
    let run = RunHistory::load(&renamed).unwrap();
    assert_eq!(run.name, "new_name-2.b");
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert_eq!(run.metrics.len(), 10);
    // The renamed config still validates, so the run can be rerun from it.
    run.config.unwrap().validate().unwrap();
    // Renaming to the same name is a no-op, not "already exists".
    assert_eq!(rename_run(&renamed, "new_name-2.b").unwrap(), renamed);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn rename_refuses_bad_names_and_taken_targets() {
    let dir = test_dir("history-rename-refused");
    let path = write_run(&dir, "one", 0.01);
    for bad in ["", "a/b", "a b", "..\\x", "x.", &"n".repeat(65)] {
        let err = rename_run(&path, bad).unwrap_err();
        assert!(matches!(err, FolderError::BadName { .. }), "{bad}: {err}");
    }
    let stamp = folder_name_of(&path)[..15].to_owned();
    fs::create_dir_all(dir.join(format!("{stamp}-taken"))).unwrap();
    let err = rename_run(&path, "taken").unwrap_err();
    assert!(matches!(err, FolderError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("taken"), "{err}");
    let err = rename_run(&dir.join("nothing"), "x").unwrap_err();
    assert!(matches!(err, FolderError::NotFound { .. }), "{err}");
    let plain = dir.join("plain");
    fs::create_dir_all(&plain).unwrap();
    let err = rename_run(&plain, "x").unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    // Nothing changed.
    assert_eq!(RunHistory::load(&path).unwrap().name, "one");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn delete_refuses_what_is_not_a_run() {
    let dir = test_dir("history-delete");
    let other = dir.join("photos");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("cat.png"), "meow").unwrap();
    let err = delete_run(&other).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    assert!(other.join("cat.png").exists());
    let err = delete_run(&other.join("cat.png")).unwrap_err();
    assert!(matches!(err, FolderError::NotARun { .. }), "{err}");
    let path = write_run(&dir, "doomed", 0.01);
    #[cfg(unix)]
    {
        // Deleting a link to a run removes the link, never the run it points to.
        let link = dir.join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        delete_run(&link).unwrap();
        assert!(!link.exists() && path.join("metrics.csv").exists());
    }
    delete_run(&path).unwrap();
    assert!(!path.exists());
    assert!(matches!(
        delete_run(&path).unwrap_err(),
        FolderError::NotFound { .. }
    ));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn timestamps_are_utc_calendar_dates() {
    assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000");
    // 2026-11-29 15:34:06 UTC
    let t = UNIX_EPOCH + Duration::from_secs(1_795_966_446);
    assert_eq!(timestamp(t), "20261129-153406");
    // A leap day.
    let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
    assert_eq!(timestamp(t), "20000229-000000");
}

/// Every file under `folder`, by its path inside it, with its bytes; not the lock and writer
/// files, which are the writing process's rather than the run's (they are not archived, and a
/// page's runs have none).
fn files_under(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![folder.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if ![LOCK_FILE, WRITER_FILE]
                .iter()
                .any(|own| path.file_name() == Some(own.as_ref()))
            {
                let relative = path.strip_prefix(folder).unwrap().to_owned();
                files.push((relative, fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// One entry of a hand-made archive: its path, bytes and kind.
type TarEntry<'a> = (&'a str, &'a [u8], tar::EntryType);

/// A tar archive of `entries` as another tool might write it.
fn tar_of(entries: &[TarEntry]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes, kind) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(*kind);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        // set_path refuses `..`; a hostile archive writes the name bytes itself.
        let name = &mut header.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

#[test]
fn a_run_folder_archived_and_imported_elsewhere_has_the_same_files_and_reads_the_same() {
    let dir = test_dir("archive-round-trip");
    let folder = write_run(&dir.join("here"), "carried", 0.01);
    let slot = folder.join(CHECKPOINTS_DIR).join("last");
    fs::create_dir_all(&slot).unwrap();
    fs::write(slot.join(MODEL_FILE), [7u8; 3000]).unwrap();
    fs::write(folder.join("summary.tmp"), b"half").unwrap();

    let bytes = pack(&kiln_formats::files::Disk, &folder).unwrap();
    assert_eq!(
        pack(&kiln_formats::files::Disk, &folder).unwrap(),
        bytes,
        "one folder packs to the same bytes"
    );
    let archive = read_archive(&bytes).unwrap();
    assert_eq!(archive.name, folder_name_of(&folder));
    // A folder's files in name order come before its folders' (as `tar -tf` lists them).
    let order: Vec<&Path> = archive.files.iter().map(|(p, _)| p.as_path()).collect();
    assert_eq!(order.first(), Some(&Path::new(CONFIG_FILE)));
    let nested = |path: &&Path| path.components().count() > 1;
    let first_nested = order.iter().position(&nested).unwrap();
    assert!(order[first_nested..].iter().all(nested));
    assert_eq!(order[first_nested], Path::new("checkpoints/last/model.bpk"));

    let imported = import(&archive, &dir.join("there")).unwrap();
    assert_eq!(folder_name_of(&imported), folder_name_of(&folder));
    let mut expected = files_under(&folder);
    expected.retain(|(path, _)| path != Path::new("summary.tmp"));
    assert_eq!(files_under(&imported), expected);
    let (original, copy) = (
        RunHistory::load(&folder).unwrap(),
        RunHistory::load(&imported).unwrap(),
    );
    assert_eq!(copy.name, "carried");
    assert_eq!(copy.metrics, original.metrics);
    assert_eq!(copy.epochs, original.epochs);
    assert!(copy.summary.is_some() && copy.problems.is_empty());

    // Imported again, it gets a name of its own rather than writing into the first copy.
    let again = import(&archive, &dir.join("there")).unwrap();
    assert_eq!(
        folder_name_of(&again),
        format!("{}-2", folder_name_of(&folder))
    );
    assert_eq!(list_runs(&dir.join("there")).unwrap().len(), 2);
}

#[test]
fn a_gzipped_archive_or_one_written_by_tar_from_dot_imports_too() {
    use std::io::Write;
    let config = ExperimentDraft::default().validate().unwrap().to_toml();
    let bytes = tar_of(&[
        ("./20260101-000000-a/", b"", tar::EntryType::Directory),
        (
            "./20260101-000000-a/config.toml",
            config.as_bytes(),
            tar::EntryType::Regular,
        ),
    ]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    for bytes in [bytes.clone(), gz.finish().unwrap()] {
        let archive = read_archive(&bytes).unwrap();
        assert_eq!(archive.name, "20260101-000000-a");
        assert_eq!(
            archive.files,
            vec![(PathBuf::from(CONFIG_FILE), config.as_bytes().to_vec())]
        );
    }
}

#[test]
fn an_archive_that_is_cut_damaged_or_not_a_run_is_refused_whole_with_its_reason() {
    let dir = test_dir("archive-refusals");
    let folder = write_run(&dir, "whole", 0.01);
    let bytes = pack(&kiln_formats::files::Disk, &folder).unwrap();
    let refusal = |bytes: &[u8]| read_archive(bytes).unwrap_err().to_string();

    // Cut inside a file, and cut exactly between two files (the entries alone look whole).
    assert!(refusal(&bytes[..bytes.len() / 2]).contains("cut short"));
    let between = 512
        + 512
            * fs::read(folder.join(CONFIG_FILE))
                .unwrap()
                .len()
                .div_ceil(512);
    assert!(refusal(&bytes[..between]).contains("cut short"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz = gz.finish().unwrap();
    assert!(refusal(&gz[..gz.len() / 2]).contains("cut short"));

    assert!(refusal(b"").contains("the file is empty"));
    assert!(refusal(&[b'x'; 2048]).contains("not a run folder archive"));
    assert!(refusal(&[0u8; 10240]).contains("holds no run: it is empty"));

    let file = tar::EntryType::Regular;
    let cases: [(&[TarEntry], &str); 6] = [
        (
            &[("run/../../escape", b"x", file)],
            "leaves the run's folder",
        ),
        (
            &[("/etc/run/config.toml", b"x", file)],
            "leaves the run's folder",
        ),
        (
            &[("run/config.toml", b"x", tar::EntryType::Symlink)],
            "is a link or a device",
        ),
        (
            &[
                ("run/config.toml", b"x", file),
                ("other/metrics.csv", b"x", file),
            ],
            "in a second folder",
        ),
        (&[("config.toml", b"x", file)], "beside the run's folder"),
        (
            &[("run/notes.txt", b"x", file)],
            "has neither config.toml nor metrics.csv",
        ),
    ];
    for (entries, reason) in cases {
        let message = refusal(&tar_of(entries));
        assert!(message.contains(reason), "{message} should say {reason}");
    }
    assert!(
        !dir.join("escape").exists(),
        "a refused archive writes nothing"
    );
}

#[test]
fn packing_a_folder_that_is_not_a_run_says_so() {
    let dir = test_dir("archive-not-a-run");
    let disk = kiln_formats::files::Disk;
    let missing = pack(&disk, &dir.join("gone")).unwrap_err();
    assert!(matches!(missing, FolderError::NotFound { .. }), "{missing}");
    fs::create_dir_all(dir.join("photos")).unwrap();
    let stray = pack(&disk, &dir.join("photos")).unwrap_err();
    assert!(matches!(stray, FolderError::NotARun { .. }), "{stray}");
}

#[test]
fn every_cut_of_an_archive_is_refused_and_none_panics() {
    let dir = test_dir("archive-every-cut");
    let bytes = pack(&kiln_formats::files::Disk, &write_run(&dir, "cut", 0.01)).unwrap();
    for cut in (0..bytes.len())
        .step_by(61)
        .chain((0..bytes.len()).step_by(512))
    {
        assert!(
            read_archive(&bytes[..cut]).is_err(),
            "{cut} of {} bytes read as a whole archive",
            bytes.len()
        );
    }
    assert!(read_archive(&bytes).is_ok());
}

#[test]
fn runs_imported_into_memory_list_and_read_as_the_same_runs_on_disk() {
    let dir = test_dir("archive-memory");
    let older = write_run(&dir, "older", 0.01);
    std::thread::sleep(Duration::from_millis(1100));
    let newer = write_run(&dir, "newer", 0.1);
    let mut memory = kiln_formats::files::MemoryFiles::new();
    let runs = Path::new("runs");
    for folder in [&older, &newer, &older] {
        let archive = read_archive(&pack(&kiln_formats::files::Disk, folder).unwrap()).unwrap();
        import_in_memory(&archive, &mut memory, runs).unwrap();
    }
    let listed = list_runs_in(&memory, runs).unwrap();
    let names: Vec<String> = listed.iter().map(|p| folder_name_of(p)).collect();
    let (old_name, new_name) = (folder_name_of(&older), folder_name_of(&newer));
    assert_eq!(names, [new_name, format!("{old_name}-2"), old_name.clone()]);
    for (in_memory, on_disk) in listed.iter().zip([&newer, &older, &older]) {
        let (memory_run, disk_run) = (
            RunHistory::load_in(&memory, in_memory).unwrap(),
            RunHistory::load(on_disk).unwrap(),
        );
        assert_eq!(memory_run.name, disk_run.name);
        assert_eq!(memory_run.metrics, disk_run.metrics);
        assert_eq!(memory_run.epochs, disk_run.epochs);
        assert_eq!(memory_run.problems, disk_run.problems);
        assert_eq!(
            memory_run.summary.map(|s| s.epochs_completed),
            disk_run.summary.map(|s| s.epochs_completed)
        );
    }
    let missing = RunHistory::load_in(&memory, &runs.join("gone")).unwrap_err();
    assert!(matches!(missing, FolderError::NotFound { .. }), "{missing}");
    assert_eq!(
        list_runs_in(&memory, Path::new("elsewhere")).unwrap(),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn a_file_stored_as_a_hard_link_to_an_earlier_one_imports_with_its_bytes() {
    // GNU tar writes the second of two hard-linked checkpoint files this way.
    let archive = |link_to: &str| {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(3);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "run/metrics.csv", &b"abc"[..])
            .unwrap();
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Link);
        link.set_size(0);
        builder
            .append_link(&mut link, "run/checkpoints/best/model.bpk", link_to)
            .unwrap();
        builder.into_inner().unwrap()
    };
    let read = read_archive(&archive("run/metrics.csv")).unwrap();
    assert_eq!(
        read.files[1],
        (PathBuf::from("checkpoints/best/model.bpk"), b"abc".to_vec())
    );
    for elsewhere in ["run/missing.csv", "other/metrics.csv", "/etc/passwd"] {
        let message = read_archive(&archive(elsewhere)).unwrap_err().to_string();
        assert!(
            message.contains("is a link to a file that is not earlier"),
            "{message}"
        );
    }
}

#[test]
fn a_run_kept_in_a_page_has_the_files_and_bytes_of_the_same_run_on_disk() {
    let dir = test_dir("page-runs");
    let experiment = ExperimentDraft {
        name: "paged".to_owned(),
        ..ExperimentDraft::default()
    }
    .validate()
    .unwrap();
    let runs = Path::new(page_runs::RUNS_DIR);
    let mut on_disk = RunFolder::create(&dir, &experiment).unwrap();
    let mut in_page = RunFolder::create_in_page(runs, &experiment).unwrap();
    let again = RunFolder::create_in_page(runs, &experiment).unwrap();
    assert_eq!(
        folder_name_of(again.path()),
        format!("{}-2", folder_name_of(in_page.path())),
        "a second run of the same second gets a name of its own"
    );
    for folder in [&mut on_disk, &mut in_page] {
        record_two_epochs(folder);
    }
    let archive = page_runs::with(|files| pack(files, in_page.path())).unwrap();
    let mut from_page = read_archive(&archive).unwrap().files;
    from_page.sort();
    assert_eq!(
        without_event_times(from_page),
        without_event_times(files_under(on_disk.path()))
    );
    let listed = page_runs::with(|files| list_runs_in(files, runs)).unwrap();
    assert_eq!(listed, [again.path(), in_page.path()]);
    let read = page_runs::with(|files| RunHistory::load_in(files, in_page.path())).unwrap();
    assert_eq!(
        read.metrics,
        RunHistory::load(on_disk.path()).unwrap().metrics
    );
}

/// `files` with each event file's bytes replaced by its scalars' series, step and value (their
/// wall times differ between two runs written side by side), and its name by its folder's.
fn without_event_times(files: Vec<(PathBuf, Vec<u8>)>) -> Vec<(PathBuf, Vec<u8>)> {
    files
        .into_iter()
        .map(|(path, bytes)| {
            let name = path.file_name().unwrap().to_string_lossy();
            if !kiln_formats::tensorboard::is_event_file_name(&name) {
                return (path, bytes);
            }
            let log = kiln_formats::tensorboard::read_event_file(&bytes);
            let scalars: Vec<String> = log
                .scalars
                .iter()
                .map(|s| format!("{} {} {}", s.tag, s.step, s.value))
                .collect();
            (
                path.parent().unwrap().to_owned(),
                scalars.join("\n").into_bytes(),
            )
        })
        .collect()
}

#[test]
fn a_reloaded_page_gets_back_the_runs_the_browser_kept_and_names_those_it_cannot_read() {
    let experiment = ExperimentDraft {
        name: "kept".to_owned(),
        ..ExperimentDraft::default()
    }
    .validate()
    .unwrap();
    let mut folder =
        RunFolder::create_in_page(Path::new(page_runs::RUNS_DIR), &experiment).unwrap();
    record_two_epochs(&mut folder);
    let run = folder.path().to_owned();
    let name = page_runs::stored_name(&run).unwrap();
    let kept = page_runs::packed(&run).unwrap().unwrap();
    let before = page_runs::with(|files| RunHistory::load_in(files, &run)).unwrap();

    // A reload: the page's memory starts empty, the browser's storage still holds the archive.
    page_runs::with_mut(|files| *files = kiln_formats::files::MemoryFiles::new());
    let restored = page_runs::restore(vec![
        (name.clone(), kept.clone()),
        (
            "20260101-000000-cut".to_owned(),
            kept[..kept.len() / 2].to_vec(),
        ),
        ("20260101-000000-other".to_owned(), kept.clone()),
    ]);
    assert_eq!(restored.runs, std::slice::from_ref(&run));
    assert_eq!(restored.unreadable.len(), 2, "{:?}", restored.unreadable);
    assert!(restored.unreadable[0].starts_with("20260101-000000-cut: "));
    assert!(restored.unreadable[1].contains("holds another run"));
    let after = page_runs::with(|files| RunHistory::load_in(files, &run)).unwrap();
    assert_eq!(after.metrics, before.metrics);
    assert_eq!(after.epochs, before.epochs);

    assert_eq!(
        page_runs::restore(vec![(name, kept.clone())]),
        page_runs::Restored::default(),
        "a run the page already holds is not put back twice"
    );
    let imported = page_runs::import(&kept).unwrap();
    assert_eq!(
        folder_name_of(&imported),
        format!("{}-2", folder_name_of(&run))
    );
    assert!(page_runs::import(b"not an archive").is_err());
    page_runs::with_mut(|files| files.remove(&run));
    assert!(
        page_runs::packed(&run).is_none(),
        "a deleted run has nothing to keep"
    );
}

#[test]
fn a_page_run_renamed_keeps_its_rows_under_the_new_name_and_refuses_what_the_disk_refuses() {
    let experiment = ExperimentDraft {
        name: "first".to_owned(),
        ..ExperimentDraft::default()
    }
    .validate()
    .unwrap();
    let runs = Path::new(page_runs::RUNS_DIR);
    let mut folder = RunFolder::create_in_page(runs, &experiment).unwrap();
    record_two_epochs(&mut folder);
    let path = folder.path().to_owned();
    let stamp = folder_name_of(&path)[..15].to_owned();
    let taken = runs.join(format!("{stamp}-taken")).join(CONFIG_FILE);
    page_runs::with_mut(|files| files.insert(&taken, b"name = \"taken\"\n".to_vec())).unwrap();
    let before = page_runs::with(|files| RunHistory::load_in(files, &path)).unwrap();

    let renamed = page_runs::with_mut(|files| rename_run_in(files, &path, "second")).unwrap();
    assert_eq!(folder_name_of(&renamed), format!("{stamp}-second"));
    let after = page_runs::with(|files| RunHistory::load_in(files, &renamed)).unwrap();
    assert_eq!(after.name, "second");
    assert_eq!(after.metrics, before.metrics);
    assert_eq!(after.epochs, before.epochs);
    assert!(!page_runs::with(|files| {
        kiln_formats::files::FileTree::is_dir(files, &path)
    }));

    let err = page_runs::with_mut(|files| rename_run_in(files, &renamed, "taken")).unwrap_err();
    assert!(matches!(err, FolderError::Exists { .. }), "{err}");
    let err = page_runs::with_mut(|files| rename_run_in(files, &renamed, "a b")).unwrap_err();
    assert!(matches!(err, FolderError::BadName { .. }), "{err}");
    let err = page_runs::with_mut(|files| rename_run_in(files, &path, "x")).unwrap_err();
    assert!(matches!(err, FolderError::NotFound { .. }), "{err}");
}

#[test]
fn a_folder_being_written_refuses_a_second_writer_a_rename_and_a_delete_naming_its_writer() {
    let runs_dir = test_dir("one-writer");
    let experiment = ExperimentDraft {
        name: "held".to_owned(),
        ..ExperimentDraft::default()
    }
    .validate()
    .unwrap();
    let writing = RunFolder::create(&runs_dir, &experiment).unwrap();
    let folder = writing.path().to_owned();
    // Seen trying Kiln: `kiln train --resume` on a run another process still trained trained it
    // beside the first, and the first, cancelled afterwards, overwrote the finished summary.
    let refused = FolderLock::acquire(&folder).unwrap_err().to_string();
    let this = format!("process {} (", std::process::id());
    assert!(refused.contains(&this), "{refused}");
    assert!(refused.contains("is being written by"), "{refused}");
    for refused in [
        rename_run(&folder, "other").map(|_| ()),
        delete_run(&folder),
    ] {
        assert!(
            matches!(refused, Err(FolderError::Locked { .. })),
            "{refused:?}"
        );
    }
    assert!(held_by(&folder).is_some());

    // The hold ends with the writer, and the next one reopens the folder.
    drop(writing);
    assert_eq!(held_by(&folder), None);
    let lock = FolderLock::acquire(&folder).unwrap();
    drop(RunFolder::reopen(lock, 0).unwrap());
    delete_run(&folder).unwrap();
}

/// The scalars of the event files in `run/series`, by tag, as (step, value) in file order.
fn event_series(run: &Path, series: &str) -> std::collections::BTreeMap<String, Vec<(i64, f64)>> {
    let mut by_tag = std::collections::BTreeMap::<String, Vec<(i64, f64)>>::new();
    let mut files: Vec<PathBuf> = fs::read_dir(run.join(series))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let log = kiln_formats::tensorboard::read_event_file(&fs::read(&file).unwrap());
        assert_eq!(log.stop, None, "{}", file.display());
        for scalar in log.scalars {
            by_tag
                .entry(scalar.tag)
                .or_default()
                .push((scalar.step, scalar.value));
        }
    }
    by_tag
}

#[test]
fn a_run_writes_tensorboard_event_files_laid_out_as_keras_lays_out_its_own() {
    let dir = test_dir("tensorboard-live");
    let run = write_run(&dir, "tb", 0.01);
    let train = event_series(&run, tensorboard::TRAIN_EVENTS_DIR);
    // Keras logs epoch figures at the epoch counted from 0.
    assert_eq!(train["epoch_loss"], vec![(0, 1.0), (1, 1.0)]);
    assert_eq!(train["epoch_accuracy"].len(), 2);
    assert!((train["epoch_accuracy"][1].1 - 0.6).abs() < 1e-6);
    assert!((train["epoch_learning_rate"][0].1 - 1e-3).abs() < 1e-9);
    assert_eq!(train["epoch_samples_per_sec"], vec![(0, 900.0), (1, 900.0)]);
    assert_eq!(train["epoch_secs"], vec![(0, 5.0), (1, 5.0)]);
    let steps: Vec<i64> = train["batch_loss"].iter().map(|&(step, _)| step).collect();
    assert_eq!(steps, vec![1, 2, 3, 4, 5, 11, 12, 13, 14, 15]);
    assert_eq!(train["batch_loss"][1].1, 1.0);
    assert_eq!(train["batch_step_ms"][0].1, 2.5);
    // These rows were evaluated on test: that is what the validation series holds.
    let validation = event_series(&run, tensorboard::VALIDATION_EVENTS_DIR);
    let tags: Vec<&String> = validation.keys().collect();
    assert_eq!(tags, ["epoch_accuracy", "epoch_loss"]);
    assert!((validation["epoch_loss"][0].1 - 1.1).abs() < 1e-6);
    assert_eq!(validation["epoch_accuracy"].len(), 2);
}

#[test]
fn event_files_exported_from_a_runs_csvs_hold_what_the_run_wrote_live() {
    let dir = test_dir("tensorboard-export");
    let live = write_run(&dir, "tb", 0.01);
    let history = RunHistory::load(&live).unwrap();
    let out = dir.join("exported");
    for (relative, bytes) in tensorboard::event_files_of(&history, 0.0) {
        let path = out.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
    for series in [
        tensorboard::TRAIN_EVENTS_DIR,
        tensorboard::VALIDATION_EVENTS_DIR,
    ] {
        let (exported, written) = (event_series(&out, series), event_series(&live, series));
        assert_eq!(
            exported.keys().collect::<Vec<_>>(),
            written.keys().collect::<Vec<_>>()
        );
        for (tag, points) in exported {
            // The CSVs keep six decimals; the live files the loop's own figures.
            for (&(step, value), &(live_step, live_value)) in points.iter().zip(&written[&tag]) {
                assert_eq!(step, live_step, "{tag}");
                assert!(
                    (value - live_value).abs() <= 1e-6,
                    "{tag}: {value} {live_value}"
                );
            }
            assert_eq!(points.len(), written[&tag].len());
        }
    }
}

#[test]
fn an_exported_event_carries_the_time_the_run_folders_name_gives() {
    let run = RunHistory {
        path: PathBuf::from("runs/20261207-031500-tb"),
        epochs: vec![epoch_end(0)],
        ..RunHistory::default()
    };
    let files = tensorboard::event_files_of(&run, 0.0);
    let train = kiln_formats::tensorboard::read_event_file(&files[0].1);
    let start = UNIX_EPOCH + Duration::from_secs_f64(train.scalars[0].wall_time - 5.5);
    assert_eq!(timestamp(start), "20261207-031500");
    // A folder whose name holds no time takes the given one.
    let renamed = RunHistory {
        path: PathBuf::from("runs/my-run"),
        ..run
    };
    let files = tensorboard::event_files_of(&renamed, 100.0);
    let train = kiln_formats::tensorboard::read_event_file(&files[0].1);
    assert_eq!(train.scalars[0].wall_time, 105.5);
}

#[test]
fn a_multi_label_runs_predictions_read_back_as_written_names_and_thresholds_included() {
    use crate::results::multi_label::{LabelPredictions, LabelScores, report};
    let runs = test_dir("label-predictions");
    let experiment = ExperimentDraft::default().validate().unwrap();
    let mut folder = RunFolder::create(&runs, &experiment).unwrap();
    let predictions = LabelPredictions {
        label_names: vec!["sea".into(), "sky, \"clear\"".into(), "🚤".into()],
        scores: LabelScores {
            labels: 3,
            probabilities: vec![0.9, 0.125, 0.75, 0.5, 0.25, 0.0625],
            truth: vec![vec![0, 2], vec![]],
        },
        thresholds: vec![0.5, 0.25, 0.7],
        files: vec![PathBuf::from("a,b.png"), PathBuf::from("c.png")],
    };
    folder
        .record(&TrainEvent::LabelPredictions(Box::new(predictions.clone())))
        .unwrap();
    let summary = RunSummary {
        label_report: Some(report(&predictions.scores, &predictions.thresholds)),
        ..RunSummary::new("cpu", 1, 0.0, 0.0)
    };
    folder
        .record(&TrainEvent::Finished(Box::new(summary)))
        .unwrap();
    let tree = kiln_formats::files::Disk;
    let read = load_label_predictions_in(&tree, folder.path())
        .unwrap()
        .expect("a multi-label run's predictions");
    assert_eq!(read, predictions);
    // A run of one class per image has none.
    let single = write_run(&runs, "single", 0.1);
    assert_eq!(load_label_predictions_in(&tree, &single).unwrap(), None);
}
