#!/usr/bin/env bash
# One prepared GPU check for a task that is lent a GPU machine (no package
# registry there, so the build travels as a bundle).
#
#   bench/gpu.sh pack     here: Release build in build/, bundled into .device/
#                         by ../shared/tools/device-bundle.sh and packed as
#                         .device.tar.xz (git-ignored: the device tool must
#                         carry ".device.tar.xz")
#   bench/gpu.sh [run]    on the GPU machine, from the repository root, in one
#                         call: device report, the Vulkan op parity tests
#                         (the cooperative-matrix kernels' included), the
#                         amp training test and the split activation buffers,
#                         bench_conv_vulkan in fp32, amp and amp on cooperative
#                         matrices (YOLO_VK_COOPMAT=on), and a short bench_train
#                         on device=vulkan in fp32 and amp, then amp with
#                         YOLO_VK_COOPMAT=on (img/s and the per-step host wait),
#                         and at 640 with batch 16 and 64 (the host wait there).
#                         Each part has its own time limit, so a hang in one
#                         does not eat the rest; a summary ends it.
#
# Settings (environment): GPU_IMGSZ (320), GPU_BATCH (16), GPU_ITERS (5),
# GPU_PART_TIMEOUT seconds per part (150), GPU_640 (1; 0 skips the 640 parts).
# Dry run here (lavapipe, whose 2 GiB heap does not hold 640 batch 16):
# GPU_IMGSZ=64 GPU_BATCH=2 GPU_ITERS=1 GPU_640=0 bench/gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}

if [ "$mode" = pack ]; then
    set -e
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$(nproc)"
    # Only what the run needs is staged for the bundler. The `yolo` CLI is added
    # after it: its RUNPATH $ORIGIN/../lib makes ldd name the bundle's own
    # libyolo.so, which the bundler would then copy onto itself. The bundler
    # also records .device in .git/info/exclude, which in a git worktree (.git
    # is a file) fails: it runs in a scratch folder with a .git/info of its own.
    root=$PWD scratch=$(mktemp -d)
    mkdir -p "$scratch/.git/info" "$scratch/stage/bin" "$scratch/stage/lib"
    for p in bench_train bench_conv_vulkan test_vulkan_ops test_vulkan_amp_ops test_vulkan_coop test_vulkan_train \
             test_amp_vulkan_train test_vulkan_split_buffers; do
        cp "build/bin/$p" "$scratch/stage/bin/"
    done
    cp -L build/lib/libyolo.so* build/lib/yolo/plugins/*.so "$scratch/stage/lib/"
    (cd "$scratch" && "$root/../shared/tools/device-bundle.sh" stage)
    cp build/bin/yolo "$scratch/.device/bin/"
    # The bundler puts every library in lib/; the plugins go where the
    # programs look next to themselves (bin/../lib/yolo/plugins), apart from
    # libyolo-detection.so, which they link and which is not a plugin (found
    # among them, `yolo checks` would report it as one that failed to load).
    mkdir -p "$scratch/.device/lib/yolo/plugins"
    for p in build/lib/yolo/plugins/*.so; do mv "$scratch/.device/lib/$(basename "$p")" "$scratch/.device/lib/yolo/plugins/"; done
    rm -rf .device && mv "$scratch/.device" . && rm -rf "$scratch"
    # the device tool carries at most 64 MiB: the libraries (oneDNN, OpenBLAS,
    # ICU through MPI's hwloc) are ~120 MiB raw, ~24 MiB as xz
    tar -cf - .device | xz -T0 -6 > .device.tar.xz
    du -sh .device .device.tar.xz
    echo 'carry [".device.tar.xz"] and run: bench/gpu.sh'
    exit 0
fi

[ -x .device/run.sh ] || [ ! -f .device.tar.xz ] || tar -xJf .device.tar.xz
[ -x .device/run.sh ] || { echo "gpu.sh: no .device bundle (run 'bench/gpu.sh pack' here, carry .device.tar.xz)"; exit 2; }
imgsz=${GPU_IMGSZ:-320} batch=${GPU_BATCH:-16} iters=${GPU_ITERS:-5} limit=${GPU_PART_TIMEOUT:-150}
declare -a summary
part() { # name, command...
    local name=$1; shift
    echo "=== $name"
    local t0=$SECONDS
    timeout "$limit" "$@"
    local rc=$?
    summary+=("$(printf '%-34s rc %3d  %4ds' "$name" "$rc" $((SECONDS - t0)))")
}
part "device report (yolo checks)" .device/run.sh yolo checks
command -v nvidia-smi >/dev/null && part "nvidia-smi" nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
part "Vulkan op parity (test_vulkan_ops)" .device/run.sh test_vulkan_ops
part "Vulkan fp16 kernel parity (amp)" .device/run.sh test_vulkan_amp_ops
part "Vulkan cooperative-matrix parity" .device/run.sh test_vulkan_coop
part "Vulkan training parity" .device/run.sh test_vulkan_train
part "amp training, loss scaler" .device/run.sh test_amp_vulkan_train
part "split activation buffers" .device/run.sh test_vulkan_split_buffers
part "bench_conv_vulkan" .device/run.sh bench_conv_vulkan --batch 8 --imgsz "$imgsz"
part "bench_conv_vulkan amp" .device/run.sh bench_conv_vulkan --batch 8 --imgsz "$imgsz" --amp --no-cpu
part "bench_conv_vulkan amp coopmat" env YOLO_VK_COOPMAT=on .device/run.sh bench_conv_vulkan --batch 8 \
    --imgsz "$imgsz" --amp --no-cpu
part "bench_train vulkan fp32+amp" .device/run.sh bench_train --device vulkan --modes fp32,amp --no-baseline \
    --imgsz "$imgsz" --batch "$batch" --iters "$iters" --rounds 1
part "bench_train vulkan amp coopmat" env YOLO_VK_COOPMAT=on .device/run.sh bench_train --device vulkan \
    --modes amp --no-baseline --imgsz "$imgsz" --batch "$batch" --iters "$iters" --rounds 1
# the issue's host-wait figures at 640, batch 16 and 64, on the GPU itself
[ "${GPU_640:-1}" = 0 ] || for b in 16 64; do
    part "bench_train vulkan 640 b$b fp32+amp" .device/run.sh bench_train --device vulkan --modes fp32,amp \
        --no-baseline --imgsz 640 --batch "$b" --iters 3 --warmup 1 --rounds 1
done
echo "=== summary"
printf '%s\n' "${summary[@]}"
