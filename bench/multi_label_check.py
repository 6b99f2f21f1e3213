#!/usr/bin/env python3
r"""Checks a multi-label training run end to end: every figure of its test report, as Kiln
writes it to report.csv and summary.json, against scikit-learn's from the run's own
predictions.csv.

This is a manual check, not a test. In a scratch folder it

  1. builds a multi-label image set from real MNIST: each image 56x56 grayscale, a 2x2 grid of
     28x28 quadrants, each quadrant holding an MNIST digit with probability 0.45 (else black),
     drawn again until it holds at least one; its labels are the distinct digits in it ("0".."9").
     Training images take their digits from MNIST's training set, test images from its test set,
     and no MNIST image is used twice. It writes WORK/images/{train,test}/NNNNN.png and
     WORK/labels.csv (`path,labels,split`, labels joined by `;`, paths relative to the CSV);
  2. trains on it on the CPU, timed:

         kiln train --dataset csv:WORK/labels.csv@56 --multi-label --model cnn --epochs E \
             --device cpu --threshold per-label --runs-dir WORK/runs --seed S

     (thresholds per label, chosen on the validation images, so report.csv and summary.json
     are put to the test at thresholds other than 0.5);
  3. reads the run's predictions.csv (per test image its true labels as 0/1 and a probability
     per label), report.csv and summary.json, and computes with scikit-learn, from
     predictions.csv and the thresholds alone: average_precision_score per label (labels with
     no positive left out) and their mean (mAP); precision_recall_fscore_support per label and
     its micro, macro and weighted averages, accuracy_score (subset accuracy) and hamming_loss,
     each image given a label when its probability is at or above that label's threshold.

It checks that predictions.csv holds exactly the test images written, with their labels; that
report.csv and summary.json give each label the same threshold; that every figure of report.csv
is scikit-learn's within 1e-6 (it prints 6 decimals) and every figure of summary.json within
1e-9 (counts exactly); and that summary.json's final_test_accuracy, the label accuracy counted on
the device at 0.5 whatever the thresholds, is 1 - hamming_loss of (p >= 0.5) within 1e-5 (the
device counts in f32; one of 6 000 decisions on the other side of 0.5 would be 1.7e-4).

Prints the data set's figures, the wall seconds of `kiln train` and its per-label report, a
table per label (Kiln's and scikit-learn's AP and F1), one PASS/FAIL line per figure group with
its largest difference, then what differs, if anything, and the run's mAP, micro F1, subset
accuracy and Hamming loss. Exits 1 when a check fails.

Needs numpy, Pillow and scikit-learn, MNIST's four IDX files (gzipped or not) and a kiln build:

    python3 -m venv /tmp/onnxenv && /tmp/onnxenv/bin/pip install -q numpy pillow scikit-learn
    cargo build --release
    /tmp/onnxenv/bin/python bench/multi_label_check.py --kiln target/release/kiln
    /tmp/onnxenv/bin/python bench/multi_label_check.py --kiln target/release/kiln --work /tmp/ml
    /tmp/onnxenv/bin/python bench/multi_label_check.py --only-data --train 50 --test 20 --work /tmp/ml
"""

import argparse
import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.metrics import (accuracy_score, average_precision_score, hamming_loss,
                             precision_recall_fscore_support)

REPO = Path(__file__).resolve().parent.parent
DIGIT = 28
SIDE = 2 * DIGIT
QUADRANT_P = 0.45
LABELS = [str(d) for d in range(10)]
REPORT_TOLERANCE = 1e-6
SUMMARY_TOLERANCE = 1e-9
LABEL_ACCURACY_TOLERANCE = 1e-5
AVERAGES = {"micro avg": "micro_avg", "macro avg": "macro_avg", "weighted avg": "weighted_avg"}


# ---------------------------------------------------------------------------------------------
# MNIST and the multi-label set


