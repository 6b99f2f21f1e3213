#!/usr/bin/env python3
r"""Checks that TensorBoard's own reader reads the event files Kiln writes, with the figures of
the run's epochs.csv.

A manual check, not a test (the tests read the files with Kiln's reader and check the CRC-32C
against RFC 3720's vectors). It

  1. trains a small run on the built-in data, on the CPU, with no network:

         kiln train --model mlp:16 --epochs 3 --batch-size 256 --device cpu \
             --runs-dir RUNS --name tensorboard-check

     which writes RUN/train/events.out.tfevents.* and RUN/validation/events.out.tfevents.*
     as it trains;
  2. writes the same run's files again from its CSVs, as for a run from before Kiln wrote them:
     `kiln export RUN --tensorboard OUT` (OUT/<run>/train, OUT/<run>/validation);
  3. reads every file record by record with TensorBoard's reader (its TensorFlow stub, which
     checks each record's masked CRC-32C and raises on a mismatch), and then series by series
     with `EventAccumulator`, the loader `tensorboard --logdir` used before its Rust data
     server;
  4. compares, for each of the four folders, `epoch_loss` and `epoch_accuracy` at steps
     0, 1, 2 (Keras counts epochs from 0) with epochs.csv's train_* (train/) and val_* (or
     test_* for a run validated on test) (validation/), within 1e-6 plus float32 rounding.

Prints one row per folder (records, tags, PASS/FAIL) and exits 1 on any failure.

Needs tensorboard (no TensorFlow) and a kiln build:

    python3 -m venv /tmp/tbenv && /tmp/tbenv/bin/pip install tensorboard
    cargo build
    /tmp/tbenv/bin/python bench/tensorboard_check.py [--kiln target/debug/kiln] [--keep DIR]
"""

import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow


def records_of(path):
    """Every record of an event file through TensorBoard's reader, which checks the CRCs."""
    reader = pywrap_tensorflow.PyRecordReader_New(path.encode(), 0, b"", None)
    count = 0
    while True:
        try:
            reader.GetNext()
        except Exception as e:  # the stub raises errors.OutOfRangeError at the end
            if type(e).__name__ == "OutOfRangeError":
                return count
            raise
        count += 1


def series_of(folder):
    """{tag: [(step, value)]} as EventAccumulator reads the folder."""
    acc = event_accumulator.EventAccumulator(folder, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        out[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
    for tag in acc.Tags().get("tensors", []):
        out.setdefault(tag, [])
        for e in acc.Tensors(tag):
            out[tag].append((e.step, float(e.tensor_proto.float_val[0])))
    return out


def expected_of(run):
    """epochs.csv's figures as the two folders should hold them."""
    with open(os.path.join(run, "epochs.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    train = {
        "epoch_loss": [(int(r["epoch"]) - 1, float(r["train_loss"])) for r in rows],
        "epoch_accuracy": [(int(r["epoch"]) - 1, float(r["train_accuracy"])) for r in rows],
    }
    evaluated = "val" if rows and rows[0]["val_accuracy"] else "test"
    validation = {
        "epoch_loss": [(int(r["epoch"]) - 1, float(r[f"{evaluated}_loss"])) for r in rows],
        "epoch_accuracy": [(int(r["epoch"]) - 1, float(r[f"{evaluated}_accuracy"])) for r in rows],
    }
    return {"train": train, "validation": validation}


def check(folder, expected):
    files = sorted(glob.glob(os.path.join(folder, "*tfevents*")))
    if not files:
        return False, f"no event file in {folder}"
    records = sum(records_of(f) for f in files)
    series = series_of(folder)
    problems = []
    for tag, points in expected.items():
        got = series.get(tag)
        if got is None:
            problems.append(f"{tag} missing")
            continue
        if [s for s, _ in got] != [s for s, _ in points]:
            problems.append(f"{tag} steps {[s for s, _ in got]} != {[s for s, _ in points]}")
            continue
        worst = max(abs(a - b) for (_, a), (_, b) in zip(got, points))
        if worst > 1e-6 + 1e-7 * max(abs(b) for _, b in points):
            problems.append(f"{tag} differs by {worst:.2e}")
    detail = f"{records} records, tags {sorted(series)}"
    return not problems, detail + ("; " + "; ".join(problems) if problems else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default="target/debug/kiln")
    parser.add_argument("--keep", help="work in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="kiln-tensorboard-check-")
    os.makedirs(work, exist_ok=True)
    runs, out = os.path.join(work, "runs"), os.path.join(work, "exported")
    subprocess.run(
        [args.kiln, "train", "--model", "mlp:16", "--epochs", "3", "--batch-size", "256",
         "--device", "cpu", "--runs-dir", runs, "--name", "tensorboard-check"],
        check=True, stdout=subprocess.DEVNULL)
    (run,) = [os.path.join(runs, d) for d in os.listdir(runs)]
    subprocess.run([args.kiln, "export", run, "--tensorboard", out], check=True,
                   stdout=subprocess.DEVNULL)
    expected = expected_of(run)
    exported = os.path.join(out, os.path.basename(run))
    failed = 0
    for label, folder in [("live", run), ("exported", exported)]:
        for series in ("train", "validation"):
            ok, detail = check(os.path.join(folder, series), expected[series])
            failed += not ok
            print(f"{label:9} {series:11} {'PASS' if ok else 'FAIL'}  {detail}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
