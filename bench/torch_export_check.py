#!/usr/bin/env python3
r"""Checks that a model exported by `kiln export-model --safetensors` predicts in PyTorch what
it predicted in Kiln.

This is a manual check / benchmark, not a test. It

  1. draws a small image-folder data set in a temporary folder: train/<class>/*.png and
     test/<class>/*.png, 3 classes (circle, square, triangle on a random background colour,
     seeded), 40 train and 10 test images per class, each exactly 32x32 RGB, so Kiln does not
     resize them (`--dataset folder:DIR@32`); the file names are seeded random hex, so the
     order they were written in is not their sorted order;
  2. for each of the models mlp:64,32, cnn, resnet18-imagenet, mobilenet-v2, efficientnet-b0,
     convnext-tiny and vit-b-16 (and with --only, efficientnet-b1…b3, convnext-small) trains one epoch
     on the CPU

         kiln train --dataset folder:DIR@32 --model M --epochs 1 --batch-size 16 --device cpu \
             --runs-dir RUNS --name M --val-split 0 [--input-scaling imagenet]

     (imagenet scaling for the two torchvision models, Kiln's default /255 for the others; the
     name is M with the characters Kiln refuses in a folder name, such as `:`, made `-`, so the
     run folder is RUNS/<timestamp>-mlp-64,32) and exports the run with `kiln export-model RUN --safetensors RUN/model.safetensors`;
  3. builds the PyTorch equivalent (an nn.Sequential for the MLP and the CNN, laid out from the
     exported tensors' names and shapes; torchvision's own function for the others, a ViT built
     for 32×32 images),
     loads the file with load_state_dict(strict=True) and switches to eval();
  4. loads the test images in the order Kiln evaluates them (classes in sorted name order,
     files sorted by name within a class; the `label` column of the run's predictions.csv must
     agree, else other orders are tried and reported);
  5. compares PyTorch's argmax with Kiln's `predicted` for every test image, and PyTorch's
     largest softmax probability with Kiln's `confidence` (printed with 6 decimals).

Prints one row per model: test images, predictions that agree, the largest confidence
difference (float32 PyTorch; float64 PyTorch alongside for information), PASS when every
prediction agrees and the difference is below 2e-6 plus the 5e-7 of Kiln's rounding
(--tolerance). Exits 1 if any model fails or any kiln command fails.

Needs torch, torchvision, safetensors, numpy and Pillow (CPU is enough) and a kiln build:

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch torchvision safetensors numpy pillow
    cargo build
    /tmp/torchenv/bin/python bench/torch_export_check.py
    /tmp/torchenv/bin/python bench/torch_export_check.py --only cnn --keep /tmp/export-check
    /tmp/torchenv/bin/python bench/torch_export_check.py --kiln target/release/kiln
    /tmp/torchenv/bin/python bench/torch_export_check.py --only mlp:64,32:relu:0.2  # dropout

It takes about a minute on two CPU cores with a dev build.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import safetensors.torch
import torch
import torchvision
from PIL import Image
from torch import nn

from export_check_data import (
    CLASSES, ROUNDING, SIDE, TEST_PER_CLASS, TOLERANCE, TRAIN_PER_CLASS,
    make_dataset, read_predictions, run_kiln, run_name,
)

REPO = Path(__file__).resolve().parent.parent

MODELS = ["mlp:64,32", "cnn", "resnet18-imagenet", "mobilenet-v2", "efficientnet-b0",
          "convnext-tiny", "vit-b-16"]
# Checked only when --only names it: an MLP with dropout, whose Linear layers sit 3 apart, and
# the larger variants of the newer families.
EXTRA_MODELS = ["mlp:64,32:relu:0.2", "efficientnet-b1", "efficientnet-b2", "efficientnet-b3",
                "convnext-small"]
# Kiln refuses these in --name, since the name becomes part of a folder name.
TORCHVISION = {
    "resnet18-imagenet": "resnet18", "mobilenet-v2": "mobilenet_v2",
    "efficientnet-b0": "efficientnet_b0", "efficientnet-b1": "efficientnet_b1",
    "efficientnet-b2": "efficientnet_b2", "efficientnet-b3": "efficientnet_b3",
    "convnext-tiny": "convnext_tiny", "convnext-small": "convnext_small", "vit-b-16": "vit_b_16",
}
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# ---------------------------------------------------------------------------------------------
# 1. The data set






# ---------------------------------------------------------------------------------------------
# 2. Kiln






def train_and_export(kiln, data, runs, model):
    """Trains `model` for one epoch, exports it; returns the run folder."""
    name = run_name(model)
    before = set(runs.iterdir()) if runs.exists() else set()
    args = [
        "train", "--dataset", f"folder:{data}@{SIDE}", "--model", model,
        "--epochs", "1", "--batch-size", "16", "--device", "cpu",
        "--runs-dir", str(runs), "--name", name, "--val-split", "0",
    ]
    if model in TORCHVISION:
        args += ["--input-scaling", "imagenet"]
    run_kiln(kiln, args)
    new = sorted(p for p in set(runs.iterdir()) - before if p.is_dir())
    if len(new) != 1:
        raise RuntimeError(f"expected one new run folder in {runs}, found {[p.name for p in new]}")
    run = new[0]
    print(f"  run folder: {run.name}", end="")
    if not run.name.endswith(name):
        print(f"  (the name does not end with --name {name!r}: Kiln changed it)", end="")
    print()
    out = run_kiln(kiln, ["export-model", str(run), "--safetensors", str(run / "model.safetensors")])
    print("  " + out.strip())
    return run


# ---------------------------------------------------------------------------------------------
# 3. The PyTorch models


def indices(state):
    """Sorted top-level Sequential indices holding a `weight`."""
    return sorted(int(k.split(".")[0]) for k in state if k.endswith(".weight") and k.split(".")[0].isdigit())


def build_mlp(state):
    """Flatten, then Linear, ReLU[, Dropout] per hidden layer, then Linear, from the keys."""
    at = indices(state)
    if at[0] != 1 or len(at) < 2:
        raise ValueError(f"unexpected MLP layout: Linear layers at {at}")
    stride = at[1] - at[0]
    if stride not in (2, 3) or any(b - a != stride for a, b in zip(at, at[1:])):
        raise ValueError(f"unexpected MLP layout: Linear layers at {at}")
    layers = [nn.Flatten()]
    for position, index in enumerate(at):
        out_features, in_features = state[f"{index}.weight"].shape
        layers.append(nn.Linear(in_features, out_features))
        if position + 1 < len(at):
            layers.append(nn.ReLU())
            if stride == 3:
                layers.append(nn.Dropout())
    layout = f"Flatten, Linear at {at} (stride {stride}: {'with' if stride == 3 else 'no'} dropout)"
    return nn.Sequential(*layers), layout


def build_cnn(state):
    """Conv-ReLU-Conv-ReLU-MaxPool twice, [AdaptiveAvgPool2d], Flatten, Linear, ReLU, Linear,
    with the channel widths, kernel sizes and dense sizes of the exported tensors."""
    at = indices(state)
    if at[:4] != [0, 2, 5, 7] or len(at) != 6 or at[4] not in (11, 12) or at[5] != at[4] + 2:
        raise ValueError(f"unexpected CNN layout: weights at {at}")
    convs = []
    for index in at[:4]:
        out_c, in_c, kh, kw = state[f"{index}.weight"].shape
        if kh != kw or kh % 2 != 1:
            raise ValueError(f"conv {index} has a {kh}x{kw} kernel")
        # "same" padding (Kiln's cnn.rs: 3x3, stride 1, padding 1).
        convs.append(nn.Conv2d(in_c, out_c, kh, padding=kh // 2, bias=f"{index}.bias" in state))
    fc1_out, features = state[f"{at[4]}.weight"].shape
    classes, hidden = state[f"{at[5]}.weight"].shape
    layers = [convs[0], nn.ReLU(), convs[1], nn.ReLU(), nn.MaxPool2d(2),
              convs[2], nn.ReLU(), convs[3], nn.ReLU(), nn.MaxPool2d(2)]
    shrink = None
    last_channels = convs[3].out_channels
    if at[4] == 12:
        pooled = features // last_channels
        side = int(round(pooled ** 0.5))
        if side * side * last_channels != features:
            raise ValueError(f"fc1 takes {features} inputs: not {last_channels} square maps")
        shrink = side
        layers.append(nn.AdaptiveAvgPool2d(side))
    layers += [nn.Flatten(), nn.Linear(features, fc1_out), nn.ReLU(), nn.Linear(hidden, classes)]
    widths = [c.out_channels for c in convs]
    layout = (
        f"convs {convs[0].in_channels}->{'->'.join(map(str, widths))} "
        f"k{convs[0].kernel_size[0]} pad {convs[0].padding[0]} at 0,2,5,7; "
        + (f"AdaptiveAvgPool2d({shrink}) at 10; " if shrink else "no AdaptiveAvgPool2d; ")
        + f"fc1 at {at[4]}: {features}->{fc1_out}; fc2 at {at[5]}: {hidden}->{classes}"
    )
    return nn.Sequential(*layers), layout


def build_model(model, state, classes):
    if model.startswith("mlp"):
        return build_mlp(state)
    if model == "cnn":
        return build_cnn(state)
    arch = TORCHVISION[model]
    # A ViT's position embedding has one row per patch of the image size it trained at.
    extra = {"image_size": SIDE} if arch.startswith("vit") else {}
    net = getattr(torchvision.models, arch)(weights=None, num_classes=classes, **extra)
    return net, f"torchvision.models.{arch}"


# ---------------------------------------------------------------------------------------------
# 4. The test images, in Kiln's order


def candidate_orders(root, written):
    """(description, [(path, label)]) for each order Kiln might evaluate the test split in; the
    first is the one Kiln documents."""
    test = root / "test"
    classes = sorted(p.name for p in test.iterdir() if p.is_dir())
    label = {name: i for i, name in enumerate(classes)}
    by_class = [(p, label[c]) for c in classes for p in sorted((test / c).iterdir())]
    yield "classes sorted by name, files sorted by name within a class", by_class
    yield "all test paths sorted", sorted(by_class, key=lambda pl: str(pl[0]))
    yield "all test files sorted by file name", sorted(by_class, key=lambda pl: pl[0].name)
    yield "classes sorted, files in the order written", [
        (p, label[c]) for c in classes for p in written["test"][c]
    ]


def load_images(pairs, imagenet):
    """[N, 3, H, W] float32: uint8 CHW / 255, then ImageNet's mean and std if asked."""
    arrays = []
    for path, _ in pairs:
        with Image.open(path) as image:
            array = np.asarray(image.convert("RGB"), dtype=np.uint8)
        assert array.shape == (SIDE, SIDE, 3), f"{path} is {array.shape}"
        arrays.append(array.transpose(2, 0, 1))
    x = torch.from_numpy(np.stack(arrays)).to(torch.float32) / 255.0
    if imagenet:
        mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float32).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD, dtype=torch.float32).view(1, 3, 1, 1)
        x = (x - mean) / std
    return x




