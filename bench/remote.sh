#!/usr/bin/env bash
# What a remote device costs: fashion-mlp on a `kiln serve` box over loopback (the CPU, Burn's
# flex backend, as the box) against the same device local, side by side in one sitting, and the
# bytes that cross the connection per step; then the same run data parallel on two devices of
# the box (the CPU hosted twice) against one, for the learning figures and what the split costs.
#
# usage: bench/remote.sh KILN DATA_ROOT [EPOCHS]
#   KILN       a kiln binary (`cargo build --release -p kiln`, then target/release/kiln)
#   DATA_ROOT  the folder holding fashion-mnist/ (its four gzip IDX files)
#   EPOCHS     epochs of each timed run, 3 unless given
#
# Bytes are loopback's counters (/sys/class/net/lo/statistics/tx_bytes: both directions, TCP and
# WebSocket framing included) over a run of EPOCHS epochs minus a run of one, divided by the
# steps in between, so the one-time upload of the data set is not counted per step. Run it on an
# otherwise quiet machine: anything else on loopback counts too.
set -euo pipefail

kiln=${1:?usage: bench/remote.sh KILN DATA_ROOT [EPOCHS]}
data=${2:?usage: bench/remote.sh KILN DATA_ROOT [EPOCHS]}
epochs=${3:-3}
work=$(mktemp -d)
box_pid=
cleanup() {
  [[ -n $box_pid ]] && kill "$box_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_CONFIG_HOME=$work/config

# The box's arithmetic on one thread, as Kiln's own rule puts this MLP on one thread locally:
# the difference between the two runs is then the remote protocol, not the thread count.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
RAYON_NUM_THREADS=${BOX_THREADS:-1} "$kiln" serve --devices cpu,cpu --listen 127.0.0.1:0 \
  --token-file "$work/token" >"$work/box.log" &
box_pid=$!
for _ in $(seq 100); do
  grep -q '^Kiln serves on' "$work/box.log" 2>/dev/null && break
  sleep 0.1
done
address=$(sed -n 's/^Kiln serves on \(.*\)\. On the client:$/\1/p' "$work/box.log")
[[ -n $address ]] || { cat "$work/box.log"; exit 1; }
export KILN_REMOTE_TOKEN
KILN_REMOTE_TOKEN=$(cat "$work/token")

lo_bytes() { cat /sys/class/net/lo/statistics/tx_bytes; }
# Seconds per epoch and steps per epoch of a finished run, from its summary.json.
epoch_figures() {
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["mean_epoch_train_secs"], s["steps"]/s["epochs_completed"])' "$1"
}
train() { # DEVICES EPOCHS RUNS_DIR
  "$kiln" train --preset fashion-mlp --data-dir "$data/fashion-mnist" --devices "$1" \
    --epochs "$2" --runs-dir "$3" >/dev/null
  echo "$3"/*/summary.json
}

printf '## fashion-mlp, %s epochs, one sitting\n' "$epochs"
before=$(lo_bytes)
one=$(train "remote:$address/0" 1 "$work/remote1")
middle=$(lo_bytes)
many=$(train "remote:$address/0" "$epochs" "$work/remote")
after=$(lo_bytes)
local=$(train cpu "$epochs" "$work/local")

read -r remote_secs steps <<<"$(epoch_figures "$many")"
read -r local_secs _ <<<"$(epoch_figures "$local")"
python3 - "$remote_secs" "$local_secs" "$steps" "$epochs" "$before" "$middle" "$after" <<'EOF'
import sys
remote, local, steps, epochs = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
before, middle, after = (int(x) for x in sys.argv[5:8])
one_run, many_run = middle - before, after - middle
per_step = (many_run - one_run) / (steps * (epochs - 1)) if epochs > 1 else float("nan")
print(f"local cpu:        {local:.2f} s/epoch, {steps / local:.0f} steps/s")
print(f"remote (loopback): {remote:.2f} s/epoch, {steps / remote:.0f} steps/s ({remote / local:.2f}x local)")
print(f"bytes over loopback: {one_run / 1e6:.1f} MB for 1 epoch, {many_run / 1e6:.1f} MB for {epochs}")
print(f"bytes per step (upload excluded): {per_step:.0f}")
EOF

parallel=$(train "remote:$address/0,remote:$address/1" "$epochs" "$work/parallel")
python3 - "$many" "$parallel" <<'EOF'
import json, sys
one, two = (json.load(open(path)) for path in sys.argv[1:3])
for name, s in (("one box device", one), ("two, data parallel", two)):
    # fashion-mlp is a parity preset, validated on test: it has no validation figures.
    print(f"{name:>19}: {s['mean_epoch_train_secs']:.2f} s/epoch, final train loss {s['final_train_loss']:.6f}, "
          f"test accuracy {s['final_test_accuracy']:.4f}")
EOF
