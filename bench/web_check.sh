#!/usr/bin/env bash
# Builds Kiln's browser pages (web/) for wasm32, serves them on 127.0.0.1 and drives one in headless
# Chromium on its SwiftShader WebGPU adapter:
#   window  (index.html) the window itself: a short run on the built-in data started as its Start
#           button starts it, followed to its end, then the runs panel's CSV export, the run's
#           Archive… and Export model (whose downloads the page catches and sends back), Try…
#           on an image, then a run of two epochs stopped after its first and resumed in the page
#           from its checkpoint (its Resume run);
#   folder  the window again, its run (torchvision's ResNet-18) on an image folder of generated PNGs
#           handed to the page as its folder chooser hands over a visitor's folder (a script cannot
#           fill the chooser), then a second run that starts from the safetensors the first exported;
#   engine  (engine.html) the training loop alone, one line per event.
# After the window page, two more visits in the same browser profile check that the page's runs
# outlast a reload (the browser's storage): the second finds the run again, imports its downloaded
# archive (the runs panel's Import run…), deletes the original and renames the import; the third
# finds the renamed import alone.
# PAGES may name several, comma separated: one build serves them all. With KILN_WEB_SCREENSHOTS=DIR
# each page's window, as drawn once its report is in, is saved as DIR/PAGE.png (DevTools protocol).
# Prints the page's size, its load time (and the window's first frame), the run's steps per second
# and accuracy; fails unless the run completes above MIN_ACCURACY (and, for the window, its plots
# have points and the export downloaded the run's rows).
#
# Needs Debian's rustc-web cargo-web rust-web-src lld-19 chromium (docs/development.md says why);
# bench/web_build.sh builds the page first (KILN_WEB_BUILT=1 says it is built already).
#
# usage: bench/web_check.sh [EPOCHS] [MIN_ACCURACY] [webgpu|cpu] [PAGES: window,folder,engine]
set -eu
epochs=${1:-2}
min_accuracy=${2:-0.9}
device=${3:-webgpu}
pages=${4:-window}
for page in ${pages//,/ }; do
  case $page in window|folder|engine) ;; *) echo "no page $page: window, folder or engine" >&2; exit 2 ;; esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=$root/target/web

# The page's module, built unless the caller just built it (.ci/run times the two apart).
[ "${KILN_WEB_BUILT:-0}" = 1 ] || bash bench/web_build.sh

work=$(mktemp -d)
port=${KILN_WEB_PORT:-8765}
python3 bench/web_serve.py web "$port" "$work" &
server=$!
browser=
# The browser's log stays in target/web for a look after a failure. Under `set -e` a failing
# command in this trap would become the script's status: a browser already gone (kill) or one
# still writing its profile (rm) once failed a check that had passed, so each step may fail and
# the check's own status is kept.
stop_browser() {
  kill $browser 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 $browser 2>/dev/null || break; sleep 0.5; done
}
finish() {
  local status=$?
  kill $server 2>/dev/null || true
  stop_browser
  cp "$work/chromium.log" "$target/chromium-${pages//,/-}.log" 2>/dev/null || true
  rm -rf "$work" 2>/dev/null || true
  exit $status
}
trap finish EXIT
# The page's console and GPU lines; a refused shader's reason is on the lines after the first.
console_lines() { grep -A8 "CONSOLE\|gpu_device" "$work/chromium.log" | head -60; }
sleep 1

# Opens one page in a fresh headless Chromium, waits for its report and judges it.
check_page() {
  local page=$1 url
  case $page in
    window) url="index.html?report" ;;
    folder) url="index.html?report&data=folder" ;;
    engine) url="engine.html?report" ;;
  esac
  rm -rf "$work/result.json" "$work/failure.json"
  case $page in
    visit2|visit3) url="index.html?report&visit=${page#visit}" ;;
    *) rm -rf "$work/profile" ;;
  esac
  echo "--- $page page"
  chromium --headless=new --no-sandbox --disable-gpu-sandbox --user-data-dir="$work/profile" \
    --enable-unsafe-webgpu --enable-features=Vulkan --use-vulkan=swiftshader \
    --use-webgpu-adapter=swiftshader --enable-unsafe-swiftshader \
    --enable-logging=stderr --v=0 \
    ${KILN_WEB_SCREENSHOTS:+--window-size=1280,800 --remote-debugging-port=$((port + 1))} \
    "http://127.0.0.1:$port/$url&epochs=$epochs&device=$device" >"$work/chromium.log" 2>&1 &
  browser=$!
  for _ in $(seq 1 ${KILN_WEB_TIMEOUT:-900}); do
    [ -e "$work/result.json" ] || [ -e "$work/failure.json" ] && break
    sleep 1
  done
  if [ -n "${KILN_WEB_SCREENSHOTS:-}" ]; then
    mkdir -p "$KILN_WEB_SCREENSHOTS"
    python3 bench/cdp_screenshot.py $((port + 1)) "$KILN_WEB_SCREENSHOTS/$page.png" || true
  fi
  stop_browser
  if [ -e "$work/failure.json" ]; then
    echo "the page failed: $(cat "$work/failure.json")"
    console_lines
    return 1
  fi
  if [ ! -e "$work/result.json" ]; then
    echo "the page reported nothing in ${KILN_WEB_TIMEOUT:-900} s"
    console_lines
    return 1
  fi
  python3 - "$work/result.json" "$min_accuracy" "$page" <<'PY'
