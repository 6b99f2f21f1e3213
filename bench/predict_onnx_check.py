#!/usr/bin/env python3
r"""Checks that `kiln predict` over a person's nested folder, broken files and all, gives every
image the probabilities onnxruntime computes from the run's exported ONNX model, and that
`--sort-into` only ever reads the originals.

This is a manual check, not a test. In a scratch folder it

  1. draws the data set of onnx_export_check.py (3 classes, 32x32 RGB, seeded; shared through
     export_check_data.py), trains on the CPU (a second or two) and exports the run:

         kiln train --dataset folder:DATA@32 --model cnn --epochs 10 --optimizer adam \
             --lr 0.001 --batch-size 16 --device cpu --runs-dir RUNS --name predict-check \
             --val-split 0
         kiln export-model RUN --onnx RUN/model.onnx

     (one epoch of SGD leaves this CNN at 1/3 +- 0.01 for every image, all in one class, so
     neither the likeliest class nor sorting into several folders would be put to the test;
     ten epochs of Adam spread the probabilities to 0.34..0.42 over two classes);

  2. writes `photos/`, a folder a person might have: freshly drawn 32x32 images (so `kiln
     predict` resizes nothing) at depths 0 to 3, in lossless formats (PNG as RGB, grayscale,
     RGBA and palette; BMP; TIFF raw and LZW; lossless WebP; GIF; a PNG misnamed .jpg), a few
     JPEGs (decoders round JPEG differently, so these only have to get a row), the same file
     name in two folders, a name with a comma and an accent; and broken files: a truncated PNG,
     a text file named .png, an empty .jpg, notes.txt, plus a hidden file and Thumbs.db (which
     Kiln passes over without a row). It records every file's SHA-256, size, inode and mtime,
     and puts a file of the person's own into `sorted/<class>/` for every class, under the name
     one of the photos has;
  3. runs, from the scratch folder,

         kiln predict RUN photos --csv out-copy.csv --top 3 --device cpu --sort-into sorted --copy
         kiln predict RUN photos --csv out-link.csv --top 3 --device cpu --sort-into sorted-link \
             --link --batch-size 5
         kiln predict RUN photos --csv out-again.csv --top 3 --device cpu --sort-into sorted --copy

     (the second in batches of 5, so broken files fall inside batches; the third sorts into the
     same folder again, where every name is now taken);
  4. decodes the lossless files with Pillow (RGB uint8 HWC -> CHW float32 0..255, no scaling:
     the graph scales; input `pixels`, output `probabilities`, as onnx_export_check.py), runs
     them through onnxruntime (CPUExecutionProvider) in one batch, and compares every row of
     both CSVs: the likeliest class is onnxruntime's argmax, and each of the K probabilities
     Kiln printed (6 decimals) is onnxruntime's probability of that class within 2e-6 plus the
     5e-7 of Kiln's rounding (--tolerance).

It then checks that each run exits 0 (an unreadable file is a row, not an error) and lists
one row per file in path order, none for the hidden file and the junk; that every broken file's
row has a reason and no classes, and every image's (JPEGs too) K classes and no reason; that
sorted/<likeliest class>/ holds a byte-for-byte copy of every readable image (twice after the
third run, as name-2.ext, name-3.ext...), sorted-link/ an absolute symbolic link to each, and
nothing else, the person's own files intact and what the first run placed untouched by the
third; and that every original under photos/ has the SHA-256, size, inode and mtime it had, with
none added or gone.

Prints Kiln's own summary lines and its reasons for the broken files, then one line per check,
PASS or FAIL with its figures (files, rows, max |dp|, how many printed probabilities are
onnxruntime's to the last decimal, entries per class folder) and an INFO line with the images/s
of the first `kiln predict` (whole command, and as Kiln reports it), then what differs, if
anything. Exits 1 when a check fails.

Needs onnx, onnxruntime, numpy and Pillow (no torch) and a kiln build:

    python3 -m venv /tmp/onnxenv && /tmp/onnxenv/bin/pip install -q onnx onnxruntime numpy pillow
    cargo build --release
    /tmp/onnxenv/bin/python bench/predict_onnx_check.py --kiln target/release/kiln
    /tmp/onnxenv/bin/python bench/predict_onnx_check.py --kiln target/release/kiln --keep /tmp/predict-check
"""

