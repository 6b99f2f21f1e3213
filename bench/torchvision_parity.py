#!/usr/bin/env python3
r"""Checks that Kiln computes the same logits as torchvision for torchvision's architectures.

For each of resnet18, resnet34, resnet50 and mobilenet_v2 this builds torchvision's model with
10 classes (seed 0), gives every BatchNorm random running statistics and affine parameters so
that they matter, and saves the state_dict both as a .pth (torch.save) and as a .safetensors
file. It writes a random [2, 3, 64, 64] float32 batch as raw little-endian bytes (input.f32),
runs

    kiln weights check <file> --model <kiln name> --classes 10 --input input.f32 \
        --image-size 64 --logits out.f32

for each file, and compares Kiln's raw float32 logits [N, 10] with torchvision's. Prints one
row per (architecture, format) with the largest absolute logit, the largest absolute
difference and torch's own float32 error (against float64), PASS below 1e-4 (--tolerance), and
exits 1 if any row fails or any kiln command fails.

Needs torch, torchvision, safetensors and numpy (CPU is enough), and a release build of kiln:

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch torchvision safetensors numpy
    cargo build --release
    /tmp/torchenv/bin/python bench/torchvision_parity.py
    /tmp/torchenv/bin/python bench/torchvision_parity.py --only mobilenet_v2 --keep /tmp/parity

(a dev build, --kiln target/debug/kiln, gives the same figures: the network runs in the
optimized Burn crates either way). The torch f32-f64 column is torch's own float32 rounding.

--torch-only writes the files and the reference logits without running kiln.
"""

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import safetensors.torch
import torch
import torchvision

REPO = Path(__file__).resolve().parent.parent

# torchvision name -> kiln --model name
ARCHITECTURES = {
    "resnet18": "resnet18-imagenet",
    "resnet34": "resnet34",
    "resnet50": "resnet50",
    "mobilenet_v2": "mobilenet-v2",
}
CLASSES = 10
IMAGE_SIZE = 64
BATCH = 2
TOLERANCE = 1e-4


def residual_branch_ends(model):
    """The batch norm closing each residual branch: where trained networks keep small scales
    (torchvision's zero_init_residual starts them at 0), so activations do not grow with depth."""
    for module in model.modules():
        if isinstance(module, torchvision.models.resnet.Bottleneck):
            yield module.bn3
        elif isinstance(module, torchvision.models.resnet.BasicBlock):
            yield module.bn2
        elif isinstance(module, torchvision.models.mobilenetv2.InvertedResidual):
            yield module.conv[-1]


def build_model(arch):
    """torchvision's model with seeded weights and BatchNorm statistics that matter."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, arch)(weights=None, num_classes=CLASSES)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.normal_().mul_(0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_().mul_(0.1)
        # Without this, random scales compound over 16 blocks into logits of 200 or more,
        # and float32 rounding alone (torch against itself in float64) exceeds 1e-4.
        for norm in residual_branch_ends(model):
            norm.weight.uniform_(0.1, 0.3)
    return model.eval()


def save_weights(model, arch, folder):
    """Writes the whole state_dict (num_batches_tracked included) as .pth and .safetensors."""
    # An OrderedDict, as model.state_dict() returns and as users' .pth files hold.
    state = collections.OrderedDict(
        (name, tensor.detach().contiguous()) for name, tensor in model.state_dict().items())
    pth = folder / f"{arch}.pth"
    st = folder / f"{arch}.safetensors"
    torch.save(state, pth)
    safetensors.torch.save_file(state, str(st))
    return [("pth", pth), ("safetensors", st)]


def write_input(folder):
    """A random, already normalized batch as raw little-endian float32 [N, 3, S, S]."""
    torch.manual_seed(0)
    images = torch.randn(BATCH, 3, IMAGE_SIZE, IMAGE_SIZE, dtype=torch.float32)
    path = folder / "input.f32"
    path.write_bytes(images.numpy().astype("<f4").tobytes())
    return images, path


def run_kiln(kiln, weights, kiln_name, input_path, logits_path):
    """Runs `kiln weights check`; returns (logits or None, error text)."""
    if logits_path.exists():
        logits_path.unlink()
    command = [str(kiln), "weights", "check", str(weights), "--model", kiln_name,
               "--classes", str(CLASSES), "--input", str(input_path),
               "--image-size", str(IMAGE_SIZE), "--logits", str(logits_path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        return None, f"cannot run {kiln}: {e}"
    if done.returncode != 0:
        return None, f"exit status {done.returncode}\n{done.stderr}".strip()
    if not logits_path.exists():
        return None, f"kiln wrote no {logits_path.name}\n{done.stderr}".strip()
    logits = np.fromfile(logits_path, dtype="<f4")
    if logits.size != BATCH * CLASSES:
        return None, f"{logits_path.name} holds {logits.size} floats, expected {BATCH * CLASSES}"
    return logits.reshape(BATCH, CLASSES), ""


def check(folder, kiln, only, torch_only, tolerance):
    images, input_path = write_input(folder)
    print(f"{'architecture':<14} {'format':<12} {'max |ref|':>10} {'max |diff|':>12} "
          f"{'torch f32-f64':>14}  result")
    failed = False
    for arch, kiln_name in ARCHITECTURES.items():
        if only and arch != only:
            continue
        model = build_model(arch)
        with torch.no_grad():
            reference = model(images).numpy()
            # torch's own float32 rounding, against the same network in float64.
            exact = model.double()(images.double()).numpy()
            model.float()
        floor = f"{float(np.max(np.abs(reference - exact))):>14.3e}"
        files = save_weights(model, arch, folder)
        np.save(folder / f"{arch}.reference.npy", reference)
        scale = f"{float(np.max(np.abs(reference))):>10.3g}"
        for fmt, weights in files:
            if torch_only:
                size = weights.stat().st_size
                print(f"{arch:<14} {fmt:<12} {scale} {'-':>12} {floor}  written ({size:,} bytes)")
                continue
            logits, error = run_kiln(kiln, weights, kiln_name, input_path, folder / "out.f32")
            if logits is None:
                failed = True
                print(f"{arch:<14} {fmt:<12} {scale} {'-':>12} {floor}  FAIL (kiln command failed)")
                print("    " + error.replace("\n", "\n    "))
                continue
            diff = float(np.max(np.abs(logits - reference)))
            ok = diff < tolerance  # NaN compares false, so it fails
            failed |= not ok
            print(f"{arch:<14} {fmt:<12} {scale} {diff:>12.3e} {floor}  {'PASS' if ok else 'FAIL'}")
    if torch_only:
        print(f"input.f32: {input_path.stat().st_size:,} bytes in {folder}")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", type=Path, default=REPO / "target" / "release" / "kiln",
                        help="kiln binary (default: target/release/kiln in the repo)")
    parser.add_argument("--only", choices=sorted(ARCHITECTURES), help="check one architecture")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write the weights, input and logits here and keep them")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help=f"largest absolute logit difference that passes (default {TOLERANCE})")
    parser.add_argument("--torch-only", action="store_true",
                        help="write the files and reference logits; do not run kiln")
    args = parser.parse_args()

    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}")
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    if not args.torch_only and not args.kiln.exists():
        print(f"kiln binary not found: {args.kiln} (cargo build --release, or --kiln PATH)")
        return 1
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        return check(args.keep, args.kiln, args.only, args.torch_only, args.tolerance)
    with tempfile.TemporaryDirectory(prefix="kiln-parity-") as folder:
        return check(Path(folder), args.kiln, args.only, args.torch_only, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
