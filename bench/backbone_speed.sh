#!/usr/bin/env bash
# CPU training step of torchvision's backbones, Kiln against PyTorch, side by side in one sitting.
#
#   bash bench/backbone_speed.sh KILN PHOTOS [STEPS] [MODELS…]
#
# KILN is a built kiln binary (a release build: `cargo build --release`), PHOTOS a folder of
# 224×224 photos in one sub-folder per class (any photos: only the time is measured). Needs
# python3 with torch and torchvision (python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip
# install torch torchvision; PYTHON=/tmp/torchenv/bin/python). For each model, one training
# step of batch 16 at 224×224 with Adam, forward, backward and update, as the median of STEPS
# steps after a warm-up step: Kiln's `kiln bench`, then PyTorch on as many threads as Kiln
# uses (every core), and their ratio. MODELS are Kiln's names (default: efficientnet-b0
# convnext-tiny vit-b-16 mobilenet-v2 resnet18-imagenet).
set -euo pipefail
kiln=$(realpath "$1")
photos=$(realpath "$2")
steps=${3:-4}
shift $(($# < 3 ? $# : 3))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(efficientnet-b0 convnext-tiny vit-b-16 mobilenet-v2 resnet18-imagenet)
python=${PYTHON:-python3}
threads=$(nproc)

printf '%-20s %12s %12s %7s\n' model "kiln ms" "torch ms" ratio
for model in "${models[@]}"; do
    kiln_ms=$("$kiln" bench --dataset "folder:$photos@224" --model "$model" --batch-size 16 \
        --steps "$steps" --device cpu --optimizer adam 2>/dev/null | tail -1 |
        "$python" -c 'import json, sys; print(round(json.load(sys.stdin)["median_step_ms"]))')
    torch_ms=$("$python" - "$model" "$steps" "$threads" <<'EOF'
import statistics, sys, time, warnings
warnings.simplefilter("ignore")
import torch, torchvision
kiln_name, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
name = {"resnet18-imagenet": "resnet18"}.get(kiln_name, kiln_name.replace("-", "_"))
model = getattr(torchvision.models, name)(num_classes=2)
optimizer = torch.optim.Adam(model.parameters(), 1e-3)
loss = torch.nn.CrossEntropyLoss()
images, labels = torch.rand(16, 3, 224, 224), torch.randint(0, 2, (16,))
times = []
for _ in range(steps + 1):
    start = time.perf_counter()
    optimizer.zero_grad()
    loss(model(images), labels).backward()
    optimizer.step()
    times.append(time.perf_counter() - start)
print(round(statistics.median(times[1:]) * 1000))
EOF
)
    ratio=$(awk -v k="$kiln_ms" -v t="$torch_ms" 'BEGIN { printf "%.2f", k / t }')
    printf '%-20s %12s %12s %6s×\n' "$model" "$kiln_ms" "$torch_ms" "$ratio"
done
