#!/usr/bin/env bash
# Where a CPU training step's time goes in Kiln, per kind of operation, from perf's samples:
# the table of issue 18, beside bench/cpu_profile_torch.py's torch.profiler breakdown.
#
#   bash bench/cpu_profile.sh KILN FASHION_DIR mlp|cnn [STEPS]
#
# Runs `kiln bench` on the workload twice, on every core and under `taskset -c 0`, each under
# `perf record` (Debian's linux-perf; software clock, so it works in a VM), and prints the
# share of the samples of each kind of work and that share of the measured step time.
set -euo pipefail
kiln=$(realpath "$1")
data=$(realpath "$2")
model=${3:-mlp}
case "$model" in
mlp) workload=(--preset fashion-mlp) steps=${4:-1500} ;;
cnn) workload=(--preset fashion-mlp --model cnn --optimizer adam) steps=${4:-60} ;;
*) echo "mlp or cnn" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for pin in "" "taskset -c 0"; do
    $pin perf record -q -e cpu-clock -F 2000 -o "$work/perf.data" \
        "$kiln" bench --device cpu --data-dir "$data" --steps "$steps" "${workload[@]}" \
        >"$work/bench.json" 2>/dev/null
    perf report -i "$work/perf.data" --no-children --sort symbol --stdio -g none 2>/dev/null \
        >"$work/report.txt"
    python3 - "$work/report.txt" "$work/bench.json" <<'EOF'
import json, re, sys
bench = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
kinds = [
    ("matrix products (gemm kernels and packing)", r"gemm"),
    ("im2col, col2im, layout changes", r"im2col|col2im|to_channels_last|to_planar|conv2d_gemm|conv_backward|copy_2d_tiled|conv3d|conv_transpose"),
    ("max pool and its gradient", r"pool"),
    ("element-wise ops and reductions", r"macerator|binary|unary|scalar_op|reduce|zip_|activation|expand|broadcast|int_into_float|mask|clamp|exp|log"),
    ("copies, zeroing, allocation", r"memmove|memcpy|memset|clear_page|_mi_|mi_|malloc|free|alloc|page_fault|folio"),
    ("threads: helpers waiting, wake-ups", r"rayon|yield|sched|futex|spin|switch|wake|latch"),
    ("autodiff graph and optimizer bookkeeping", r"burn_autodiff|burn_optim|burn_core|burn_dispatch|GraphLocator|Param"),
    ("loading the data set (before the timed steps)", r"inflate|zlib|ByteSplit::upload|idx"),
]
shares = {name: 0.0 for name, _ in kinds}
shares["other"] = 0.0
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*?)\s+-\s+-\s*$", line) or re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*)$", line)
    if not m:
        continue
    share, symbol = float(m.group(1)), m.group(2)
    for name, pattern in kinds:
        if re.search(pattern, symbol):
            shares[name] += share
            break
    else:
        shares["other"] += share
loading = shares.pop("loading the data set (before the timed steps)")
step_ms = bench["median_step_ms"]
threads = (bench.get("cpu_threads") or {}).get("threads")
print(f"\n{bench['workload']}, {threads} thread(s): {step_ms:.2f} ms per step (median); "
      f"share of the samples of each kind (the data set's loading, {loading:.1f} %, left out) "
      f"and CPU ms per step, all threads together:")
total = sum(shares.values())
for name, share in sorted(shares.items(), key=lambda kv: -kv[1]):
    print(f"  {name:<48} {100 * share / total:5.1f} %  {step_ms * (threads or 1) * share / total:7.2f} ms")
EOF
done
