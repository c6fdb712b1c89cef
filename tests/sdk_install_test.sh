#!/bin/bash
# The SDK as a third party sees it:
#   1. `cmake --install` of this build into a temporary prefix;
#   2. sdk/template (copied out of the source tree) configured and built
#      against ONLY that prefix, with find_package(yolo) (CMAKE_PREFIX_PATH)
#      and, a second time, with pkg-config (yolo.pc);
#   3. `<prefix>/bin/yolo checks` lists the template's task (count) through
#      YOLO_PLUGIN_PATH, and the installed plugins from <prefix>/lib/yolo/plugins;
#   4. `<prefix>/bin/yolo count train` runs a short training end to end;
#   5. sdk/examples/pose builds the same way, linking the detection toolkit
#      (find_package(yolo COMPONENTS detection) -> yolo::detection); a small
#      program links it through pkg-config (yolo-detection.pc) and runs;
#      `yolo checks` lists pose,
#      `yolo info model=yolov8n-pose.yaml` gives Ultralytics' 3,295,470
#      parameters, pose_check verifies the keypoint decode and the keypoint
#      loss gradient; make_shapes_pose.sh turns the shapes of step 4 into a
#      keypoint data set (kpt_shape [4, 3], flip_idx), `yolo pose train`
#      trains on it briefly (the losses must fall) and `yolo pose predict`
#      writes YOLO-pose txt rows and predictions.json;
#   6. sdk/examples/embed (the host API, yolo/yolo.h) builds the same way,
#      links the installed libyolo, predicts on a PPM in memory and lists
#      its boxes, and names a bad key in its error.
# Nothing built in steps 2 and 5 may name a path into the source tree.
#
# usage: sdk_install_test.sh <build dir> <source dir>
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
if [ -n "${YOLO_SANITIZED:-}" ]; then
    echo "skip: YOLO_SANITIZED is set (the installed tree would need the sanitizer runtime preloaded into cmake's tools)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/yolo-sdk-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {
    echo "+ $*"
    "$@" > "$tmp/out.txt" 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then cat "$tmp/out.txt"; fail "$1 exited $rc"; fi
}

prefix=$tmp/prefix
run cmake --install "$build" --prefix "$prefix"
for f in bin/yolo lib/libyolo.so lib/libyolo-detection.so lib/yolo/plugins/libyolo-detect.so \
         lib/yolo/plugins/libyolo-segment.so include/yolo/plugin.h include/yolo/task.h include/yolo/detection.h \
         lib/pkgconfig/yolo.pc lib/pkgconfig/yolo-detection.pc lib/cmake/yolo/yoloConfig.cmake \
         lib/cmake/yolo/yoloConfigVersion.cmake lib/cmake/yolo/yoloDetectionTargets.cmake lib/cmake/yolo/yoloEmbed.cmake; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
if grep -rl -- "$src" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then fail "installed package files name the source tree"; fi

# The template, outside the source tree, against the prefix only.
cp -r "$src/sdk/template" "$tmp/template"
rm -rf "$tmp/template/build"
run cmake -S "$tmp/template" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS=-Werror -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
run cmake --build "$tmp/build"
plugin=$tmp/build/libyolo-count.so
[ -f "$plugin" ] || fail "the template did not build $plugin"
if grep -l -- "$src" "$tmp/build/compile_commands.json" "$tmp/build/CMakeCache.txt"; then
    fail "the template's build names the source tree $src"
fi

# The same through pkg-config.
mkdir -p "$tmp/pc"
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs yolo) || fail "pkg-config yolo"
echo "+ pkg-config --cflags --libs yolo: $flags"
case "$flags" in *"$src"*) fail "yolo.pc names the source tree";; esac
run cc -std=c17 -Wall -Wextra -Werror -O2 -fPIC -shared "$tmp/template/count.c" -o "$tmp/pc/libyolo-count.so" $flags -lm

# yolo checks: the installed plugins and the template's task.
cd "$tmp"
echo "+ YOLO_PLUGIN_PATH=$tmp/build $prefix/bin/yolo checks"
YOLO_PLUGIN_PATH="$tmp/build" "$prefix/bin/yolo" checks > checks.txt 2>&1
rc=$?
cat checks.txt
[ $rc -eq 0 ] || fail "yolo checks exited $rc"
grep -q "count .*ABI .*$plugin" checks.txt || fail "yolo checks does not list the count task from $plugin"
grep -q "detect .*ABI .*$prefix/lib/yolo/plugins/libyolo-detect.so" checks.txt ||
    fail "yolo checks does not list the installed detect plugin"

# A short training run of the template's task.
export YOLO_CACHE_DIR=$tmp/cache
echo "+ $prefix/bin/yolo count train data=shapes epochs=4 imgsz=64 batch=16 workers=1"
YOLO_PLUGIN_PATH="$tmp/build" "$prefix/bin/yolo" count train data=shapes epochs=4 imgsz=64 batch=16 nbs=16 \
    warmup_epochs=0 workers=1 > train.txt 2>&1
