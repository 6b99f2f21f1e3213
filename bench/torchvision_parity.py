#!/usr/bin/env python3
r"""Checks that Kiln computes the same logits as torchvision for torchvision's architectures.

For each torchvision architecture Kiln has (resnet18/34/50, mobilenet_v2, efficientnet_b0-b3,
convnext_tiny/small, vit_b_16) this builds torchvision's model with 10 classes (seed 0), gives
every BatchNorm random running statistics and affine parameters, every LayerNorm, layer scale,
class token and head random values, so that they matter, and saves the state_dict both as a .pth (torch.save) and as a .safetensors
file. It writes a random [2, 3, 64, 64] float32 batch as raw little-endian bytes (input.f32),
runs

    kiln weights check <file> --model <kiln name> --classes 10 --input input.f32 \
        --image-size 64 --logits out.f32

for each file, and compares Kiln's raw float32 logits [N, 10] with torchvision's. Prints one
row per (architecture, format) with the largest absolute logit, the largest absolute
difference, that difference relative to the largest logit, and torch's own float32 error
(against float64); PASS when the difference is below 1e-4 (--tolerance) absolute or relative;
exits 1 if any row fails or any kiln command fails.

vit_b_16 is built for 64×64 images (a 4×4 patch grid). The row vit_b_16@224 saves a network
built for 224×224 and compares Kiln, which resamples its position embedding on loading, with
torchvision's own `interpolate_embeddings` to 64×64.

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
    "efficientnet_b0": "efficientnet-b0",
    "efficientnet_b1": "efficientnet-b1",
    "efficientnet_b2": "efficientnet-b2",
    "efficientnet_b3": "efficientnet-b3",
    "convnext_tiny": "convnext-tiny",
    "convnext_small": "convnext-small",
    "vit_b_16": "vit-b-16",
    "vit_b_16@224": "vit-b-16",
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
        elif isinstance(module, torchvision.models.efficientnet.MBConv) and module.use_res_connect:
            yield module.block[-1][1]


def build_model(arch, image_size=None):
    """torchvision's model with seeded weights and normalization that matters."""
    torch.manual_seed(0)
    name = arch.split("@")[0]
    extra = {"image_size": image_size} if image_size else {}
    model = getattr(torchvision.models, name)(weights=None, num_classes=CLASSES, **extra)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.normal_().mul_(0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_().mul_(0.1)
            elif isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_().mul_(0.1)
            elif isinstance(module, torchvision.models.convnext.CNBlock):
                # torchvision starts layer scale at 1e-6, which would hide every block.
                module.layer_scale.uniform_(0.05, 0.2)
        if name.startswith("vit"):
            # torchvision zeroes the head and the class token.
            model.class_token.normal_()
            model.heads.head.weight.normal_().mul_(0.05)
            model.heads.head.bias.normal_().mul_(0.1)
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


def models(arch):
    """The network whose file Kiln loads, and the network torchvision runs on the images."""
    if arch == "vit_b_16@224":
        saved = build_model(arch, 224)
        state = torchvision.models.vision_transformer.interpolate_embeddings(
            IMAGE_SIZE, 16, collections.OrderedDict(saved.state_dict()))
        resized = torchvision.models.vit_b_16(num_classes=CLASSES, image_size=IMAGE_SIZE)
        resized.load_state_dict(state, strict=True)
        return saved, resized.eval()
    model = build_model(arch, IMAGE_SIZE if arch.startswith("vit") else None)
    return model, model


def check(folder, kiln, only, torch_only, tolerance):
    images, input_path = write_input(folder)
    print(f"{'architecture':<16} {'format':<12} {'max |ref|':>10} {'max |diff|':>12} "
          f"{'relative':>10} {'torch f32-f64':>14}  result")
    failed = False
    for arch, kiln_name in ARCHITECTURES.items():
        if only and arch != only:
            continue
        saved, model = models(arch)
        with torch.no_grad():
            reference = model(images).numpy()
            # torch's own float32 rounding, against the same network in float64.
            exact = model.double()(images.double()).numpy()
            model.float()
        floor = f"{float(np.max(np.abs(reference - exact))):>14.3e}"
        files = save_weights(saved, arch.replace("@", "_at_"), folder)
        np.save(folder / f"{arch}.reference.npy", reference)
        scale = f"{float(np.max(np.abs(reference))):>10.3g}"
        for fmt, weights in files:
            if torch_only:
                size = weights.stat().st_size
                print(f"{arch:<16} {fmt:<12} {scale} {'-':>12} {'-':>10} {floor}  "
                      f"written ({size:,} bytes)")
                continue
            logits, error = run_kiln(kiln, weights, kiln_name, input_path, folder / "out.f32")
            if logits is None:
                failed = True
                print(f"{arch:<16} {fmt:<12} {scale} {'-':>12} {'-':>10} {floor}  "
                      "FAIL (kiln command failed)")
                print("    " + error.replace("\n", "\n    "))
                continue
            diff = float(np.max(np.abs(logits - reference)))
            relative = diff / max(float(np.max(np.abs(reference))), 1e-30)
            ok = diff < tolerance or relative < tolerance  # NaN compares false, so it fails
            failed |= not ok
            print(f"{arch:<16} {fmt:<12} {scale} {diff:>12.3e} {relative:>10.2e} {floor}  "
                  f"{'PASS' if ok else 'FAIL'}")
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
