#!/usr/bin/env python3
r"""Checks that a model exported by `kiln export-model --onnx` predicts in onnxruntime what it
predicted in Kiln.

This is a manual check / benchmark, not a test; the ONNX twin of bench/torch_export_check.py,
on the same drawn data set (3 classes, 40 train and 10 test images per class, 32x32 RGB, seeded).
For each model it

  1. trains one epoch on the CPU, with the flags of torch_export_check.py

         kiln train --dataset folder:DIR@32 --model M --epochs 1 --batch-size 16 --device cpu \
             --runs-dir RUNS --name M --val-split 0 [--input-scaling S]

     (S is imagenet for the torchvision architectures: resnet18-imagenet, mobilenet-v2,
     efficientnet-b0, convnext-tiny and vit-b-16; one extra case trains mlp:64,32
     with `--input-scaling standardize`, whose per-channel offsets the graph must carry; the
     others keep Kiln's default /255) and exports the run with
     `kiln export-model RUN --onnx RUN/model.onnx`;
  2. runs `onnx.checker.check_model(model, full_check=True)` (full_check also runs shape
     inference, strictly) and checks the graph's interface: one input `pixels` float32
     [N, 3, 32, 32], outputs `logits` and `probabilities` [N, classes];
  3. feeds onnxruntime (CPUExecutionProvider) the RAW test images, uint8 HWC -> CHW cast to
     float32 with values 0..255 and no scaling at all (the graph scales), in the order Kiln
     evaluates them: classes sorted by name, files sorted by name within a class (the `label`
     column of the run's predictions.csv must agree);
  4. compares argmax(probabilities) with Kiln's `predicted` and max(probabilities) with Kiln's
     `confidence` (printed with 6 decimals); also checks, for information, that argmax(logits)
     is argmax(probabilities) and that softmax(logits) is `probabilities`.

Prints one row per model: test images, predictions that agree, the largest confidence
difference, PASS when every prediction agrees and the difference is below 2e-6 plus the 5e-7 of
Kiln's rounding (--tolerance), as torch_export_check.py. Exits 1 if any model fails (a kiln
command, the checker, onnxruntime or a mismatch). On a failure it prints the graph's nodes and
every intermediate tensor's statistics for the first test image, so the faulty op shows.

Needs onnx, onnxruntime, numpy and Pillow (no torch) and a kiln build:

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install onnx onnxruntime numpy pillow
    cargo build
    /tmp/torchenv/bin/python bench/onnx_export_check.py
    /tmp/torchenv/bin/python bench/onnx_export_check.py --only cnn --keep /tmp/onnx-check
    /tmp/torchenv/bin/python bench/onnx_export_check.py --only mlp:64,32@standardize
    /tmp/torchenv/bin/python bench/onnx_export_check.py --kiln target/release/kiln

A case is `MODEL` or `MODEL@SCALING` (the input scaling it trains with). The data set, the
Kiln invocation and the predictions.csv reader are torch_export_check.py's, shared through
export_check_data.py, which needs neither torch nor onnx.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.checker
import onnx.helper
import onnxruntime as ort

from export_check_data import (
    CLASSES, ROUNDING, SIDE, TEST_PER_CLASS, TOLERANCE, TRAIN_PER_CLASS,
    make_dataset, read_predictions, run_kiln, run_name,
)
from PIL import Image

REPO = Path(__file__).resolve().parent.parent

# (model, input scaling or None for Kiln's default /255)
CASES = [
    ("mlp:64,32", None),
    ("mlp:32:tanh", None),
    ("mlp:32:gelu:0.2", None),
    ("cnn", None),
    ("vgg16-bn", None),
    ("resnet18", None),
    ("resnet18-imagenet", "imagenet"),
    ("mobilenet-v2", "imagenet"),
    ("efficientnet-b0", "imagenet"),
    ("convnext-tiny", "imagenet"),
    ("vit-b-16", "imagenet"),
    ("mlp:64,32", "standardize"),
]


def case_name(model, scaling):
    return model if scaling is None else f"{model}@{scaling}"


# ---------------------------------------------------------------------------------------------










# ---------------------------------------------------------------------------------------------
# Training, exporting, the images


def train_and_export(kiln, data, runs, model, scaling):
    name = run_name(case_name(model, scaling))
    before = set(runs.iterdir()) if runs.exists() else set()
    args = [
        "train", "--dataset", f"folder:{data}@{SIDE}", "--model", model,
        "--epochs", "1", "--batch-size", "16", "--device", "cpu",
        "--runs-dir", str(runs), "--name", name, "--val-split", "0",
    ]
    if scaling is not None:
        args += ["--input-scaling", scaling]
    run_kiln(kiln, args)
    new = sorted(p for p in set(runs.iterdir()) - before if p.is_dir())
    if len(new) != 1:
        raise RuntimeError(f"expected one new run folder in {runs}, found {[p.name for p in new]}")
    run = new[0]
    print(f"  run folder: {run.name}")
    out = run_kiln(kiln, ["export-model", str(run), "--onnx", str(run / "model.onnx")])
    print("  " + out.strip().replace("\n", "\n  "))
    return run


def raw_test_images(data):
    """([N, 3, H, W] float32 with the raw 0..255 values, labels, paths), in Kiln's order."""
    test = data / "test"
    classes = sorted(p.name for p in test.iterdir() if p.is_dir())
    pairs = [(p, i) for i, c in enumerate(classes) for p in sorted((test / c).iterdir())]
    arrays = []
    for path, _ in pairs:
        with Image.open(path) as image:
            array = np.asarray(image.convert("RGB"), dtype=np.uint8)
        assert array.shape == (SIDE, SIDE, 3), f"{path} is {array.shape}"
        arrays.append(array.transpose(2, 0, 1))
    x = np.stack(arrays).astype(np.float32)  # no scaling: the graph does it
    return x, [label for _, label in pairs], [p for p, _ in pairs]


