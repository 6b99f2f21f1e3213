#!/usr/bin/env python3
r"""Checks that `kiln import` reads the logs the real frameworks write, figure for figure.

A manual check, not a test (the tests read logs written the way those frameworks write them).
It

  1. trains one small classifier (an MLP on 2 000 separable synthetic 28×28 images, 10
     classes, 3 epochs, 20 % held out) three ways, on the CPU:
       - Keras 3 (`KERAS_BACKEND=torch`) with `fit(validation_split=0.2)` and its `CSVLogger`
         (`keras/training.log`) and, where TensorFlow is installed (Keras writes summaries
         through it), `TensorBoard` (`keras/tb/`) callbacks, `History.history` saved as JSON
         (`keras/history.json`), and the model saved beside them (`keras/model.keras`);
       - a plain PyTorch loop that logs `Loss/train`, `Accuracy/train`, `Loss/val` and
         `Accuracy/val` per epoch with `torch.utils.tensorboard.SummaryWriter` (`summarywriter/`);
       - PyTorch Lightning with its `CSVLogger` (`lightning_logs/version_0/`), logging
         `train_loss` and `train_acc` per step and per epoch, `val_loss` and `val_acc` per epoch,
         and its hyperparameters;
     and keeps, per framework, the per-epoch figures each one reported to its own user;
  2. imports each with `kiln import PATH --runs-dir RUNS`;
  3. compares every imported run's epochs.csv with those figures, within float32 rounding, and
     checks that Lightning's hyperparameters, and those of the Keras model saved beside its
     CSVLogger file, are in their source.json.

Prints one row per imported run (epochs, figures compared, PASS/FAIL) and exits 1 on a failure.

    python3 -m venv /tmp/fwenv
    /tmp/fwenv/bin/pip install "keras>=3" torch lightning tensorboard [tensorflow-cpu]
    cargo build
    /tmp/fwenv/bin/python bench/framework_logs_check.py [--kiln target/debug/kiln] [--keep DIR]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np  # noqa: E402

EPOCHS = 3
CLASSES = 10


def data(seed=0):
    """2 000 images of 28×28 in 10 classes, each class a brighter patch in its own place."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, size=2000)
    images = rng.normal(0.0, 0.3, size=(2000, 28, 28)).astype("float32")
    for i, label in enumerate(labels):
        row, col = divmod(int(label), 5)
        images[i, row * 10 : row * 10 + 8, col * 5 : col * 5 + 5] += 1.0
    return images, labels.astype("int64")


def has_tensorflow():
    """Keras's TensorBoard callback writes through TensorFlow's summary ops, whatever the backend."""
    try:
        import tensorflow  # noqa: F401

        return True
    except ImportError:
        return False


def keras_run(out):
    import keras

    images, labels = data()
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(CLASSES, activation="softmax"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    os.makedirs(out, exist_ok=True)
    history = model.fit(
        images,
        labels,
        epochs=EPOCHS,
        batch_size=64,
        validation_split=0.2,
        verbose=0,
        callbacks=[keras.callbacks.CSVLogger(os.path.join(out, "training.log"))]
        + ([keras.callbacks.TensorBoard(log_dir=os.path.join(out, "tb"))] if has_tensorflow() else []),
    )
    # The model saved beside its log, where `kiln import` reads its hyperparameters.
    model.save(os.path.join(out, "model.keras"))
    figures = {k: [float(v) for v in vs] for k, vs in history.history.items()}
    with open(os.path.join(out, "history.json"), "w") as f:
        json.dump(figures, f)
    return {
        "train_loss": figures["loss"],
        "train_accuracy": figures["accuracy"],
        "val_loss": figures["val_loss"],
        "val_accuracy": figures["val_accuracy"],
    }


def torch_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(784, 32), torch.nn.ReLU(), torch.nn.Linear(32, CLASSES)
    )


def split():
    import torch

    images, labels = data()
    x, y = torch.from_numpy(images), torch.from_numpy(labels)
    return (x[:1600], y[:1600]), (x[1600:], y[1600:])


def summary_writer_run(out):
    import torch
    from torch.utils.tensorboard import SummaryWriter

    (x, y), (vx, vy) = split()
    model = torch_model()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    writer = SummaryWriter(out)
    expected = {k: [] for k in ("train_loss", "train_accuracy", "val_loss", "val_accuracy")}
    for epoch in range(EPOCHS):
        total_loss, correct = 0.0, 0
        for i in range(0, len(x), 64):
            xb, yb = x[i : i + 64], y[i : i + 64]
            logits = model(xb)
            loss = torch.nn.functional.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(xb)
            correct += (logits.argmax(1) == yb).sum().item()
        with torch.no_grad():
            logits = model(vx)
            val_loss = torch.nn.functional.cross_entropy(logits, vy).item()
            val_accuracy = (logits.argmax(1) == vy).float().mean().item()
        figures = {
            "train_loss": total_loss / len(x),
            "train_accuracy": correct / len(x),
            "val_loss": val_loss,
            "val_accuracy": val_accuracy,
        }
        for key, value in figures.items():
            expected[key].append(value)
        writer.add_scalar("Loss/train", figures["train_loss"], epoch)
        writer.add_scalar("Accuracy/train", figures["train_accuracy"], epoch)
        writer.add_scalar("Loss/val", figures["val_loss"], epoch)
        writer.add_scalar("Accuracy/val", figures["val_accuracy"], epoch)
    writer.close()
    return expected


