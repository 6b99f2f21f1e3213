"""What bench/torch_export_check.py and bench/onnx_export_check.py share: the drawn image-folder
data set, running kiln, and reading a run's predictions.csv. Imports neither torch nor onnx, so
each script needs only its own runtime."""

import csv
import random
import subprocess

from PIL import Image, ImageDraw

FOLDER_UNSAFE = '/\\:*?"<>|'  # Kiln refuses these in --name.
CLASSES = ["circles", "squares", "triangles"]
SIDE = 32
TRAIN_PER_CLASS = 40
TEST_PER_CLASS = 10
TOLERANCE = 2e-6
ROUNDING = 5e-7  # Kiln writes the confidence with 6 decimals.


def draw_shape(rng, shape):
    """One SIDE x SIDE RGB image: `shape` in one random colour on another."""
    background = tuple(rng.randrange(256) for _ in range(3))
    while True:
        colour = tuple(rng.randrange(256) for _ in range(3))
        if sum(abs(a - b) for a, b in zip(colour, background)) > 150:
            break
    image = Image.new("RGB", (SIDE, SIDE), background)
    draw = ImageDraw.Draw(image)
    size = rng.randint(12, 24)
    x = rng.randint(1, SIDE - size - 1)
    y = rng.randint(1, SIDE - size - 1)
    if shape == "circles":
        draw.ellipse([x, y, x + size, y + size], fill=colour)
    elif shape == "squares":
        draw.rectangle([x, y, x + size, y + size], fill=colour)
    else:
        draw.polygon([(x + size / 2, y), (x, y + size), (x + size, y + size)], fill=colour)
    return image



def make_dataset(root, seed):
    """Writes root/{train,test}/<class>/<hex>.png; returns {split: {class: [paths in the order
    written]}}."""
    rng = random.Random(seed)
    written = {}
    for split, count in (("train", TRAIN_PER_CLASS), ("test", TEST_PER_CLASS)):
        written[split] = {}
        for shape in CLASSES:
            folder = root / split / shape
            folder.mkdir(parents=True)
            paths = []
            for _ in range(count):
                while True:
                    path = folder / f"{rng.getrandbits(32):08x}.png"
                    if not path.exists():
                        break
                image = draw_shape(rng, shape)
                assert image.size == (SIDE, SIDE) and image.mode == "RGB"
                image.save(path)
                paths.append(path)
            written[split][shape] = paths
    return written



def run_kiln(kiln, args):
    """Runs kiln with `args`; returns its stdout, or raises with its output on failure."""
    command = [str(kiln), *args]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(command)}` exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result.stdout



def run_name(model):
    """`model` as a --name Kiln accepts: `mlp:64,32` becomes `mlp-64,32`."""
    return "".join("-" if c in FOLDER_UNSAFE else c for c in model)



def read_predictions(run):
    with open(run / "predictions.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if [int(r["index"]) for r in rows] != list(range(len(rows))):
        raise RuntimeError(f"{run}/predictions.csv: the index column is not 0..{len(rows) - 1}")
    return rows


# ---------------------------------------------------------------------------------------------
# 5. Comparing