import json, os, sys
report = json.load(open(sys.argv[1]))
minimum, page = float(sys.argv[2]), sys.argv[3]
work = os.path.dirname(sys.argv[1])
if page.startswith("visit"):
    name = open(os.path.join(work, "kept_name")).read()
    print(f"runs back after a reload: {report['restored']}; imported: {report.get('imported')} "
          f"({report.get('import_notice')}); left: {report['after']}; notice: {report['notice']}")
    imported, kept = f"{name}-2", f"{name[:15]}-kept"
    expected = ([name], [kept]) if page == "visit2" else ([kept], [kept])
    if page == "visit2" and sorted(report.get("imported") or []) != sorted([name, imported]):
        sys.exit("the run's archive was not imported beside the run")
    if (report["restored"], report["after"]) != expected:
        sys.exit(f"the browser's storage did not keep the page's runs: expected {expected[0]} back and {expected[1]} left")
    sys.exit(0)
if page == "engine":
    summary = report["summary"]
    accuracy = summary.get("final_test_accuracy") or 0.0
    print(f"device: {report['device']} (ready in {report['device_secs']:.2f} s)")
    print(f"page: {report['page_secs']:.1f} s from load to the end of the run")
    print(f"run: {summary['outcome']}, {len(report['epochs'])} epoch(s), {report['progress_rows']} progress rows, "
          f"test accuracy {accuracy:.4f}, {report['steps_per_sec'] or 0:.1f} steps/s")
    if summary["outcome"] != "completed" or accuracy < minimum:
        sys.exit(f"the run did not complete above {minimum} test accuracy")
    sys.exit(0)
status = report["status"]
accuracy = status.get("test_accuracy") or 0.0
print(f"window: module and window ready {report['ready_secs']:.2f} s after load, first frame at {report['first_frame_secs']:.2f} s")
print(f"device: {status['device']}")
print(f"data: {status['folder'] or 'the built-in data set'}, train/validation/test images {status['split_images']}")
print(f"run: {status['state']}, {status['epochs']} epoch(s), {status['progress_points']} points on the plots, "
      f"test accuracy {accuracy:.4f}, {status['steps_per_sec'] or 0:.1f} steps/s, {report['run_secs']:.1f} s")
print(f"page while training: {report['frames']} frames drawn ({report['frames'] / max(report['run_secs'], 1e-9):.1f} per second)")
exported = [e for e in report["exported"] if "text" in e]
rows = [line for e in exported for line in e["text"].splitlines()[1:] if line]
print(f"export: {', '.join(e['name'] for e in exported) or 'nothing'} downloaded, {len(rows)} rows; notice: {status['notice']}")
problems = []
# The run's Archive…: its run folder, kept in the page's memory, as a tar download.
import base64, io, tarfile
archives = [e for e in report["exported"] if e["name"].endswith(".tar")]
archived = []
if len(archives) == 1:
    archive_bytes = base64.b64decode(archives[0]["base64"])
    with tarfile.open(fileobj=io.BytesIO(archive_bytes)) as tar:
        archived = sorted(name.split("/", 1)[1] for name in tar.getnames() if "/" in name)
    # For the later visits: the archive to import, and the run's folder name.
    open(os.path.join(work, "kept.tar"), "wb").write(archive_bytes)
    open(os.path.join(work, "kept_name"), "w").write(archives[0]["name"].removesuffix(".tar"))