rc=$?
tail -n 20 train.txt
[ $rc -eq 0 ] || fail "yolo count train exited $rc"
csv=$tmp/runs/count/train/results.csv
[ -f "$csv" ] || fail "no $csv"
head -n 1 "$csv" | grep -q "train/count_loss" || fail "results.csv lacks train/count_loss"
head -n 1 "$csv" | grep -q "metrics/count_accuracy" || fail "results.csv lacks metrics/count_accuracy"
[ "$(wc -l < "$csv")" -eq 5 ] || fail "results.csv has $(($(wc -l < "$csv") - 1)) rows, expected 4"
cat "$csv"
# by name, as a reader of Ultralytics' results.csv should (epoch, time, then the losses)
column() { awk -F, -v name="$1" -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
                                             NR == row && c { print $c }' "$csv"; }
first=$(column train/count_loss 2)
last=$(column train/count_loss 5)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || fail "train/count_loss did not fall: $first -> $last"

# The detection toolkit through pkg-config: a program using yolo/detection.h.
cat > "$tmp/pc/iou.c" <<'EOF'
#include <stdio.h>
#include <yolo/detection.h>
int main(void) {
    const float a[4] = {0, 0, 2, 2}, b[4] = {1, 0, 3, 2};
    float iou;
    yolo_box_iou_matrix(a, 1, b, 1, &iou);
    printf("iou %.4f\n", iou);
    return iou > 0.333f && iou < 0.334f ? 0 : 1;
}
EOF
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs yolo-detection) || fail "pkg-config yolo-detection"
echo "+ pkg-config --cflags --libs yolo-detection: $flags"
case "$flags" in *-lyolo-detection*-lyolo*) ;; *) fail "yolo-detection.pc does not give -lyolo-detection and -lyolo: $flags";; esac
run cc -std=c17 -Wall -Wextra -Werror -O2 "$tmp/pc/iou.c" -o "$tmp/pc/iou" $flags -Wl,-rpath,"$prefix/lib"
run "$tmp/pc/iou"
# it exports what detection.h declares and nothing else (-fvisibility=hidden)
nm -D --defined-only "$prefix/lib/libyolo-detection.so" | awk '$2 ~ /[TDBR]/ { print $3 }' | sort > "$tmp/exported.txt"
grep -q '^yolo_det_criterion_create$' "$tmp/exported.txt" || fail "libyolo-detection does not export yolo_det_criterion_create"
if grep -v '^yolo_' "$tmp/exported.txt" | grep -v '^_'; then fail "libyolo-detection exports symbols outside yolo_*"; fi
for sym in $(cat "$tmp/exported.txt"); do
    grep -q "\b$sym(" "$prefix/include/yolo/detection.h" || fail "libyolo-detection exports $sym, which detection.h does not declare"
done
echo "libyolo-detection exports $(wc -l < "$tmp/exported.txt") symbols, all declared in detection.h"

# The pose example, against the prefix only.
cp -r "$src/sdk/examples/pose" "$tmp/pose"
rm -rf "$tmp/pose/build"
run cmake -S "$tmp/pose" -B "$tmp/pose-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS=-Werror -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
run cmake --build "$tmp/pose-build"
if grep -l -- "$src" "$tmp/pose-build/compile_commands.json" "$tmp/pose-build/CMakeCache.txt"; then
    fail "the pose example's build names the source tree $src"
fi
export YOLO_PLUGIN_PATH="$tmp/pose-build:$tmp/build"
ldd "$tmp/pose-build/libyolo-pose.so" | grep -q "libyolo-detection.so => $prefix/lib/" ||
    { ldd "$tmp/pose-build/libyolo-pose.so"; fail "the pose example does not link the installed libyolo-detection"; }
"$prefix/bin/yolo" checks > checks.txt 2>&1 || { cat checks.txt; fail "yolo checks with the pose example exited $?"; }
grep -q "pose .*ABI .*$tmp/pose-build/libyolo-pose.so" checks.txt || { cat checks.txt; fail "yolo checks does not list pose"; }
"$prefix/bin/yolo" info model=yolov8n-pose.yaml > info.txt 2>&1 || { cat info.txt; fail "yolo info model=yolov8n-pose.yaml"; }
tail -n 2 info.txt
grep -q "YOLOv8n-pose summary: .* 3,295,470 parameters" info.txt || fail "yolov8n-pose is not Ultralytics' 3,295,470 parameters"
run "$tmp/pose-build/pose_check" 64
cat "$tmp/out.txt"
"$prefix/bin/yolo" help > help.txt 2>&1
grep -q "pose=12.0" help.txt && grep -q "kobj=1.0" help.txt || fail "yolo help does not list the pose task's keys pose and kobj"