def compare(net, x, rows):
    """(predictions agreeing, max |confidence diff| f32, same in f64, per-image details)."""
    with torch.no_grad():
        logits = net(x)
        logits64 = net.double()(x.double())
        net.float()
    probs = torch.softmax(logits, dim=1)
    probs64 = torch.softmax(logits64, dim=1)
    conf, predicted = probs.max(dim=1)
    conf64 = probs64.max(dim=1).values
    kiln_pred = torch.tensor([int(r["predicted"]) for r in rows])
    kiln_conf = torch.tensor([float(r["confidence"]) for r in rows], dtype=torch.float64)
    agree = int((predicted == kiln_pred).sum())
    diff = (conf.double() - kiln_conf).abs()
    diff64 = (conf64 - kiln_conf).abs()
    return agree, float(diff.max()), float(diff64.max()), predicted, conf, kiln_pred, kiln_conf


def check_model(kiln, data, runs, written, model, tolerance, verbose):
    print(f"== {model}")
    run = train_and_export(kiln, data, runs, model)
    state = safetensors.torch.load_file(str(run / "model.safetensors"))
    rows = read_predictions(run)
    labels = [int(r["label"]) for r in rows]
    classes = len(CLASSES)
    net, layout = build_model(model, state, classes)
    print(f"  layout: {layout}")
    result = net.load_state_dict(state, strict=True)
    print(f"  load_state_dict(strict=True): {result}")
    net.eval()

    imagenet = model in TORCHVISION
    chosen = None
    for position, (description, pairs) in enumerate(candidate_orders(data, written)):
        ours = [label for _, label in pairs]
        labels_match = ours == labels and len(pairs) == len(rows)
        if position == 0 and not labels_match:
            print(f"  predictions.csv labels do NOT match the assumed order ({description}); trying others")
        if not labels_match:
            continue
        x = load_images(pairs, imagenet)
        outcome = compare(net, x, rows)
        if position > 0:
            print(f"  order tried: {description}: {outcome[0]}/{len(rows)} agree, "
                  f"max confidence diff {outcome[1]:.2e}")
        if chosen is None or outcome[0] > chosen[2][0] or (
            outcome[0] == chosen[2][0] and outcome[1] < chosen[2][1]
        ):
            chosen = (description, pairs, outcome)
        if position == 0 and outcome[0] == len(rows) and outcome[1] < tolerance + ROUNDING:
            break
    if chosen is None:
        print("  no candidate order gives predictions.csv's label column")
        return (model, len(rows), 0, float("nan"), float("nan"), "FAIL")
    description, pairs, (agree, diff, diff64, predicted, conf, kiln_pred, kiln_conf) = chosen
    print(f"  test order: {description} (labels match predictions.csv)")
    ok = agree == len(rows) and diff < tolerance + ROUNDING
    if verbose or not ok:
        print("  index  file          label  kiln  torch  kiln conf  torch conf   diff")
        for i, ((path, label), r) in enumerate(zip(pairs, rows)):
            mark = "" if int(kiln_pred[i]) == int(predicted[i]) else "  <-- differs"
            print(f"  {i:5d}  {path.name:12s}  {label:5d}  {int(kiln_pred[i]):4d}  "
                  f"{int(predicted[i]):5d}  {float(kiln_conf[i]):9.6f}  {float(conf[i]):10.7f}  "
                  f"{abs(float(conf[i]) - float(kiln_conf[i])):.1e}{mark}")
    if not ok:
        describe_layers(net, load_images(pairs, imagenet), state)
    return (model, len(rows), agree, diff, diff64, "PASS" if ok else "FAIL")