def read_idx(folder, stem):
    """The IDX file `stem` of `folder` as a numpy array, gzipped or not, whichever is there
    (also under the `stem.idx3-ubyte` spelling some mirrors use)."""
    found = [(folder / (name + suffix), opener)
             for name in (stem, stem.replace("-idx", ".idx"))
             for suffix, opener in (("", open), (".gz", gzip.open))
             if (folder / (name + suffix)).is_file()]
    if not found:
        raise FileNotFoundError(f"no {stem}[.gz] in {folder}")
    path, opener = found[0]
    with opener(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\0\0" or data[2] != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes (magic {data[:4].hex()})")
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if array.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {array.size} bytes for shape {shape}")
    return array.reshape(shape)


def read_mnist(folder):
    """{"train": (images [N,28,28], digits [N]), "test": ...} from MNIST's four IDX files."""
    sets = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images = read_idx(folder, f"{prefix}-images-idx3-ubyte")
        digits = read_idx(folder, f"{prefix}-labels-idx1-ubyte")
        if images.shape[1:] != (DIGIT, DIGIT) or len(images) != len(digits):
            raise ValueError(f"MNIST {split}: images {images.shape}, labels {digits.shape}")
        sets[split] = (images, digits)
    return sets


def compose(rng, images, digits, count, split):
    """`count` 56x56 images built from `images`, each MNIST image used at most once; returns
    (pixels [count,56,56] uint8, label sets as sorted lists of digit names)."""
    order = rng.permutation(len(images))
    used = 0
    pixels = np.zeros((count, SIDE, SIDE), dtype=np.uint8)
    label_sets = []
    for i in range(count):
        # Drawn again until some quadrant holds a digit: an image with no label has nothing to
        # learn from, and Kiln's labels file needs a label in every row.
        while True:
            filled = rng.random(4) < QUADRANT_P
            if filled.any():
                break
        present = set()
        for quadrant in np.flatnonzero(filled):
            if used == len(order):
                raise ValueError(f"MNIST's {split} set has too few images for {count} {split} images")
            source = order[used]
            used += 1
            row, col = divmod(int(quadrant), 2)
            pixels[i, row * DIGIT:(row + 1) * DIGIT, col * DIGIT:(col + 1) * DIGIT] = images[source]
            present.add(int(digits[source]))
        label_sets.append([str(d) for d in sorted(present)])
    return pixels, label_sets