def lightning_run(out):
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger

    (x, y), (vx, vy) = split()
    expected = {k: [] for k in ("train_loss", "train_accuracy", "val_loss", "val_accuracy")}

    class Classifier(L.LightningModule):
        def __init__(self, lr=1e-3, batch_size=64):
            super().__init__()
            self.save_hyperparameters()
            self.model = torch_model()

        def training_step(self, batch, _):
            xb, yb = batch
            logits = self.model(xb)
            loss = torch.nn.functional.cross_entropy(logits, yb)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            self.log("train_acc", (logits.argmax(1) == yb).float().mean(), on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, _):
            xb, yb = batch
            logits = self.model(xb)
            self.log("val_loss", torch.nn.functional.cross_entropy(logits, yb))
            self.log("val_acc", (logits.argmax(1) == yb).float().mean())

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), self.hparams.lr)

    class Keep(L.Callback):
        def on_train_epoch_end(self, trainer, _):
            m = trainer.callback_metrics
            expected["train_loss"].append(float(m["train_loss_epoch"]))
            expected["train_accuracy"].append(float(m["train_acc_epoch"]))
            expected["val_loss"].append(float(m["val_loss"]))
            expected["val_accuracy"].append(float(m["val_acc"]))

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=64)
    val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(vx, vy), batch_size=400)
    trainer = L.Trainer(
        max_epochs=EPOCHS,
        logger=CSVLogger(out, name="lightning_logs"),
        callbacks=[Keep()],
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=0,
        log_every_n_steps=5,
        accelerator="cpu",
    )
    trainer.fit(Classifier(), loader, val_loader)
    return expected


def imported_epochs(folder):
    with open(os.path.join(folder, "epochs.csv")) as f:
        return list(csv.DictReader(f))


def compare(name, folder, expected):
    rows = imported_epochs(folder)
    problems, compared = [], 0
    if len(rows) != EPOCHS:
        problems.append(f"{len(rows)} epochs, expected {EPOCHS}")
    for column, values in expected.items():
        for epoch, value in enumerate(values):
            if epoch >= len(rows):
                break
            cell = rows[epoch][column]
            if cell == "":
                problems.append(f"epoch {epoch + 1} {column} is empty, expected {value:.6f}")
                continue
            compared += 1
            # epochs.csv keeps six decimals; event files hold float32.
            if abs(float(cell) - value) > 1e-6 + 1e-6 * abs(value):
                problems.append(f"epoch {epoch + 1} {column} {cell}, expected {value:.6f}")
    verdict = "PASS" if not problems else "FAIL"
    print(f"{name:<28} {len(rows)} epochs  {compared:>2} figures  {verdict}")
    for problem in problems:
        print(f"    {problem}")
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default="target/debug/kiln")
    parser.add_argument("--keep", help="keep the logs and runs in this folder")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="kiln-framework-logs-")
    os.makedirs(work, exist_ok=True)
    runs = os.path.join(work, "runs")
    shutil.rmtree(runs, ignore_errors=True)

    keras = keras_run(os.path.join(work, "keras"))
    writer = summary_writer_run(os.path.join(work, "summarywriter"))
    lightning = lightning_run(work)

    def imported(path):
        done = subprocess.run(
            [args.kiln, "import", path, "--runs-dir", runs], capture_output=True, text=True
        )
        if done.returncode != 0:
            print(f"kiln import {path} failed:\n{done.stderr}")
            sys.exit(1)
        if done.stderr.strip():
            print(f"  ({os.path.relpath(path, work)}: {done.stderr.strip()})")
        return done.stdout.split()

    ok = True
    for name, path, expected in [
        ("Keras CSVLogger", os.path.join(work, "keras", "training.log"), keras),
        ("Keras History JSON", os.path.join(work, "keras", "history.json"), keras),
        *(
            [("Keras TensorBoard", os.path.join(work, "keras", "tb"), keras)]
            if has_tensorflow()
            else []
        ),
        ("SummaryWriter", os.path.join(work, "summarywriter"), writer),
        ("Lightning CSVLogger", os.path.join(work, "lightning_logs"), lightning),
    ]:
        folders = imported(path)
        if len(folders) != 1:
            print(f"{name}: {len(folders)} runs imported, expected 1: {folders}")
            ok = False
            continue
        ok &= compare(name, folders[0], expected)
        if name == "Keras CSVLogger":
            with open(os.path.join(folders[0], "source.json")) as f:
                source = json.load(f)
            names = {h["name"]: h["value"] for h in source["hparams"]}
            wanted = {"optimizer": "adam", "optimizer.learning_rate": "0.001", "loss": "sparse_categorical_crossentropy"}
            if any(names.get(k) != v for k, v in wanted.items()) or "Dense(32, relu)" not in names.get("layers", ""):
                print(f"    hyperparameters of model.keras not read: {source['hparams']}")
                ok = False
            else:
                print(f"    model.keras beside it: {', '.join(f'{k} {v}' for k, v in names.items())}")
        if name.startswith("Lightning"):
            with open(os.path.join(folders[0], "source.json")) as f:
                source = json.load(f)
            names = {h["name"]: h["value"] for h in source["hparams"]}
            if names.get("lr") != "0.001" or names.get("batch_size") != "64":
                print(f"    hyperparameters not kept: {source['hparams']}")
                ok = False
    print(f"logs and runs in {work}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