# ---------------------------------------------------------------------------------------------
# ONNX


def dims(value_info):
    shape = value_info.type.tensor_type.shape
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in shape.dim]


def check_interface(model, classes):
    """Problems with the graph's inputs and outputs, as strings (empty when all is well)."""
    problems = []
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    print(f"  opset: {[(o.domain or 'ai.onnx', o.version) for o in model.opset_import]}, "
          f"ir_version {model.ir_version}, {len(graph.node)} nodes, "
          f"{len(graph.initializer)} initializers")
    for v in inputs:
        print(f"  input  {v.name}: {onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type)} {dims(v)}")
    for v in graph.output:
        print(f"  output {v.name}: {onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type)} {dims(v)}")
    if [v.name for v in inputs] != ["pixels"]:
        problems.append(f"inputs are {[v.name for v in inputs]}, not ['pixels']")
    else:
        v = inputs[0]
        if v.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            problems.append("pixels is not float32")
        if dims(v)[1:] != [3, SIDE, SIDE]:
            problems.append(f"pixels is {dims(v)}, not [N, 3, {SIDE}, {SIDE}]")
    outputs = {v.name: v for v in graph.output}
    for name in ("logits", "probabilities"):
        if name not in outputs:
            problems.append(f"no output {name!r} (outputs: {list(outputs)})")
        elif dims(outputs[name])[1:] != [classes]:
            problems.append(f"{name} is {dims(outputs[name])}, not [N, {classes}]")
    return problems


