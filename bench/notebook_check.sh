#!/usr/bin/env bash
# Executes docs/kiln-in-a-notebook.ipynb on this machine's CPU with `jupyter nbconvert --execute`,
# in a fresh virtual environment whose kernel installs the wheel given (or one this script builds
# with bench/wheel_check.sh), so the notebook in the docs is known to run. Fashion-MNIST comes
# from DATA_ROOT (a parent of fashion-mnist/) rather than the network. Prints each cell's text
# output, whether the plots came out as an image, and the run's test accuracy.
#
#   bench/notebook_check.sh [WHEEL] [DATA_ROOT]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wheel=${1:-}
if [ -z "$wheel" ]; then
  bench/wheel_check.sh "$work/wheel" >/dev/null
  wheel=$(ls "$work"/wheel/*.whl)
fi
wheel=$(realpath "$wheel")
data_root=$(realpath "${2:-../shared/data}")

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q nbconvert nbclient ipykernel
"$work/venv/bin/python" -m ipykernel install --prefix "$work/venv" --name python3 >/dev/null
mkdir "$work/notebook"
cd "$work/notebook"
start=$(date +%s)
KILN_WHEEL=$wheel KILN_DATA_DIR=$data_root KILN_NOTEBOOK_EPOCHS=2 KILN_NOTEBOOK_DEVICE=cpu \
  JUPYTER_PATH="$work/venv/share/jupyter" PATH="$work/venv/bin:$PATH" \
  "$work/venv/bin/jupyter" nbconvert --to notebook --execute \
  --ExecutePreprocessor.timeout=1200 --ExecutePreprocessor.kernel_name=python3 \
  "$repo/docs/kiln-in-a-notebook.ipynb" --output "$work/notebook/executed.ipynb" 2>"$work/nbconvert.log" || { tail -30 "$work/nbconvert.log"; exit 1; }
echo "executed in $(( $(date +%s) - start )) s"
"$work/venv/bin/python" - "$work/notebook/executed.ipynb" <<'PY'
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
images = 0
for cell in cells:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            sys.exit(f"FAIL: a cell raised {output['ename']}: {output['evalue']}")
        images += "image/png" in output.get("data", {})
        text = "".join(output.get("text", []))
        lines = [l for l in text.splitlines() if l.strip()]
        for line in lines[:3] + (["…"] + lines[-6:] if len(lines) > 9 else lines[3:]):
            print("  |", line)
if images < 1:
    sys.exit("FAIL: the plots did not come out as an image")
print(f"PASS: every cell ran; {images} image(s) shown inline")
PY
