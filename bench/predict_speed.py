#!/usr/bin/env python3
"""How fast `kiln predict` classifies a folder of photos, beside how fast the same run evaluated.

Writes the first N Fashion-MNIST test images as PNG files into a scratch folder (one
sub-folder per label, so the folder is nested as a person's is), runs `kiln predict` over it
with a completed run's model, and prints images/s of the whole command (listing, decoding,
batching, the forward passes, the CSV) beside the run's evaluation images/s from epochs.csv
(test images already in memory). Standard library only.

    python3 bench/predict_speed.py RUN [--kiln target/release/kiln] [--images 10000]
        [--data ../shared/data/fashion-mnist] [--device cpu] [--batch-size 64]
"""

import argparse
import csv
import gzip
import os
import struct
import subprocess
import tempfile
import time
import zlib


def png_gray(width, height, pixels):
    """An 8-bit grayscale PNG of `pixels` (row-major bytes)."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + pixels[y * width:(y + 1) * width] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def write_pngs(data_dir, count, out):
    with gzip.open(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz")) as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        images = f.read()
    with gzip.open(os.path.join(data_dir, "t10k-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        labels = f.read()
    count = min(count, n)
    size = rows * cols
    for i in range(count):
        folder = os.path.join(out, f"label-{labels[i]}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{i:05}.png"), "wb") as f:
            f.write(png_gray(cols, rows, images[i * size:(i + 1) * size]))
    return count


def evaluation_rate(run):
    """Test images per second of the run's last evaluation, from epochs.csv and summary.json."""
    import json

    with open(os.path.join(run, "summary.json")) as f:
        summary = json.load(f)
    test = (summary.get("split_sizes") or {}).get("test")
    with open(os.path.join(run, "epochs.csv")) as f:
        last = list(csv.DictReader(f))[-1]
    secs = float(last["eval_secs"])
    return (test / secs, test, secs) if test and secs > 0 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("--kiln", default="target/release/kiln")
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--data", default="../shared/data/fashion-mnist")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", default="64")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        photos = os.path.join(scratch, "photos")
        count = write_pngs(args.data, args.images, photos)
        out = os.path.join(scratch, "predictions.csv")
        command = [args.kiln, "predict", args.run, photos, "--csv", out,
                   "--device", args.device, "--batch-size", args.batch_size]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        secs = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"kiln predict failed: {done.stderr}")
        with open(out) as f:
            rows = sum(1 for _ in f) - 1
        print(done.stderr.strip())
        print(f"kiln predict, whole command: {count} PNG files, {rows} rows, {secs:.2f} s, "
              f"{count / secs:.0f} images/s ({args.device}, batch {args.batch_size})")
        rate = evaluation_rate(args.run)
        if rate:
            print(f"the run's last evaluation: {rate[1]} test images in {rate[2]:.3f} s, {rate[0]:.0f} images/s "
                  "(images already decoded and in memory)")


if __name__ == "__main__":
    main()