def softmax(z):
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def describe_graph(model, x):
    """On a failure: every node, and the statistics of every node output for the first image."""
    print("  nodes:")
    for i, node in enumerate(model.graph.node):
        attrs = ", ".join(f"{a.name}={onnx.helper.get_attribute_value(a)}" for a in node.attribute)
        print(f"    {i:4d} {node.op_type:20s} {list(node.input)} -> {list(node.output)}"
              + (f"  [{attrs}]" if attrs else ""))
    try:
        everything = onnx.ModelProto()
        everything.CopyFrom(model)
        known = {v.name for v in everything.graph.output}
        for node in everything.graph.node:
            for out in node.output:
                if out and out not in known:
                    everything.graph.output.append(onnx.ValueInfoProto(name=out))
                    known.add(out)
        session = ort.InferenceSession(everything.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        values = session.run(None, {"pixels": x[:1]})
        print("  intermediate outputs (first test image):")
        for name, v in zip(names, values):
            v = np.asarray(v)
            if v.dtype.kind == "f" and v.size:
                stats = (f"mean {float(v.mean()):+.4e} absmax {float(np.abs(v).max()):.4e}"
                         + ("  NON-FINITE" if not np.isfinite(v).all() else ""))
            else:
                stats = f"values {v.ravel()[:8].tolist()}"
            print(f"    {name:40s} {str(v.dtype):8s} {str(v.shape):20s} {stats}")
    except Exception as e:  # noqa: BLE001 -- a diagnosis, not the check
        print(f"  (could not run with intermediate outputs: {type(e).__name__}: {e})")


def check_case(kiln, data, runs, model, scaling, tolerance, verbose):
    name = case_name(model, scaling)
    print(f"== {name}")
    run = train_and_export(kiln, data, runs, model, scaling)
    rows = read_predictions(run)
    x, labels, paths = raw_test_images(data)
    fail = (name, len(rows), 0, float("nan"), "FAIL")
    if labels != [int(r["label"]) for r in rows]:
        print("  predictions.csv labels do NOT match the order classes sorted, files sorted")
        return fail

    path = run / "model.onnx"
    proto = onnx.load(str(path))
    print(f"  {path.name}: {path.stat().st_size} bytes")
    try:
        onnx.checker.check_model(proto, full_check=True)
        print("  onnx.checker.check_model(full_check=True): ok")
    except Exception as e:  # noqa: BLE001
        print(f"  onnx.checker.check_model(full_check=True) FAILED: {type(e).__name__}: {e}")
        describe_graph(proto, x)
        return fail
    problems = check_interface(proto, len(CLASSES))
    for p in problems:
        print(f"  interface: {p}")

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        logits, probs = session.run(["logits", "probabilities"], {"pixels": x})
    except Exception as e:  # noqa: BLE001
        print(f"  onnxruntime FAILED: {type(e).__name__}: {e}")
        describe_graph(proto, x)
        return fail
    predicted = probs.argmax(axis=1)
    conf = probs.max(axis=1).astype(np.float64)
    kiln_pred = np.array([int(r["predicted"]) for r in rows])
    kiln_conf = np.array([float(r["confidence"]) for r in rows], dtype=np.float64)
    agree = int((predicted == kiln_pred).sum())
    diff = float(np.abs(conf - kiln_conf).max())
    ok = agree == len(rows) and diff < tolerance + ROUNDING and not problems

    # For information: the two outputs are consistent with each other.
    print(f"  argmax(logits) == argmax(probabilities): {int((logits.argmax(1) == predicted).sum())}/{len(rows)}; "
          f"max |softmax(logits) - probabilities| {float(np.abs(softmax(logits) - probs).max()):.2e}; "
          f"probabilities sum to 1 within {float(np.abs(probs.astype(np.float64).sum(1) - 1).max()):.2e}")
    if verbose or not ok:
        print("  index  file          label  kiln   onnx  kiln conf   onnx conf   diff")
        for i, (p, label) in enumerate(zip(paths, labels)):
            mark = "" if kiln_pred[i] == predicted[i] else "  <-- differs"
            print(f"  {i:5d}  {p.name:12s}  {label:5d}  {kiln_pred[i]:4d}  {predicted[i]:5d}  "
                  f"{kiln_conf[i]:9.6f}  {conf[i]:10.7f}  {abs(conf[i] - kiln_conf[i]):.1e}{mark}")
    if not ok:
        describe_graph(proto, x)
    return (name, len(rows), agree, diff, "PASS" if ok else "FAIL")


def main():
    names = [case_name(m, s) for m, s in CASES]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", type=Path, default=REPO / "target" / "debug" / "kiln",
                        help="the kiln binary (default: %(default)s)")
    parser.add_argument("--only", action="append", choices=names,
                        help="check only this case (repeatable): %(choices)s")
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
    temp = None
    if args.keep:
        root = args.keep
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            print(f"{root} is not empty", file=sys.stderr)
            return 2
    else:
        temp = tempfile.TemporaryDirectory(prefix="kiln-onnx-check-")
        root = Path(temp.name)
    data, runs = root / "data", root / "runs"
    make_dataset(data, args.seed)
    print(f"data set: {data} ({len(CLASSES)} classes, {TRAIN_PER_CLASS} train + "
          f"{TEST_PER_CLASS} test images each, {SIDE}x{SIDE} RGB); "
          f"onnx {onnx.__version__}, onnxruntime {ort.__version__}")

    results = []
    for model, scaling in CASES:
        if args.only and case_name(model, scaling) not in args.only:
            continue
        try:
            results.append(check_case(args.kiln, data, runs, model, scaling, args.tolerance, args.verbose))
        except Exception as e:  # noqa: BLE001 -- report and go on with the next case
            print(f"  ERROR: {e}")
            results.append((case_name(model, scaling), 0, 0, float("nan"), "FAIL"))

    print()
    print(f"{'model':26s} {'images':>6s} {'agree':>6s} {'max conf diff':>14s}  result")
    for name, images, agree, diff, verdict in results:
        print(f"{name:26s} {images:6d} {agree:6d} {diff:14.2e}  {verdict}")
    print(f"PASS: all predictions agree and max |confidence diff| < {args.tolerance:g} + {ROUNDING:g}")
    if temp is not None:
        temp.cleanup()
    return 1 if any(r[-1] != "PASS" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