# shapes with keypoints (the shapes data set exists since the count run).
run bash "$tmp/pose/make_shapes_pose.sh" "$YOLO_CACHE_DIR/shapes-v1" "$tmp/shapes-pose"
cat "$tmp/out.txt"
lbl=$(ls "$tmp/shapes-pose/labels/train/"*.txt | head -n 1)
awk 'NF != 17 { bad = 1 } END { exit bad }' "$lbl" || fail "shapes-pose labels are not cls + box + 4 x 3 keypoints: $lbl"
echo "+ $prefix/bin/yolo pose train data=shapes-pose.yaml model=yolov8n-shapes-pose.yaml epochs=6 imgsz=64"
"$prefix/bin/yolo" pose train data="$tmp/shapes-pose/shapes-pose.yaml" model="$tmp/shapes-pose/yolov8n-shapes-pose.yaml" \
    epochs=6 imgsz=64 batch=16 nbs=16 warmup_epochs=0 workers=1 > pose-train.txt 2>&1
rc=$?
tail -n 12 pose-train.txt
[ $rc -eq 0 ] || fail "yolo pose train exited $rc"
csv=$tmp/runs/pose/train/results.csv
[ -f "$csv" ] || fail "no $csv"
cat "$csv"
hdr=$(head -n 1 "$csv")
for col in train/box_loss train/pose_loss train/kobj_loss train/cls_loss train/dfl_loss "metrics/mAP50(B)" \
           "metrics/precision(P)" "metrics/mAP50(P)" "metrics/mAP50-95(P)" val/pose_loss; do
    case ",$hdr," in *",$col,"*) ;; *) fail "results.csv lacks $col";; esac
done
[ "$(wc -l < "$csv")" -eq 7 ] || fail "pose results.csv has $(($(wc -l < "$csv") - 1)) rows, expected 6"
# the keypoint loss and the total of the validation losses (one fixed set, EMA weights) fall from the first
# epoch to the last; the total of the training losses over 6 tiny epochs of augmented batches is too noisy to test
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "train/pose_loss") p = i; if ($i ~ /^val\/.*_loss$/) v[i] = 1 } }
         NR == 2 || NR == 7 { t = 0; for (i in v) t += $i; if (NR == 2) { p0 = $p; t0 = t } else { p1 = $p; t1 = t } }
         END { printf "train/pose_loss %g -> %g, sum of val losses %g -> %g\n", p0, p1, t0, t1
               exit !(p && length(v) == 5 && p1 < p0 && t1 < t0) }' "$csv" ||
    fail "the pose losses did not fall"
"$prefix/bin/yolo" pose predict model="$tmp/runs/pose/train/weights/last.ckpt" source="$tmp/shapes-pose/images/val" \
    imgsz=64 conf=0.001 save_txt > pose-predict.txt 2>&1 || { cat pose-predict.txt; fail "yolo pose predict"; }
tail -n 2 pose-predict.txt
row=$(cat "$tmp"/runs/pose/predict/labels/*.txt | head -n 1)
[ "$(echo "$row" | wc -w)" -eq 17 ] || fail "a predict txt row is not cls cx cy w h + 4 x (x y v): $row"
grep -q '"keypoints": {"x": \[' "$tmp/runs/pose/predict/predictions.json" || fail "predictions.json has no keypoints"

# The host API example (sdk/examples/embed), against the prefix only: a program linking libyolo that
# predicts on an image in memory (a 64x48 PPM) with an untrained yolov8n.yaml (conf lowered so it lists boxes).
cp -r "$src/sdk/examples/embed" "$tmp/embed"
rm -rf "$tmp/embed/build"
run cmake -S "$tmp/embed" -B "$tmp/embed-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-Werror
run cmake --build "$tmp/embed-build"
ldd "$tmp/embed-build/embed" | grep -q "libyolo.so => $prefix/lib/" ||
    { ldd "$tmp/embed-build/embed"; fail "the embed example does not link the installed libyolo"; }
{ printf 'P6\n64 48\n255\n'
  LC_ALL=C awk 'BEGIN { for (y = 0; y < 48; y++) for (x = 0; x < 64; x++) printf "%c%c%c", x * 3 + 20, y * 4 + 20, (x + y) % 200 + 30 }'
} > "$tmp/frame.ppm"
"$tmp/embed-build/embed" yolov8n.yaml "$tmp/frame.ppm" conf=0.0001 max_det=3 > embed.txt 2>&1 ||
    { cat embed.txt; fail "the embed example exited $?"; }
cat embed.txt
grep -q "^detect model, 64x48 image: 3 boxes$" embed.txt || fail "the embed example did not list 3 boxes"
[ "$(awk 'NF == 6 && $2 + 0 > 0' embed.txt | wc -l)" -eq 3 ] ||
    fail "the embed example's box lines are not 'name conf x1 y1 x2 y2'"
"$tmp/embed-build/embed" yolov8n.yaml "$tmp/frame.ppm" imgsx=64 > embed-bad.txt 2>&1 && fail "embed with imgsx=64 succeeded"
grep -q "imgsx" embed-bad.txt || { cat embed-bad.txt; fail "the embed example's error does not name imgsx"; }

echo "PASS: sdk install, template build (find_package and pkg-config), yolo checks, yolo count train, pose model, pose train/predict, host API example"
