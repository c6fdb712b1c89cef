#!/bin/sh
# DDP scaling on this machine: training images/s of YOLOv8n detect
# on `shapes` with 1 and 2 CPU ranks, threads=1 per rank, and the gradient
# all-reduce time per optimizer step as a share of the training time.
#
#   bench/bench_ddp.sh [BUILD_DIR] [IMGSZ] [EPOCHS]      (defaults: build 160 6)
#
# Each world size trains twice, for 1 and for EPOCHS epochs (val=false, so
# only the last epoch validates); images/s = the extra (EPOCHS - 1) x 128
# images over the extra time, which cancels start-up and the final
# validation. Run it on an otherwise idle machine.
set -eu
build=${1:-build}
imgsz=${2:-160}
epochs=${3:-6}
yolo=$(cd "$build" && pwd)/bin/yolo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
args="detect train data=shapes model=yolov8n.yaml imgsz=$imgsz batch=16 workers=1 threads=1 val=false exist_ok=true"

seconds() { # world epochs -> wall seconds
  start=$(date +%s.%N)
  "$yolo" $args world="$1" epochs="$2" name="w$1e$2" > "log-w$1e$2.txt" 2>&1
  end=$(date +%s.%N)
  awk "BEGIN { print $end - $start }"
}

for world in 1 2; do
  t1=$(seconds $world 1)
  tn=$(seconds $world "$epochs")
  ips=$(awk "BEGIN { print ($epochs - 1) * 128 / ($tn - $t1) }")
  eval "ips$world=$ips"
  printf 'world=%d: %.1f img/s (1 epoch %.1f s, %d epochs %.1f s)\n' "$world" "$ips" "$t1" "$epochs" "$tn"
done
grep -h "gradient all-reduce" "log-w2e$epochs.txt" || true
awk "BEGIN { printf \"scaling: 2 ranks = %.2fx one rank (efficiency %.0f%%)\\n\", $ips2 / $ips1, 50 * $ips2 / $ips1 }"