import argparse
import csv
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from PIL import Image

from export_check_data import CLASSES, ROUNDING, SIDE, TOLERANCE, draw_shape, make_dataset, run_kiln

REPO = Path(__file__).resolve().parent.parent
TOP = 3
RUN_NAME = "predict-check"
PERSONS_OWN = b"the person's own file, which Kiln must never replace\n"


# ---------------------------------------------------------------------------------------------
# The run


def train_and_export(kiln, data, runs):
    """Trains the one run every `kiln predict` here uses and exports it as ONNX; returns the run
    folder. The check is about agreement, not accuracy: the training only has to move the
    probabilities away from a third each (see the module docstring)."""
    run_kiln(kiln, [
        "train", "--dataset", f"folder:{data}@{SIDE}", "--model", "cnn",
        "--epochs", "10", "--optimizer", "adam", "--lr", "0.001", "--batch-size", "16", "--device", "cpu",
        "--runs-dir", str(runs), "--name", RUN_NAME, "--val-split", "0",
    ])
    found = [p for p in runs.iterdir() if p.is_dir()]
    if len(found) != 1:
        raise RuntimeError(f"expected one run folder in {runs}, found {[p.name for p in found]}")
    run = found[0]
    out = run_kiln(kiln, ["export-model", str(run), "--onnx", str(run / "model.onnx")])
    print(f"run: {run.name}; " + out.strip().replace("\n", "; "))
    return run


def onnx_class_names(model):
    """The class names as the exported graph states them (its doc string ends `classes: a, b`),
    so the probabilities' columns are named by the ONNX file itself, not by Kiln's model.json."""
    match = re.search(r"classes: (.*)$", model.doc_string or "")
    if not match:
        raise RuntimeError(f"the ONNX doc string names no classes: {model.doc_string!r}")
    return match.group(1).split(", ")


# ---------------------------------------------------------------------------------------------
# The person's folder


class Photos:
    """What write_photos put where (paths relative to the scratch folder, as Kiln's CSV shows
    them when it runs there): images compared with onnxruntime, JPEGs that only need a row,
    broken files that need a row with a reason, and files that must get no row at all."""

    def __init__(self):
        self.lossless, self.jpeg, self.broken, self.ignored = [], [], [], []

    def all_listed(self):
        """Every file Kiln should list, in its order: sorted by path (Rust's Path ordering,
        component by component, which Python's PurePath ordering matches for these names)."""
        return sorted(self.lossless + self.jpeg + self.broken, key=lambda p: Path(p).parts)


