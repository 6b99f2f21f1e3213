#!/usr/bin/env bash
# CPU training speed, Kiln against PyTorch written at its best, side by side in one sitting.
#
#   bash bench/cpu_speed.sh KILN FASHION_DIR [MLP_EPOCHS] [ROUNDS] [CNN_EPOCHS]
#
# KILN is a built kiln binary, FASHION_DIR the folder of Fashion-MNIST's four .gz files. Needs
# python3 with torch (python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch numpy;
# PYTHON=/tmp/torchenv/bin/python) and the peers in ../shared/peers/ (PEERS= to point elsewhere).
# Each round runs every row once, in turn, so a slow minute of a noisy machine hits all rows;
# the table gives each row's median seconds per training epoch over the rounds and its ratio to
# PyTorch's fast loop on two threads. "1 thread" rows run under `taskset -c 0` (Kiln then sees
# one core; PyTorch is also told torch.set_num_threads(1) through OMP_NUM_THREADS=1).
set -euo pipefail
kiln=$(realpath "$1")
data=$(realpath "$2")
mlp_epochs=${3:-3}
rounds=${4:-3}
cnn_epochs=${5:-1}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
peers=${PEERS:-$here/../../shared/peers}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The peers read DATA_ROOT/FashionMNIST/raw/*.gz, as torchvision lays it out.
mkdir -p "$work/root/FashionMNIST"
ln -s "$data" "$work/root/FashionMNIST/raw"

# Seconds per epoch of a kiln run: the mean of its epochs' training time (evaluation excluded).
kiln_row() {
    local epochs=$1 runs="$work/runs-$RANDOM"
    shift
    "$@" --device cpu --epochs "$epochs" --data-dir "$data" --runs-dir "$runs" >/dev/null 2>&1
    "$python" -c 'import json,sys,glob; print(json.load(open(glob.glob(sys.argv[1]+"/*/summary.json")[0]))["mean_epoch_train_secs"])' "$runs"
}

# Seconds per epoch of a peer: the median of its printed epoch_s (the MLP peer's includes its
# test accuracy, about 0.05 s; the CNN peer's does not).
peer_row() {
    "$@" | "$python" -c 'import sys,statistics; print(statistics.median(float(l.split()[3]) for l in sys.stdin if l.startswith("epoch")))'
}

rows=(
    "fashion-mlp|Kiln, 2 threads|kiln_row $mlp_epochs $kiln train --preset fashion-mlp"
    "fashion-mlp|Kiln, 1 thread|kiln_row $mlp_epochs taskset -c 0 $kiln train --preset fashion-mlp"
    "fashion-mlp|PyTorch fast loop, 2 threads|peer_row $python $peers/torch_fast_mlp.py $work/root $mlp_epochs"
    "fashion-mlp|PyTorch fast loop, 1 thread|peer_row env OMP_NUM_THREADS=1 taskset -c 0 $python $peers/torch_fast_mlp.py $work/root $mlp_epochs"
    "cnn + Adam|Kiln, 2 threads|kiln_row $cnn_epochs $kiln train --preset fashion-mlp --model cnn --optimizer adam"
    "cnn + Adam|Kiln, 1 thread|kiln_row $cnn_epochs taskset -c 0 $kiln train --preset fashion-mlp --model cnn --optimizer adam"
    "cnn + Adam|PyTorch fast loop, 2 threads|peer_row $python $peers/torch_fast_cnn.py $work/root $cnn_epochs"
    "cnn + Adam|PyTorch fast loop, 1 thread|peer_row env OMP_NUM_THREADS=1 taskset -c 0 $python $peers/torch_fast_cnn.py $work/root $cnn_epochs"
)

for round in $(seq "$rounds"); do
    for row in "${rows[@]}"; do
        IFS='|' read -r workload name command <<<"$row"
        secs=$(eval "$command")
        echo "$workload|$name|$secs" >>"$work/figures"
        echo "round $round: $workload, $name: $secs s per epoch" >&2
    done
done

"$python" - "$work/figures" "$mlp_epochs" "$rounds" "$cnn_epochs" <<'EOF'
import collections, statistics, sys
figures = collections.OrderedDict()
for line in open(sys.argv[1]):
    workload, name, secs = line.strip().split("|")
    figures.setdefault((workload, name), []).append(float(secs))
print(f"\nseconds per training epoch, Fashion-MNIST, batch 64 ({sys.argv[2]} epochs of the MLP, {sys.argv[4]} of the CNN), median of {sys.argv[3]} rounds")
print(f"| workload | run | s per epoch | against PyTorch fast, 2 threads |")
print(f"| --- | --- | --- | --- |")
for (workload, name), values in figures.items():
    peer = statistics.median(figures[(workload, "PyTorch fast loop, 2 threads")])
    median = statistics.median(values)
    print(f"| {workload} | {name} | {median:.2f} | {median / peer:.2f}x |")
EOF
