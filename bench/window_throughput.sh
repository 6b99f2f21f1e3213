#!/usr/bin/env bash
# Training throughput with the window open vs `kiln train`, the same run side by side.
#
# Runs `fashion-mlp` for 2 epochs on the CPU, alternating the command line and the real window
# (under Xvfb, driven by xdotool), and prints each run's steady samples/s from summary.json.
# Needs: Xvfb, xdotool (Debian: apt-get install xvfb xdotool), a built `target/debug/kiln`, and
# Fashion-MNIST in DATA_ROOT (a parent of fashion-mnist/). The clicks assume the window's
# default 1280x800 layout.
#
#   bench/window_throughput.sh [PAIRS] [DATA_ROOT]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
data_root=$(realpath "${2:-../shared/data}")
kiln=$PWD/target/debug/kiln
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/xdg DISPLAY=:77
mkdir -m 700 "$XDG_RUNTIME_DIR"
Xvfb :77 -screen 0 1280x800x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 2

steady() { grep -h '"steady_samples_per_sec"' "$1"/*/summary.json | tr -dc '0-9.\n' | cut -d. -f1; }

window_run() {
  local runs=$1
  KILN_DATA_DIR=$data_root HOME=$work/home "$kiln" --runs-dir "$runs" >/dev/null 2>&1 &
  local pid=$!
  sleep 5
  local wid
  wid=$(xdotool search --name '^Kiln$' | head -1)
  xdotool windowfocus --sync "$wid"
  xdotool mousemove 150 62 click 1; sleep 1        # Preset…
  xdotool mousemove 110 88 click 1; sleep 1        # fashion-mlp
  xdotool mousemove 190 678 click 1; sleep 0.3     # Epochs
  xdotool key --window "$wid" ctrl+a 2; sleep 0.3
  xdotool mousemove 800 97 click 1; sleep 0.3      # away from every field
  xdotool key --window "$wid" ctrl+Return
  for _ in $(seq 1 300); do ls "$runs"/*/summary.json >/dev/null 2>&1 && break; sleep 1; done
  kill "$pid"
}

for i in $(seq 1 "$pairs"); do
  "$kiln" train --preset fashion-mlp --epochs 2 --device cpu \
    --data-dir "$data_root/fashion-mnist" --runs-dir "$work/cli$i" >/dev/null 2>&1
  window_run "$work/gui$i"
  cli=$(steady "$work/cli$i"); gui=$(steady "$work/gui$i")
  echo "pair $i: kiln train $cli samples/s, window $gui samples/s, ratio $(echo "scale=3; $gui/$cli" | bc)"
done