def describe_layers(net, x, state):
    """On a failure: the exported tensors and each top-level layer's output statistics."""
    print("  exported tensors:")
    for key, tensor in state.items():
        t = tensor.double()
        print(f"    {key:40s} {str(tuple(tensor.shape)):20s} {str(tensor.dtype):14s} "
              f"mean {float(t.mean()) if t.numel() else 0:+.4e} absmax {float(t.abs().max()) if t.numel() else 0:.4e}")
    print("  per-layer outputs (first test image):")
    with torch.no_grad():
        h = x[:1]
        for name, layer in net.named_children():
            h = layer(h)
            print(f"    {name:12s} {type(layer).__name__:22s} {str(tuple(h.shape)):20s} "
                  f"mean {float(h.mean()):+.4e} absmax {float(h.abs().max()):.4e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", type=Path, default=REPO / "target" / "debug" / "kiln",
                        help="the kiln binary (default: %(default)s)")
    parser.add_argument("--only", action="append", choices=MODELS + EXTRA_MODELS,
                        help="check only this model (repeatable); %(choices)s; the last one, an "
                             "MLP with dropout, only when named")
    parser.add_argument("--keep", type=Path,
                        help="write the data set and runs here and keep them (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the drawn images")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="largest allowed confidence difference, before Kiln's 5e-7 rounding "
                             "(default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="print every test image")
    args = parser.parse_args()

    if not args.kiln.is_file():
        print(f"no kiln binary at {args.kiln} (cargo build, or --kiln PATH)", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    temp = None
    if args.keep:
        root = args.keep
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            print(f"{root} is not empty", file=sys.stderr)
            return 2
    else:
        temp = tempfile.TemporaryDirectory(prefix="kiln-export-check-")
        root = Path(temp.name)
    data, runs = root / "data", root / "runs"
    written = make_dataset(data, args.seed)
    print(f"data set: {data} ({len(CLASSES)} classes, {TRAIN_PER_CLASS} train + "
          f"{TEST_PER_CLASS} test images each, {SIDE}x{SIDE} RGB)")

    results = []
    failed = False
    for model in args.only or MODELS:
        try:
            results.append(check_model(args.kiln, data, runs, written, model, args.tolerance, args.verbose))
        except Exception as e:  # noqa: BLE001 -- report and go on with the next model
            print(f"  ERROR: {e}")
            results.append((model, 0, 0, float("nan"), float("nan"), "FAIL"))
        failed |= results[-1][-1] != "PASS"

    print()
    print(f"{'model':18s} {'images':>6s} {'agree':>6s} {'max conf diff':>14s} {'(f64 torch)':>12s}  result")
    for model, images, agree, diff, diff64, verdict in results:
        print(f"{model:18s} {images:6d} {agree:6d} {diff:14.2e} {diff64:12.2e}  {verdict}")
    print(f"PASS: all predictions agree and max |confidence diff| < {args.tolerance:g} + {ROUNDING:g}")
    if temp is not None:
        temp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