def write_dataset(work, mnist, train, test, seed):
    """Writes WORK/images/{train,test}/*.png and WORK/labels.csv; returns {relative path:
    (split, label list)} in the CSV's order."""
    # One stream per split, so --train does not change which test images are drawn.
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)]
    written = {}
    rows = []
    for (split, count), rng in zip((("train", train), ("test", test)), streams):
        images, digits = mnist[split]
        pixels, label_sets = compose(rng, images, digits, count, split)
        folder = work / "images" / split
        folder.mkdir(parents=True, exist_ok=True)
        for i, (image, labels) in enumerate(zip(pixels, label_sets)):
            rel = f"images/{split}/{i:05d}.png"
            Image.fromarray(image, mode="L").save(work / rel)
            written[rel] = (split, labels)
            rows.append([rel, ";".join(labels), split])
    with open(work / "labels.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["path", "labels", "split"])
        out.writerows(rows)
    return written


def describe_dataset(written):
    """Prints, per split, images, labels per image and how many images have each digit."""
    for split in ("train", "test"):
        sets = [labels for s, labels in written.values() if s == split]
        if not sets:
            continue
        per_image = np.bincount([len(s) for s in sets], minlength=5)[1:]
        have = {d: sum(d in s for s in sets) for d in LABELS}
        print(f"{split}: {len(sets)} images, {np.mean([len(s) for s in sets]):.2f} labels per image "
              f"(1..4 labels: {per_image.tolist()}); images with each digit "
              + " ".join(f"{d}:{n}" for d, n in have.items()))


# ---------------------------------------------------------------------------------------------
# The run


def train(kiln, work, args):
    """Runs `kiln train` on WORK/labels.csv and returns (run folder, wall seconds). Kiln's
    progress goes straight to our stderr; its stdout (the per-label report) is printed after."""
    runs = work / "runs"
    before = {p for p in runs.iterdir()} if runs.is_dir() else set()
    # --multi-label says what the `;` cells already imply, so that even a tiny set whose every
    # image drew one distinct digit still trains as multi-label.
    command = [str(kiln), "train", "--dataset", f"csv:{work / 'labels.csv'}@{SIDE}", "--multi-label",
               "--model", args.model, "--epochs", str(args.epochs), "--device", "cpu",
               "--threshold", "per-label", "--runs-dir", str(runs), "--seed", str(args.seed)]
    print("$ " + " ".join(command), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    secs = time.perf_counter() - started
    print(done.stdout.rstrip())
    print(f"kiln train: exit {done.returncode}, {secs:.1f} s wall")
    if done.returncode != 0:
        raise RuntimeError(f"kiln train exited {done.returncode}")
    # Only a folder this run made counts, so a reused --work with older runs still works.
    found = [p for p in runs.iterdir() if p not in before and (p / "summary.json").is_file()]
    if len(found) != 1:
        raise RuntimeError(f"expected one new run folder with summary.json in {runs}, "
                           f"found {[p.name for p in found]}")
    return found[0], secs


def read_predictions(run):
    """(label names, files, y_true [images, labels] int, p [images, labels] float64).

    Kiln writes each f32 probability as its shortest round-trip decimal. Read as a double it is
    not the f32 itself, but every order between two of them, every tie and every comparison with
    a threshold written the same way comes out as in f32, and those are all AP and the
    thresholded figures depend on."""
    with open(run / "predictions.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    names = [h[len("true "):] for h in header if h.startswith("true ")]
    p_names = [h[len("p "):] for h in header if h.startswith("p ")]
    if header[:2] != ["index", "file"] or names != p_names or len(header) != 2 + 2 * len(names):
        raise ValueError(f"predictions.csv: unexpected header {header}")
    n = len(names)
    if any(len(r) != len(header) for r in rows):
        raise ValueError("predictions.csv: a row's cells do not match the header")
    files = [r[1] for r in rows]
    y_true = np.array([[int(c) for c in r[2:2 + n]] for r in rows], dtype=np.int64).reshape(-1, n)
    p = np.array([[float(c) for c in r[2 + n:]] for r in rows], dtype=np.float64).reshape(-1, n)
    return names, files, y_true, p


def read_report(run):
    """(per-label rows in order, {row name: row} of the rest) of report.csv, as dicts."""
    with open(run / "report.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        want = ["label", "precision", "recall", "f1", "support", "average_precision", "threshold"]
        if reader.fieldnames != want:
            raise ValueError(f"report.csv: header {reader.fieldnames}, not {want}")
        rows = list(reader)
    tail_names = list(AVERAGES) + ["subset accuracy", "hamming loss"]
    first_tail = next((i for i, r in enumerate(rows) if r["label"] == "micro avg"), len(rows))
    tail = {r["label"]: r for r in rows[first_tail:]}
    if list(tail) != tail_names:
        raise ValueError(f"report.csv: rows after the labels are {list(tail)}, not {tail_names}")
    return rows[:first_tail], tail


# ---------------------------------------------------------------------------------------------
# scikit-learn


def sklearn_figures(y_true, p, thresholds):
    """Every figure of the report, from predictions.csv and the thresholds alone."""
    y_pred = (p >= thresholds[None, :]).astype(np.int64)
    n = y_true.shape[1]
    ap = [average_precision_score(y_true[:, j], p[:, j]) if y_true[:, j].any() else None
          for j in range(n)]
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, average=None, zero_division=0)
    averages = {}
    for row, average in zip(AVERAGES, ("micro", "macro", "weighted")):
        averages[row] = precision_recall_fscore_support(
            y_true, y_pred, average=average, zero_division=0)[:3]
    at_half = (p >= 0.5).astype(np.int64)
    present = [a for a in ap if a is not None]
    return {
        "ap": ap,
        "map": float(np.mean(present)) if present else 0.0,
        "precision": precision, "recall": recall, "f1": f1, "support": support,
        "predicted": y_pred.sum(axis=0),
        "averages": averages,
        "subset_accuracy": accuracy_score(y_true, y_pred),
        "hamming_loss": hamming_loss(y_true, y_pred),
        "label_accuracy": 1.0 - hamming_loss(y_true, at_half),
    }


# ---------------------------------------------------------------------------------------------
# The checks


class Group:
    """One figure group: the largest difference from scikit-learn in report.csv and in
    summary.json, and what is out of tolerance."""

    def __init__(self, name, json_tolerance=SUMMARY_TOLERANCE):
        self.name = name
        self.json_tolerance = json_tolerance
        self.worst_csv = None
        self.worst_json = None
        self.compared = 0
        self.note = ""
        self.problems = []

    def csv(self, what, cell, want):
        """A report.csv cell (text, 6 decimals) against scikit-learn's figure."""
        self.compared += 1
        if cell is None or cell == "":
            self.problems.append(f"report.csv {what}: empty, scikit-learn {want:.9f}")
            return
        diff = abs(float(cell) - want)
        self.worst_csv = max(self.worst_csv or 0.0, diff)
        if not diff <= REPORT_TOLERANCE:
            self.problems.append(f"report.csv {what}: kiln {cell}, scikit-learn {want:.9f}")

    def json(self, what, value, want):
        """A summary.json figure against scikit-learn's."""
        self.compared += 1
        if value is None:
            self.problems.append(f"summary.json {what}: null, scikit-learn {want:.12f}")
            return
        diff = abs(float(value) - want)
        self.worst_json = max(self.worst_json or 0.0, diff)
        if not diff <= self.json_tolerance:
            self.problems.append(f"summary.json {what}: kiln {value!r}, scikit-learn {want:.12f}")

    def equal(self, what, got, want):
        """Counts and names, which must agree exactly."""
        self.compared += 1
        if got != want:
            self.problems.append(f"{what}: kiln {got!r}, expected {want!r}")

    def line(self):
        figures = [f"{self.compared} compared"]
        if self.worst_csv is not None:
            figures.append(f"max |d| report.csv {self.worst_csv:.1e} (limit {REPORT_TOLERANCE:g})")
        if self.worst_json is not None:
            figures.append(f"summary.json {self.worst_json:.1e} (limit {self.json_tolerance:g})")
        figures = "; ".join(figures) + self.note
        return f"{'FAIL' if self.problems else 'PASS'}  {self.name}: {figures}"


def check_test_set(work, written, names, files, y_true):
    """predictions.csv lists exactly the test images written, each with the labels written."""
    group = Group("test set = the images written")
    test = {os.path.realpath(work / rel): labels for rel, (split, labels) in written.items()
            if split == "test"}
    # Kiln orders labels by name; every digit drawn anywhere in the set is one.
    group.equal("label names", names, sorted({d for _, labels in written.values() for d in labels}))
    group.equal("test images", len(files), len(test))
    seen = set()
    for file, truth in zip(files, y_true):
        path = Path(file)
        # Kiln names the file as it read it: joined to the labels file's folder, or as written.
        resolved = os.path.realpath(path if path.is_absolute() else work / path)
        if resolved not in test:
            group.problems.append(f"predictions.csv names {file!r}, not a test image written")
            continue
        seen.add(resolved)
        got = sorted(names[j] for j in np.flatnonzero(truth))
        group.equal(f"labels of {file}", got, test[resolved])
    if len(seen) != len(files):
        group.problems.append(f"{len(files) - len(seen)} row(s) repeat or name no written image")
    return group


def check_thresholds(names, label_rows, per_label):
    """Both files name the labels in predictions.csv's order and give each the same threshold."""
    group = Group("thresholds: report.csv = summary.json")
    group.equal("report.csv labels", [r["label"] for r in label_rows], names)
    group.equal("summary.json per_label entries", len(per_label), len(names))
    for name, row, entry in zip(names, label_rows, per_label):
        # Each is one f32, written as its shortest decimal; compared as f32 so that a JSON
        # writer spelling out the f32's every digit would still agree.
        group.equal(f"threshold of {name}", np.float32(row["threshold"]),
                    np.float32(entry["threshold"]))
        if not 0.0 <= float(row["threshold"]) <= 1.0:
            group.problems.append(f"threshold of {name} is {row['threshold']}, outside 0..1")
    return group


def check_figures(names, label_rows, tail, report, sk):
    """Every figure of report.csv and summary.json against scikit-learn's; one Group each."""
    per_label = report["per_label"]
    ap = Group("per-label average precision")
    prf = Group("per-label precision, recall, F1")
    counts = Group("per-label support and images given the label")
    for j, (name, row, entry) in enumerate(zip(names, label_rows, per_label)):
        if sk["ap"][j] is None:
            ap.equal(f"report.csv AP of {name} (no positive)", row["average_precision"], "")
            ap.equal(f"summary.json AP of {name} (no positive)", entry["average_precision"], None)
        else:
            ap.csv(f"AP of {name}", row["average_precision"], sk["ap"][j])
            ap.json(f"AP of {name}", entry["average_precision"], sk["ap"][j])
        at = entry["at_threshold"]
        for figure in ("precision", "recall", "f1"):
            prf.csv(f"{figure} of {name}", row[figure], float(sk[figure][j]))
            prf.json(f"{figure} of {name}", at[figure], float(sk[figure][j]))
        counts.equal(f"report.csv support of {name}", int(row["support"]), int(sk["support"][j]))
        counts.equal(f"summary.json support of {name}", at["support"], int(sk["support"][j]))
        counts.equal(f"summary.json predicted of {name}", at["predicted"], int(sk["predicted"][j]))

    groups = [ap, prf, counts]
    total_support = int(sk["support"].sum())
    for row_name, key in AVERAGES.items():
        group = Group(row_name)
        want = sk["averages"][row_name]
        for figure, value in zip(("precision", "recall", "f1"), want):
            group.csv(f"{row_name} {figure}", tail[row_name][figure], float(value))
            group.json(f"{key}.{figure}", report[key][figure], float(value))
        group.equal(f"report.csv {row_name} support", int(tail[row_name]["support"]), total_support)
        group.equal(f"summary.json {key}.support", report[key]["support"], total_support)
        group.equal(f"summary.json {key}.predicted", report[key]["predicted"],
                    int(sk["predicted"].sum()))
        groups.append(group)

    mean_ap = Group("mAP (mean AP over labels with a positive)")
    mean_ap.csv("macro avg average_precision", tail["macro avg"]["average_precision"], sk["map"])
    mean_ap.json("mean_average_precision", report["mean_average_precision"], sk["map"])
    subset = Group("subset accuracy")
    subset.csv("subset accuracy", tail["subset accuracy"]["f1"], sk["subset_accuracy"])
    subset.json("subset_accuracy", report["subset_accuracy"], sk["subset_accuracy"])
    hamming = Group("Hamming loss")
    hamming.csv("hamming loss", tail["hamming loss"]["f1"], sk["hamming_loss"])
    hamming.json("hamming_loss", report["hamming_loss"], sk["hamming_loss"])
    return groups + [mean_ap, subset, hamming]


def check_label_accuracy(summary, sk):
    """final_test_accuracy is the label accuracy at 0.5, counted on the device in f32."""
    group = Group("final_test_accuracy = 1 - Hamming loss at 0.5", LABEL_ACCURACY_TOLERANCE)
    value = summary.get("final_test_accuracy")
    group.json("final_test_accuracy", value, sk["label_accuracy"])
    group.note = f"; kiln {value}, scikit-learn {sk['label_accuracy']:.9f}"
    return group


def print_label_table(names, label_rows, per_label, sk):
    """Kiln's and scikit-learn's AP and F1 side by side, with support and threshold."""
    print(f"\n{'label':>6} {'support':>7} {'given':>5} {'threshold':>10} {'AP kiln':>9} {'AP sklearn':>10} "
          f"{'F1 kiln':>9} {'F1 sklearn':>10}")
    for j, (name, row, entry) in enumerate(zip(names, label_rows, per_label)):
        ap = "-" if sk["ap"][j] is None else f"{sk['ap'][j]:.6f}"
        print(f"{name:>6} {row['support']:>7} {entry['at_threshold']['predicted']:>5} "
              f"{float(row['threshold']):>10.6f} {row['average_precision'] or '-':>9} {ap:>10} "
              f"{row['f1']:>9} {sk['f1'][j]:>10.6f}")


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default="kiln",
                        help="the kiln binary, a path or a name on PATH (default: %(default)s)")
    parser.add_argument("--mnist", type=Path, default=REPO.parent / "shared" / "data" / "mnist",
                        help="folder of MNIST's four IDX files, gzipped or not (default: %(default)s)")
    parser.add_argument("--work", type=Path,
                        help="scratch folder, kept afterwards (default: a temp dir, removed)")
    parser.add_argument("--train", type=int, default=3000, help="training images (default: %(default)s)")
    parser.add_argument("--test", type=int, default=600, help="test images (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=4, help="epochs to train (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1,
                        help="seeds the drawn images and kiln train (default: %(default)s)")
    parser.add_argument("--model", default="cnn", help="kiln's --model (default: %(default)s)")
    parser.add_argument("--only-data", action="store_true",
                        help="stop after writing the images and labels.csv (needs no kiln)")
    args = parser.parse_args()

    kiln = None
    if not args.only_data:
        found = shutil.which(args.kiln)
        if found is None:
            print(f"no kiln binary at {args.kiln} (cargo build --release, or --kiln PATH)",
                  file=sys.stderr)
            return 2
        kiln = Path(found).resolve()
    temp = None
    if args.work:
        work = args.work.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="kiln-multi-label-check-")
        work = Path(temp.name)
    try:
        return run_check(args, kiln, work)
    finally:
        if temp is not None:
            temp.cleanup()


def run_check(args, kiln, work):
    mnist = read_mnist(args.mnist)
    written = write_dataset(work, mnist, args.train, args.test, args.seed)
    print(f"scratch folder {work}; MNIST from {args.mnist} "
          f"({len(mnist['train'][0])} training, {len(mnist['test'][0])} test digits)")
    describe_dataset(written)
    print(f"wrote {work / 'labels.csv'}")
    if args.only_data:
        return 0

    run, secs = train(kiln, work, args)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    report = summary.get("label_report")
    if report is None:
        print(f"FAIL  {run.name}/summary.json has no label_report: the run did not train as "
              f"multi-label")
        return 1
    names, files, y_true, p = read_predictions(run)
    label_rows, tail = read_report(run)
    # report.csv's thresholds, not summary.json's: written as shortest decimals like the
    # probabilities, so that p >= threshold between the two doubles is the f32 comparison.
    thresholds = np.array([float(r["threshold"]) for r in label_rows], dtype=np.float64)
    if len(thresholds) != len(names):
        print(f"FAIL  report.csv has {len(thresholds)} label rows, predictions.csv {len(names)} labels")
        return 1
    sk = sklearn_figures(y_true, p, thresholds)

    print(f"\nrun {run.name}: {len(files)} test images, {len(names)} labels, "
          f"{int((thresholds != 0.5).sum())} label(s) with a threshold other than 0.5; "
          f"kiln train {secs:.1f} s wall")
    print_label_table(names, label_rows, report["per_label"], sk)

    groups = [check_test_set(work, written, names, files, y_true),
              check_thresholds(names, label_rows, report["per_label"])]
    groups += check_figures(names, label_rows, tail, report, sk)
    groups.append(check_label_accuracy(summary, sk))

    print()
    for group in groups:
        print(group.line())
    problems = [problem for group in groups for problem in group.problems]
    if problems:
        print("\nwhat differs:")
        for problem in problems[:50]:
            print(f"  {problem}")
        if len(problems) > 50:
            print(f"  ... and {len(problems) - 50} more")
    micro_f1 = report["micro_avg"]["f1"]
    print(f"\nthe run's test report: mAP {report['mean_average_precision']:.4f}, micro F1 "
          f"{micro_f1:.4f}, subset accuracy {report['subset_accuracy']:.4f}, Hamming loss "
          f"{report['hamming_loss']:.4f} (label accuracy at 0.5 "
          f"{summary.get('final_test_accuracy')}); kiln train {secs:.1f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
