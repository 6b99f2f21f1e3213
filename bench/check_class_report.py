#!/usr/bin/env python3
"""Checks a run folder's report.csv against scikit-learn's classification_report.

scikit-learn computes precision, recall, F1 and support from the run's own predictions.csv
(labels and predicted classes); Kiln's report.csv must agree to 1e-6 on every class and on
the macro and weighted averages. Prints each figure side by side and exits 1 on a mismatch.

    python3 -m venv /tmp/sk && /tmp/sk/bin/pip install scikit-learn
    /tmp/sk/bin/python bench/check_class_report.py runs/<run folder>
"""

import csv
import sys
from pathlib import Path

from sklearn.metrics import accuracy_score, classification_report


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    folder = Path(sys.argv[1])
    with open(folder / "predictions.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    labels = [int(r["label"]) for r in rows]
    predicted = [int(r["predicted"]) for r in rows]
    with open(folder / "report.csv", newline="") as f:
        kiln = list(csv.DictReader(f))
    classes = [r for r in kiln if r["class"] not in ("macro avg", "weighted avg", "accuracy", "top-5 accuracy")]
    sk = classification_report(labels, predicted, output_dict=True, zero_division=0)
    worst = 0.0
    print(f"{'class':>14} {'figure':>9} {'kiln':>9} {'sklearn':>9}")
    for index, row in enumerate(classes):
        key = str(index)
        theirs = sk.get(key, {"precision": 0.0, "recall": 0.0, "f1-score": 0.0, "support": 0})
        for figure, sk_name in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            ours = float(row[figure])
            worst = max(worst, abs(ours - theirs[sk_name]))
            print(f"{row['class'][:14]:>14} {figure:>9} {ours:9.6f} {theirs[sk_name]:9.6f}")
        if int(row["support"]) != int(theirs["support"]):
            print(f"support of {row['class']}: kiln {row['support']}, sklearn {theirs['support']}")
            worst = 1.0
    for name in ("macro avg", "weighted avg"):
        row = next(r for r in kiln if r["class"] == name)
        for figure, sk_name in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            ours = float(row[figure])
            worst = max(worst, abs(ours - sk[name][sk_name]))
            print(f"{name:>14} {figure:>9} {ours:9.6f} {sk[name][sk_name]:9.6f}")
    accuracy = float(next(r for r in kiln if r["class"] == "accuracy")["f1"])
    worst = max(worst, abs(accuracy - accuracy_score(labels, predicted)))
    print(f"{'accuracy':>14} {'':>9} {accuracy:9.6f} {accuracy_score(labels, predicted):9.6f}")
    print(f"largest difference: {worst:.2e} over {len(rows)} test images")
    return 0 if worst < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
