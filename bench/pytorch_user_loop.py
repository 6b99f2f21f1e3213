"""The PyTorch loop of the fashion-mlp user report, written the way the report wrote it.

This is the PyTorch quickstart loop: torchvision's FashionMNIST with ToTensor applied per sample
by a DataLoader with num_workers=0, MLP 784-512-512-10, SGD lr 1e-3, batch 64, and a `.item()`
host sync every step. Kiln's `fashion-mlp` preset is the same workload; run both on the same
machine to compare seconds per epoch side by side:

    python3 bench/pytorch_user_loop.py --data-dir ../shared/data/fashion-mnist --epochs 3
    kiln train --preset fashion-mlp --data-dir ../shared/data/fashion-mnist --epochs 3

Needs torch and torchvision (CPU is enough). Prints one line per epoch and a JSON summary.
"""

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets
from torchvision.transforms import ToTensor


def prepare_root(data_dir):
    """torchvision wants <root>/FashionMNIST/raw/<uncompressed idx files>."""
    root = tempfile.mkdtemp(prefix="kiln-torch-")
    raw = os.path.join(root, "FashionMNIST", "raw")
    os.makedirs(raw)
    for name in ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]:
        src = os.path.join(data_dir, name)
        if os.path.exists(src + ".gz"):
            with gzip.open(src + ".gz", "rb") as f, open(os.path.join(raw, name), "wb") as out:
                shutil.copyfileobj(f, out)
        else:
            shutil.copy(src, os.path.join(raw, name))
    return root


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="0 = PyTorch's default")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(42)

    root = prepare_root(args.data_dir)
    training_data = datasets.FashionMNIST(root=root, train=True, download=False, transform=ToTensor())
    test_data = datasets.FashionMNIST(root=root, train=False, download=False, transform=ToTensor())
    train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=64)

    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(28 * 28, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    epoch_secs = []
    accuracy = 0.0
    for epoch in range(args.epochs):
        started = time.perf_counter()
        model.train()
        running = 0.0
        for X, y in train_dataloader:
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            running += loss.item()  # the per-step host sync of the report
        train_secs = time.perf_counter() - started
        model.eval()
        correct = 0
        with torch.no_grad():
            for X, y in test_dataloader:
                correct += (model(X).argmax(1) == y).type(torch.float).sum().item()
        accuracy = correct / len(test_data)
        epoch_secs.append(train_secs)
        print(f"epoch {epoch + 1}: train {train_secs:.2f} s, test accuracy {accuracy * 100:.2f} %", flush=True)
    print(json.dumps({
        "framework": "pytorch " + torch.__version__,
        "threads": torch.get_num_threads(),
        "epochs": args.epochs,
        "mean_epoch_train_secs": sum(epoch_secs) / len(epoch_secs),
        "final_test_accuracy": accuracy,
    }))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
