#!/usr/bin/env bash
# Every GPU figure of the speed issue in one prepared run, for a lent device machine: the
# adapter, warm-up on a first and a second launch, Kiln against the naive loop, all 20 epochs of
# fashion-mlp, and f32 against f16 on an MLP and on VGG16 at 224×224. Prints each command and
# its figures; with $OUT set, also leaves every JSON line and summary there.
#
# usage: bench/gpu_check.sh KILN DATA_ROOT [DEVICE] [STEPS]
#   KILN       a kiln binary (build it here with `cargo build --release --workspace`, strip it,
#              compress it with `xz -9` to carry it within the device tool's 64 MiB)
#   DATA_ROOT  the folder holding fashion-mnist/ (its four gzip IDX files)
#   DEVICE     gpu:0 unless given
#   STEPS      timed steps per bench, 2000 unless given
#
# On a machine without a GPU, `EPOCHS=1 VGG=0 bench/gpu_check.sh target/debug/kiln
# ../shared/data gpu:0 20` runs the same script on lavapipe (figures meaningless, script checked).
set -euo pipefail

kiln=${1:?usage: bench/gpu_check.sh KILN DATA_ROOT [DEVICE] [STEPS]}
data=${2:?usage: bench/gpu_check.sh KILN DATA_ROOT [DEVICE] [STEPS]}
device=${3:-gpu:0}
steps=${4:-2000}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Lavapipe and some drivers warn without a runtime folder.
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$work/xdg}
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
# A cache folder of this run's own: the first launch below must find no autotune results.
export XDG_CACHE_HOME=$work/cache

say() { printf '\n## %s\n' "$*"; }
run() {
  printf '$ %s\n' "$*"
  "$@"
}
fashion=(--preset fashion-mlp --data-dir "$data/fashion-mnist" --device "$device")

say "adapters"
run "$kiln" devices
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true

say "warm-up: first launch (empty autotune cache), then a second launch of the same workload"
for launch in first second; do
  run "$kiln" bench "${fashion[@]}" --steps 200 | tee "$out/warmup-$launch.json"
done

say "Kiln against the naive loop, fashion-mlp, $steps steps each"
run "$kiln" bench "${fashion[@]}" --steps "$steps" --compare | tee "$out/compare.json"

epochs=${EPOCHS:-20}
say "all $epochs epochs of fashion-mlp (target for 20: under 10 s; warm-up reported apart)"
run "$kiln" train "${fashion[@]}" --epochs "$epochs" --runs-dir "$work/runs" --name gpu-check
cp "$work"/runs/*-gpu-check/summary.json "$out/fashion-mlp-20-epochs-summary.json"

say "what the metrics readback costs: 2 epochs reading back every 250 ms (default), then every 5 s"
# On lavapipe the default interval halved throughput (680 against 1320 samples/s).
sed 's/^seed = 42$/seed = 42\nreadback_interval_ms = 5000/' assets/presets/fashion-mlp.toml \
  >"$work/readback-5s.toml"
for config in assets/presets/fashion-mlp.toml "$work/readback-5s.toml"; do
  run "$kiln" train --config "$config" --data-dir "$data/fashion-mnist" --device "$device" \
    --epochs 2 --runs-dir "$work/readback" | grep -E '^done'
done

say "f32 against f16, fashion-mlp"
for precision in f32 f16; do
  run "$kiln" bench "${fashion[@]}" --steps "$steps" --precision "$precision" \
    | tee "$out/fashion-mlp-$precision.json"
done

if [ "${VGG:-1}" = 0 ]; then
  say "done (VGG skipped); JSON lines and the summary are in $out"
  exit 0
fi
say "f32 against f16, VGG16 at 224×224 on the built-in data set (batch 32)"
for precision in f32 f16; do
  run "$kiln" bench --dataset synthetic --model vgg16@224 --optimizer adam --batch 32 \
    --device "$device" --steps 50 --precision "$precision" | tee "$out/vgg16-224-$precision.json"
done

say "done; JSON lines and the summary are in $out"