def write_photos(root, seed):
    """Writes root/photos as described in the module docstring; returns a Photos."""
    rng = random.Random(seed)
    photos = Photos()

    def drawn():
        return draw_shape(rng, rng.choice(CLASSES))

    def save(rel, image, kind, **params):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path, **params)
        getattr(photos, kind).append(rel)

    # Lossless images, at every depth and in every lossless form Kiln reads.
    for depth, folder in enumerate(["photos", "photos/a", "photos/a/b", "photos/a/b/c"]):
        for i in range(4):
            save(f"{folder}/shape-{depth}{i}.png", drawn(), "lossless")
    save("photos/same.png", drawn(), "lossless")
    save("photos/a/b/c/same.png", drawn(), "lossless")  # the same name deeper: sorted apart
    save("photos/a/b/c/holiday, beach été.png", drawn(), "lossless")  # a CSV cell to quote
    save("photos/a/grey.png", drawn().convert("L"), "lossless")
    rgba = drawn().convert("RGBA")
    rgba.putalpha(Image.new("L", rgba.size, 128))
    save("photos/a/alpha.png", rgba, "lossless")
    save("photos/a/b/palette.png", drawn().convert("P", palette=Image.Palette.ADAPTIVE, colors=16),
         "lossless")
    save("photos/a/b/windows.bmp", drawn(), "lossless")
    save("photos/a/b/scan.tif", drawn(), "lossless")
    save("photos/a/b/c/scan-lzw.tiff", drawn(), "lossless", compression="tiff_lzw")
    save("photos/a/b/c/phone.webp", drawn(), "lossless", lossless=True)
    save("photos/a/b/anim.gif", drawn().convert("P", palette=Image.Palette.ADAPTIVE, colors=32),
         "lossless")
    save("photos/misnamed.jpg", drawn(), "lossless", format="PNG")  # the content decides

    # JPEGs: they must get a row with probabilities; their values are not compared.
    save("photos/IMG_0001.JPG", drawn(), "jpeg", quality=90)
    save("photos/a/b/c/IMG_0002.jpeg", drawn(), "jpeg", quality=75)
    save("photos/a/b/IMG_0003.jpg", drawn(), "jpeg", quality=95)

    # Broken files: each must get a row with its reason, and none may stop the run.
    whole = root / "photos/a/shape-10.png"
    broken = {
        "photos/a/truncated.png": whole.read_bytes()[: len(whole.read_bytes()) // 2],
        "photos/a/b/not-really.png": b"This is a shopping list, not a picture.\n",
        "photos/a/b/c/empty.jpg": b"",
        "photos/notes.txt": b"Holiday 2024: the photos of the beach are in a/b/c.\n",
    }
    for rel, data in broken.items():
        (root / rel).write_bytes(data)
        photos.broken.append(rel)

    # Passed over without a word: hidden files and photo tools' junk.
    drawn().save(root / "photos/a/.hidden.png")
    (root / "photos/a/b/Thumbs.db").write_bytes(b"\x00" * 64)
    photos.ignored += ["photos/a/.hidden.png", "photos/a/b/Thumbs.db"]
    return photos


def snapshot(folder):
    """{relative path: (sha256, size, inode, mtime_ns)} of every file under `folder`, hidden ones
    included, links not followed: what `kiln predict` must leave exactly as it was."""
    state = {}
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            state[str(path.relative_to(folder))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_ino, st.st_mtime_ns)
    return state


def put_persons_own_files(sorted_dir, classes, name):
    """Puts a file of the person's own named `name` into every class folder of `sorted_dir`, so
    whichever class the photo of that name lands in, its name is already taken."""
    for c in classes:
        (sorted_dir / c).mkdir(parents=True, exist_ok=True)
        (sorted_dir / c / name).write_bytes(PERSONS_OWN)


# ---------------------------------------------------------------------------------------------
# Kiln and onnxruntime


def predict(kiln, root, run, csv_name, extra):
    """Runs `kiln predict` from `root` over `photos` (as a person in that folder would); returns
    (exit status, stderr, seconds, rows as dicts, header). Never raises on a non-zero exit: the
    exit status is one of the checks."""
    command = [str(kiln), "predict", str(run), "photos", "--csv", csv_name,
               "--top", str(TOP), "--device", "cpu", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    secs = time.perf_counter() - started
    print(f"$ {' '.join(command[:1] + ['predict', 'RUN'] + command[3:])}\n  exit {done.returncode}; "
          + done.stderr.strip().replace("\n", "\n  "))
    header, rows = [], []
    if (root / csv_name).is_file():
        with open(root / csv_name, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    return done.returncode, done.stderr, secs, rows, header


def onnx_probabilities(model_path, root, rels):
    """onnxruntime's probabilities [N, classes] for the files `rels`, decoded by Pillow to RGB
    and fed raw (0..255 float32, CHW), in one batch."""
    arrays = []
    for rel in rels:
        with Image.open(root / rel) as image:
            array = np.asarray(image.convert("RGB"), dtype=np.uint8)
        assert array.shape == (SIDE, SIDE, 3), f"{rel} is {array.shape}"
        arrays.append(array.transpose(2, 0, 1))
    x = np.stack(arrays).astype(np.float32)
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    (probs,) = session.run(["probabilities"], {"pixels": x})
    return probs.astype(np.float64)


# ---------------------------------------------------------------------------------------------
# The checks: each returns (ok, figures) and lists what differs in `problems`


def check_rows(rows, header, photos, run, problems):
    """One row per listed file, in path order, under the documented header; none for hidden
    files or junk; the run column names the run."""
    want_header = ["path"] + [f"{w}_{k}" for k in range(1, TOP + 1) for w in ("label", "probability")]
    want_header += ["run", "error"]
    got = [r["path"] for r in rows]
    want = photos.all_listed()
    ok = header == want_header and got == want and all(r["run"] == run.name for r in rows)
    if header != want_header:
        problems.append(f"header {header}, not {want_header}")
    if got != want:
        problems.append(f"rows {got}\n    expected {want}")
    for rel in photos.ignored:
        if rel in got:
            problems.append(f"{rel} got a row; hidden files and junk should be passed over")
    return ok, f"{len(want)} files listed, {len(rows)} rows"


def check_broken(rows, photos, exit_status, problems):
    """Each broken file has a row with a reason and no classes, every image has K classes and no
    reason, and kiln exited 0 (unreadable files are rows, not an error: app/src/cli/predict.rs)."""
    by_path = {r["path"]: r for r in rows}
    bad = 0
    for rel in photos.broken:
        r = by_path.get(rel)
        if r is None or not r["error"].strip() or any(r[f"label_{k}"] for k in range(1, TOP + 1)):
            bad += 1
            problems.append(f"broken {rel}: row {r}")
    for rel in photos.lossless + photos.jpeg:
        r = by_path.get(rel)
        if r is None or r["error"] or not all(r[f"label_{k}"] for k in range(1, TOP + 1)):
            bad += 1
            problems.append(f"image {rel}: row {r}")
    if exit_status != 0:
        problems.append(f"kiln predict exited {exit_status}")
    return bad == 0 and exit_status == 0, (
        f"exit {exit_status}; {len(photos.broken) - sum(1 for rel in photos.broken if rel not in by_path)}"
        f"/{len(photos.broken)} broken files have a row with a reason and no classes; "
        f"{len(photos.lossless) + len(photos.jpeg)} images ({len(photos.jpeg)} JPEG) have {TOP} "
        f"classes and no reason")


def check_probabilities(rows, photos, probs, classes, tolerance, problems):
    """For every lossless file: kiln's likeliest class is onnxruntime's argmax (or ties with it
    within the tolerance, where float noise may pick either), its K labels are distinct and
    ranked, and each printed probability is onnxruntime's for that class within `tolerance` plus
    Kiln's rounding. Returns also the largest difference."""
    by_path = {r["path"]: r for r in rows}
    worst, agree, exact = 0.0, 0, 0
    for rel, p in zip(photos.lossless, probs):
        r = by_path.get(rel)
        if r is None:
            problems.append(f"{rel}: no row")
            continue
        labels = [r[f"label_{k}"] for k in range(1, TOP + 1)]
        printed = [float(r[f"probability_{k}"]) for k in range(1, TOP + 1)]
        if labels[0] == classes[int(p.argmax())]:
            agree += 1
        elif labels[0] in classes and p.max() - p[classes.index(labels[0])] < tolerance:
            agree += 1
            print(f"(information) {rel}: {labels[0]} ties with onnxruntime's argmax "
                  f"{classes[int(p.argmax())]} within {tolerance:g}")
        else:
            problems.append(f"{rel}: kiln's likeliest {labels[0]} ({printed[0]:.6f}), onnxruntime's "
                            f"{classes[int(p.argmax())]} ({p.max():.7f}); onnx {p.round(7).tolist()}")
        if len(set(labels)) != TOP or any(a < b for a, b in zip(printed, printed[1:])):
            problems.append(f"{rel}: labels {labels} with {printed} are not distinct and ranked")
        for label, q in zip(labels, printed):
            if label not in classes:
                problems.append(f"{rel}: unknown class {label!r}")
                continue
            diff = abs(q - p[classes.index(label)])
            exact += f"{p[classes.index(label)]:.6f}" == r[f"probability_{labels.index(label) + 1}"]
            worst = max(worst, diff)
            if diff >= tolerance + ROUNDING:
                problems.append(f"{rel}: P({label}) kiln {q:.6f}, onnxruntime "
                                f"{p[classes.index(label)]:.8f}, |dp| {diff:.2e}")
    ok = agree == len(photos.lossless) and worst < tolerance + ROUNDING
    return ok, worst, f"{len(photos.lossless)} lossless images, top-1 agrees on {agree}, " \
                      f"max |dp| {worst:.2e} over {TOP} classes each (limit {tolerance + ROUNDING:.1e}); " \
                      f"{exact}/{TOP * len(photos.lossless)} printed probabilities are onnxruntime's " \
                      f"to all 6 decimals"


def sorted_files(sorted_dir):
    """{relative path: path} of every entry (file or link) under `sorted_dir`."""
    found = {}
    for dirpath, _, filenames in os.walk(sorted_dir):
        for name in filenames:
            path = Path(dirpath) / name
            found[str(path.relative_to(sorted_dir))] = path
    return found


def numbered_names(rel):
    """The names Kiln may give `rel` in a class folder: its own, then stem-2.ext, stem-3.ext…"""
    p = Path(rel)
    return [p.name] + [f"{p.stem}-{n}{p.suffix}" for n in range(2, 10)]


def check_sorted(sorted_dir, rows, root, original, copies_per_image, mode, persons_own, problems):
    """Every readable image is `copies_per_image` times under sorted_dir/<its likeliest class>/,
    as a byte-for-byte copy (or, for links, a link to the original's absolute path) named after
    it; nothing else is there but the person's own files, which are intact; no broken file was
    placed."""
    entries = sorted_files(sorted_dir)
    unclaimed = dict(entries)
    intact = 0
    for rel in persons_own:
        path = unclaimed.pop(rel, None)
        if path is None or path.is_symlink() or path.read_bytes() != PERSONS_OWN:
            problems.append(f"{sorted_dir.name}/{rel}: the person's own file was replaced or removed")
        else:
            intact += 1
    placed = 0
    for r in rows:
        if r["error"]:
            continue
        source = root / r["path"]
        want_sha = original[str(Path(r["path"]).relative_to("photos"))][0]
        for _ in range(copies_per_image):
            found = None
            for name in numbered_names(r["path"]):
                key = str(Path(r["label_1"]) / name)
                path = unclaimed.get(key)
                if path is None:
                    continue
                if mode == "link":
                    # An absolute link, so it still works when sorted/ is moved elsewhere.
                    target = os.readlink(path) if path.is_symlink() else ""
                    good = os.path.isabs(target) and os.path.realpath(target) == os.path.realpath(source)
                else:
                    good = not path.is_symlink() and \
                        hashlib.sha256(path.read_bytes()).hexdigest() == want_sha
                if good:
                    found = key
                    break
            if found is None:
                problems.append(f"{r['path']} ({r['label_1']}): no {mode} of it under "
                                f"{sorted_dir.name}/{r['label_1']}/")
            else:
                del unclaimed[found]
                placed += 1
    for key in sorted(unclaimed):
        problems.append(f"{sorted_dir.name}/{key}: placed there, but no readable image accounts for it")
    readable = sum(1 for r in rows if not r["error"])
    ok = placed == readable * copies_per_image and not unclaimed and intact == len(persons_own)
    folders = {c: sum(1 for k in entries if Path(k).parts[0] == c)
               for c in sorted({Path(k).parts[0] for k in entries})}
    return ok, (f"{placed}/{readable * copies_per_image} {'copies' if mode == 'copy' else 'links'} "
                f"in place, {intact}/{len(persons_own)} of the person's own intact; entries per class "
                f"folder {folders}")


def check_originals(before, after, problems):
    """Every original is where it was, with the same bytes, size, inode and mtime; nothing was
    added to or taken from photos/."""
    changed = [k for k in before if k in after and before[k] != after[k]]
    gone = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    for k in changed:
        problems.append(f"photos/{k} changed: {before[k]} -> {after[k]}")
    for k in gone:
        problems.append(f"photos/{k} is gone")
    for k in added:
        problems.append(f"photos/{k} appeared")
    ok = not (changed or gone or added)
    return ok, f"{len(before)} originals (SHA-256, size, inode, mtime): {len(changed)} changed, " \
               f"{len(gone)} gone, {len(added)} added"


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", type=Path, default=REPO / "target" / "release" / "kiln",
                        help="the kiln binary (default: %(default)s)")
    parser.add_argument("--keep", type=Path,
                        help="work in this (empty or new) folder and keep it (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the drawn images")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="largest allowed probability difference, before Kiln's 5e-7 "
                             "rounding (default: %(default)s)")
    args = parser.parse_args()

    kiln = args.kiln.resolve()
    if not kiln.is_file():
        print(f"no kiln binary at {kiln} (cargo build --release, or --kiln PATH)", file=sys.stderr)
        return 2
    temp = None
    if args.keep:
        root = args.keep.resolve()
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            print(f"{root} is not empty", file=sys.stderr)
            return 2
    else:
        temp = tempfile.TemporaryDirectory(prefix="kiln-predict-check-")
        root = Path(temp.name)

    make_dataset(root / "data", args.seed)
    run = train_and_export(kiln, root / "data", root / "runs")
    model = onnx.load(str(run / "model.onnx"))
    classes = onnx_class_names(model)
    photos = write_photos(root, args.seed + 1)
    original = snapshot(root / "photos")
    collide = Path(photos.lossless[0]).name  # the person's own file takes this photo's name
    put_persons_own_files(root / "sorted", classes, collide)
    persons_own = [f"{c}/{collide}" for c in classes]
    print(f"scratch folder {root}; classes {classes}; {len(original)} files under photos/ "
          f"({len(photos.lossless)} lossless, {len(photos.jpeg)} JPEG, {len(photos.broken)} broken, "
          f"{len(photos.ignored)} hidden or junk); onnx {onnx.__version__}, onnxruntime {ort.__version__}")

    results, problems = [], []

    def record(name, ok, figures):
        """One line of the report; ok is None for figures that are information, not a check
        (bool() because a comparison of numpy values is a numpy bool, never `is False`)."""
        results.append((name, None if ok is None else bool(ok), figures))

    copy = predict(kiln, root, run, "out-copy.csv", ["--sort-into", "sorted", "--copy"])
    status, stderr, secs, rows, header = copy
    first_sort = check_sorted(root / "sorted", rows, root, original, 1, "copy", persons_own, problems)
    sorted_after_first = snapshot(root / "sorted")
    l_status, _, _, l_rows, l_header = predict(
        kiln, root, run, "out-link.csv", ["--sort-into", "sorted-link", "--link", "--batch-size", "5"])
    a_status, _, _, a_rows, _ = predict(
        kiln, root, run, "out-again.csv", ["--sort-into", "sorted", "--copy"])
    probs = onnx_probabilities(run / "model.onnx", root, photos.lossless)

    record("rows (copy run)", *check_rows(rows, header, photos, run, problems))
    record("broken files (copy run)", *check_broken(rows, photos, status, problems))
    ok, _, figures = check_probabilities(rows, photos, probs, classes, args.tolerance, problems)
    record("probabilities = onnxruntime (copy run)", ok, figures)
    record("rows (link run, batches of 5)", *check_rows(l_rows, l_header, photos, run, problems))
    record("broken files (link run)", *check_broken(l_rows, photos, l_status, problems))
    ok, _, figures = check_probabilities(l_rows, photos, probs, classes, args.tolerance, problems)
    record("probabilities = onnxruntime (link run)", ok, figures)
    differ = sum(1 for r, s in zip(rows, l_rows) if r != s)
    print(f"(information) the CSVs of batches of 64 and of 5 differ in {differ} of {len(rows)} rows")

    record("sort --copy into sorted/", *first_sort)
    record("sort --link into sorted-link/", *check_sorted(
        root / "sorted-link", l_rows, root, original, 1, "link", [], problems))
    ok, figures = check_sorted(root / "sorted", rows, root, original, 2, "copy", persons_own, problems)
    now = snapshot(root / "sorted")
    kept = all(now.get(k) == v for k, v in sorted_after_first.items())
    if not kept:
        problems.append("a file sorted/ held before the third run was changed or removed by it")
    if a_rows != rows:
        problems.append("the third run's CSV differs from the first's")
    record("sort --copy again into the same sorted/", ok and kept and a_status == 0 and a_rows == rows,
           f"exit {a_status}; {figures}; the {len(sorted_after_first)} files there before "
           f"{'untouched' if kept else 'CHANGED'}")
    record("originals untouched", *check_originals(original, snapshot(root / "photos"), problems))

    read = sum(1 for r in rows if not r["error"])
    match = re.search(r"\(([\d.]+) images/s", stderr)
    record("speed (copy run)", None,
           f"{read} images in {secs:.2f} s whole command = {read / secs:.0f} images/s; "
           f"kiln says {match.group(1) if match else '?'} images/s")

    print("\nkiln's reasons for the broken files:")
    for r in rows:
        if r["error"]:
            print(f"  {r['path']}: {r['error']}")
    print()
    for name, ok, figures in results:
        print(f"{'INFO' if ok is None else 'PASS' if ok else 'FAIL'}  {name}: {figures}")
    if problems:
        print("\nwhat differs:")
        for p in problems:
            print(f"  {p}")
    if temp is not None:
        temp.cleanup()
    return 1 if any(ok is False for _, ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
