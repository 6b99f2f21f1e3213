#!/usr/bin/env bash
# `pip install` of Kiln, end to end: builds the wheel with maturin (the `bin` bindings of
# pyproject.toml: the native `kiln` binary, no Python module), installs it into a fresh virtual
# environment, and trains there with the `kiln` that pip put on the environment's PATH, from an
# empty folder with no network. Prints the wheel's name (its manylinux tag), size and build time,
# the install time, and the run's test accuracy.
#
#   bench/wheel_check.sh [WHEEL_DIR]     (keeps the wheel in WHEEL_DIR when given)
#
# Needs: python3 with venv and pip (maturin comes from PyPI into a scratch environment) and what
# `cargo build --release -p kiln` needs. A warm target/ makes the build a relink.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/build"
"$work/build/bin/pip" install -q 'maturin>=1.9,<2'
start=$(date +%s)
"$work/build/bin/maturin" build --release --out "$work/wheels" 2>&1 | grep -E "Built wheel|manylinux|warning|error" || true
wheel=$(ls "$work"/wheels/*.whl)
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, built in $(( $(date +%s) - start )) s"
if [ -n "${1:-}" ]; then mkdir -p "$1" && cp "$wheel" "$1/"; fi

python3 -m venv "$work/user"
start=$(date +%s)
"$work/user/bin/pip" install -q --no-index "$wheel"
echo "installed in $(( $(date +%s) - start )) s: $("$work/user/bin/pip" show kiln-trainer | grep -E '^(Name|Version)' | tr '\n' ' ')"

mkdir "$work/empty"
cd "$work/empty"
kiln=$(PATH="$work/user/bin:$PATH" command -v kiln)
[ "$kiln" = "$work/user/bin/kiln" ] || { echo "FAIL: kiln resolves to $kiln, not the environment's"; exit 1; }
"$kiln" --version
env -u KILN_DATA_DIR "$kiln" train --dataset synthetic --epochs 1 --device cpu --runs-dir runs | tail -2
summary=$(ls runs/*/summary.json)
accuracy=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['final_test_accuracy'])" "$summary")
echo "PASS: the wheel's kiln trained from an empty folder: test accuracy $accuracy"
