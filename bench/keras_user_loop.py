"""The Keras side of the fashion-mlp user report, written the way the report wrote it.

Raw 0-255 pixels as NumPy arrays, MLP 784-512-512-10 (Glorot-uniform weights, zero biases,
softmax output), sparse categorical cross-entropy, SGD lr 1e-3, batch 64, `model.fit`. Kiln's
`fashion-mlp-keras` preset is the same workload; run both on the same machine to compare seconds
per epoch side by side:

    python3 bench/keras_user_loop.py --data-dir ../shared/data/fashion-mnist --epochs 3
    kiln train --preset fashion-mlp-keras --data-dir ../shared/data/fashion-mnist --epochs 3

Needs tensorflow (tensorflow-cpu is enough). Prints one line per epoch and a JSON summary.

`--csv-log FILE` also keeps the run as Keras's own `CSVLogger` writes it, for `kiln import FILE`
to put beside Kiln's run: the epochs then run in one `fit` with the test set as
`validation_data` (the figures the loop above prints per epoch, as Keras's `val_*` columns), and
each epoch's seconds include that evaluation.
"""

import argparse
import gzip
import json
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402  (the log level must be set before the import)


def read_idx(data_dir, name):
    """One IDX file, gzipped or not, as a NumPy array shaped by its header."""
    path = os.path.join(data_dir, name)
    if os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


class EpochTimer(tf.keras.callbacks.Callback):
    """Training seconds of each epoch, without the evaluation after it."""

    def __init__(self):
        super().__init__()
        self.secs = []
        self.started = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.secs.append(time.perf_counter() - self.started)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--csv-log", help="also write Keras's CSVLogger file of the run here")
    args = parser.parse_args()
    tf.keras.utils.set_random_seed(args.seed)

    x_train = read_idx(args.data_dir, "train-images-idx3-ubyte").astype("float32")
    y_train = read_idx(args.data_dir, "train-labels-idx1-ubyte")
    x_test = read_idx(args.data_dir, "t10k-images-idx3-ubyte").astype("float32")
    y_test = read_idx(args.data_dir, "t10k-labels-idx1-ubyte")

    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(
        optimizer=tf.keras.optimizers.SGD(learning_rate=1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    timer = EpochTimer()
    accuracy = 0.0
    if args.csv_log:
        history = model.fit(
            x_train, y_train, batch_size=64, epochs=args.epochs, verbose=0,
            validation_data=(x_test, y_test),
            callbacks=[timer, tf.keras.callbacks.CSVLogger(args.csv_log)],
        )
        for epoch, value in enumerate(history.history["val_accuracy"]):
            print(f"epoch {epoch + 1}: {timer.secs[epoch]:.2f} s with evaluation, "
                  f"test accuracy {value * 100:.2f} %", flush=True)
        accuracy = history.history["val_accuracy"][-1]
    for epoch in range(0 if args.csv_log else args.epochs):
        model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0, callbacks=[timer])
        _, accuracy = model.evaluate(x_test, y_test, batch_size=64, verbose=0)
        print(f"epoch {epoch + 1}: train {timer.secs[-1]:.2f} s, test accuracy {accuracy * 100:.2f} %",
              flush=True)
    print(json.dumps({
        "framework": "keras " + tf.keras.__version__ + ", tensorflow " + tf.__version__,
        "epochs": args.epochs,
        "first_epoch_train_secs": timer.secs[0],
        "mean_epoch_train_secs": sum(timer.secs) / len(timer.secs),
        "final_test_accuracy": float(accuracy),
    }))


if __name__ == "__main__":
    main()
