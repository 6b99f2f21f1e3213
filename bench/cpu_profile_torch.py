"""Where a CPU training step's time goes in PyTorch's fast loop, for the side-by-side table of
issue 18 (Kiln's own breakdown comes from `bench/cpu_profile.sh`).

The two workloads of `../shared/peers/`: `mlp` (784-512-512-10, SGD lr 1e-3) and `cnn` (Kiln's
cnn, Adam lr 1e-3), batch 64, Fashion-MNIST held in memory, batches by index. On the CPU every
op runs to completion before the next starts, so wall-clock phases need no sync.

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch numpy
    /tmp/torchenv/bin/python bench/cpu_profile_torch.py mlp --data-dir ../shared/data/fashion-mnist --threads 1

Prints ms per step of each phase (batch, forward, backward, optimizer) as medians over the
measured steps, then torch.profiler's ops by self CPU time per step, and one JSON line.
"""

import argparse
import gzip
import json
import statistics
import time

import numpy as np
import torch
from torch import nn


def idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def model_of(name):
    if name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                              nn.ReLU(), nn.Linear(512, 10))
        return model, torch.optim.SGD(model.parameters(), lr=1e-3)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=["mlp", "cnn"])
    parser.add_argument("--data-dir", required=True, help="folder of the Fashion-MNIST .gz files")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    images = torch.tensor(idx(f"{args.data_dir}/train-images-idx3-ubyte.gz", 16)
                          .reshape(-1, 1, 28, 28))
    labels = torch.tensor(idx(f"{args.data_dir}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    model, optimizer = model_of(args.model)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.randperm(images.shape[0])

    def batch(i):
        rows = order[(i * args.batch) % (images.shape[0] - args.batch):][:args.batch]
        return images[rows].float() / 255, labels[rows]

    phases = {"batch": [], "forward": [], "backward": [], "optimizer": []}

    def step(i, record):
        t0 = time.perf_counter()
        x, y = batch(i)
        t1 = time.perf_counter()
        loss = loss_fn(model(x), y)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t4 = time.perf_counter()
        if record:
            for name, secs in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                phases[name].append(secs * 1e3)

    for i in range(20):
        step(i, False)
    started = time.perf_counter()
    for i in range(args.steps):
        step(i, True)
    step_ms = (time.perf_counter() - started) * 1e3 / args.steps
    medians = {name: statistics.median(values) for name, values in phases.items()}
    print(f"{args.model}, {args.threads} thread(s), batch {args.batch}: {step_ms:.3f} ms per step")
    for name, ms in medians.items():
        print(f"  {name:<10} {ms:8.3f} ms (median)")

    profiled = min(args.steps, 100)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for i in range(profiled):
            step(i, False)
    ops = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    print(f"  ops by self CPU time per step (torch.profiler, {profiled} steps):")
    for event in ops[:18]:
        print(f"    {event.key:<44} {event.self_cpu_time_total / profiled / 1e3:8.3f} ms"
              f"  x{event.count // profiled}")
    print(json.dumps({"engine": "pytorch", "torch": torch.__version__, "model": args.model,
                      "threads": args.threads, "batch": args.batch, "step_ms": round(step_ms, 4),
                      **{f"{k}_ms": round(v, 4) for k, v in medians.items()}}))


if __name__ == "__main__":
    main()
