#!/usr/bin/env bash
# A network cut mid-run: `kiln serve` in a network namespace behind a veth pair, a client
# training on it from outside, the link set down after a few epochs; prints how long the client
# took to end the run, and fails unless the run ended `failed` within LIMIT seconds of the cut
# with every row it had. Needs root and iproute2 (`ip netns`); `.ci/run` runs it where it has
# them. Not a cargo test: it changes the machine's network devices (its own namespace and pair,
# removed at the end).
#
# usage: bench/network_cut.sh KILN [LIMIT]
set -u
limit=${2:-90}
kiln=$(realpath "${1:?usage: bench/network_cut.sh KILN [LIMIT]}")
work=$(mktemp -d)
unplug() {
  ip netns pids kiln-cut 2>/dev/null | xargs -r kill
  ip netns del kiln-cut 2>/dev/null
  ip link del kiln-cut0 2>/dev/null
}
trap 'unplug; rm -rf "$work"' EXIT
unplug
ip netns add kiln-cut
ip link add kiln-cut0 type veth peer name kiln-cut1
ip link set kiln-cut1 netns kiln-cut
ip addr add 10.77.0.1/24 dev kiln-cut0
ip link set kiln-cut0 up
ip netns exec kiln-cut ip addr add 10.77.0.2/24 dev kiln-cut1
ip netns exec kiln-cut ip link set kiln-cut1 up
echo cut-check-token >"$work/token"
ip netns exec kiln-cut "$kiln" serve --device cpu --listen 10.77.0.2:7345 \
  --token-file "$work/token" >"$work/box.log" 2>&1 &
for _ in $(seq 100); do
  grep -q "Kiln serves on" "$work/box.log" 2>/dev/null && break
  sleep 0.2
done
KILN_REMOTE_TOKEN=cut-check-token XDG_CONFIG_HOME=$work/config "$kiln" train \
  --device remote:10.77.0.2:7345/0 --model mlp:32 --epochs 1000 --runs-dir "$work/runs" \
  >"$work/client.log" 2>&1 &
client=$!
for _ in $(seq 300); do
  rows=$(cat "$work"/runs/*/epochs.csv 2>/dev/null | wc -l)
  [[ $rows -ge 3 ]] && break
  sleep 0.2
done
before=$((rows - 1))
echo "epoch rows before the cut: $before"
ip link set kiln-cut0 down
cut=$(date +%s)
for _ in $(seq 900); do
  kill -0 "$client" 2>/dev/null || break
  sleep 1
done
waited=$(($(date +%s) - cut))
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}
if kill -0 "$client" 2>/dev/null; then
  fail "the client still waits $waited s after the cut"
  kill "$client"
else
  echo "the client ended the run $waited s after the cut"
  [[ $waited -le $limit ]] || fail "it took longer than $limit s"
fi
kept=$(($(cat "$work"/runs/*/epochs.csv | wc -l) - 1))
echo "rows kept: $kept"
[[ $before -ge 2 && $kept -ge $before ]] || fail "rows were lost or never written"
grep -q '"failed"' "$work"/runs/*/summary.json || fail "the run did not end failed"
grep -q "was lost" "$work/client.log" || fail "the client did not say the connection was lost"
tail -1 "$work/client.log"
[[ $failures -eq 0 ]]