print(f"runs panel: {status['runs_listed']} run(s) listed; archive: {', '.join(a['name'] for a in archives) or 'nothing'} holding {', '.join(archived)}")
# Export model: safetensors (an 8-byte header length, a JSON header naming the tensors) and ONNX.
models = {e["name"].rsplit(".", 1)[1]: base64.b64decode(e["base64"]) for e in report["exported"]
          if e["name"].endswith((".safetensors", ".onnx"))}
weights = models.get("safetensors", b"")
header = {}
if len(weights) > 8:
    size = int.from_bytes(weights[:8], "little")
    header = {k: v for k, v in json.loads(weights[8:8 + size]).items() if k != "__metadata__"}
print(f"model: safetensors of {len(weights)} bytes holding {len(header)} tensors, ONNX of {len(models.get('onnx', b''))} bytes; "
      f"Try… on a test image: {status.get('tried')}")
if not header or len(models.get("onnx", b"")) < 100:
    problems.append("Export model did not download the run's model as safetensors and ONNX")
if not {"model.bpk", "model.json"} <= set(archived):
    problems.append("the page's run did not keep its model")
expected_class = "red" if page == "folder" else None
tried = status.get("tried") or ""
if not tried or tried.startswith("error") or (expected_class and tried != expected_class):
    problems.append(f"Try… did not classify the image as {expected_class or 'some class'}: {tried}")
if status["runs_listed"] < 1:
    problems.append("the page's runs list does not show the run")
if not {"config.toml", "metrics.csv", "epochs.csv", "summary.json"} <= set(archived):
    problems.append("the run's archive did not download its run folder")
if status["state"] != "Finished(Completed)" or accuracy < minimum:
    problems.append(f"the run did not complete above {minimum} test accuracy")
if status["progress_points"] == 0:
    problems.append("the plots have no points")
if len(exported) != 1 or not exported[0]["name"].endswith(".csv") or not rows:
    problems.append("the CSV export did not download the run's rows")
if page == "folder" and sum(status["split_images"] or []) != 300:
    problems.append("the run did not train on the chosen folder's 300 images")
# The folder page's second run starts from the safetensors its first run exported.
second = report.get("pretrained")
if page == "folder":
    print(f"second run from the exported {second.get('weights_file')}: {second.get('state')}, "
          f"{second.get('pretrained_tensors')} tensors loaded, test accuracy {second.get('test_accuracy') or 0.0:.4f}; "
          f"notice: {second.get('notice')}")
    # torchvision's batch-norm step counters are in the file but have no place in Kiln's network.
    counted = [key for key in header if not key.endswith(".num_batches_tracked")]
    if not counted or second.get("pretrained_tensors") != len(counted):
        problems.append("the second run did not start from every tensor of the exported model")
    if second.get("state") != "Finished(Completed)" or (second.get("test_accuracy") or 0.0) < minimum:
        problems.append(f"the run from the exported weights did not complete above {minimum} test accuracy")
# The window page's run stopped after its first epoch goes on from its checkpoint in the page.
resumed = report.get("resumed")
if resumed:
    stopped, ended = resumed["stopped"], resumed["resumed"]
    print(f"stopped after epoch {stopped['epochs']} ({stopped['state']}), resumed from epoch "
          f"{ended.get('first_epoch')} on {ended.get('device')}: {ended['state']}, {ended['epochs']} epoch(s), "
          f"test accuracy {ended.get('test_accuracy') or 0.0:.4f}, {ended.get('secs') or 0.0:.1f} s; "
          f"notice: {ended.get('notice')}")
    if stopped["state"] != "Finished(Cancelled)" or ended.get("first_epoch") != stopped["epochs"]:
        problems.append("the stopped run did not resume in the page from its checkpoint")
    if ended["state"] != "Finished(Completed)" or ended["epochs"] != 2 or ended["run"] != stopped["run"]:
        problems.append("the resumed run did not complete its two epochs in its own folder")
    # A page's later runs once fell back to the CPU: Burn refused to start WebGPU a second time.
    if ended.get("device") != status["device"]:
        problems.append(f"the resumed run trained on {ended.get('device')}, not on the first run's {status['device']}")
elif page == "window":
    problems.append("the window page did not report its stopped and resumed run")
if problems:
    sys.exit("; ".join(problems))
PY
}

failed=0
for page in ${pages//,/ }; do
  if ! check_page "$page"; then
    failed=1
  elif [ "$page" = window ]; then
    check_page visit2 && check_page visit3 || failed=1
  fi
done
exit $failed
