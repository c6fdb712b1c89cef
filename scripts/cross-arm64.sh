#!/bin/sh
# ARM64 (aarch64) check on a Debian 12 x86-64 machine: cross-compiles the
# whole project (library, CLI, plugins, tests, benches; -Werror) into
# build-arm64/ with crossbuild-essential-arm64 and arm64 multiarch -dev
# packages, runs the `arm64` test subset (tests/arm64.cmake) under
# qemu-user, then a one-epoch coco8 training under qemu-user and checks
# that it prints its validation row. Correctness only: timings under
# qemu-user say nothing about an ARM CPU's speed.
#   scripts/cross-arm64.sh             everything
#   scripts/cross-arm64.sh --no-train  install, build, tests
# Environment: YOLO_DATASETS_DIR (default ../shared/datasets: coco8.yaml),
# YOLO_ARM64_EXTRA (default /opt/yolo-arm64: see MPI below), JOBS (default 2),
# YOLO_ARM64_BUILD (the build directory, default build-arm64).
#
# Idempotent: packages already present are left as they are, the build
# directory is reused.
#
# What co-installs with the amd64 -dev packages (Debian 12): every arm64
# -dev package of install-deps.sh's list but two.
# - oneDNN: libdnnl-dev:arm64 says Multi-Arch: same, but its
#   /usr/include/oneapi/dnnl/dnnl_config.h differs from amd64's (the CPU
#   runtime and ISA settings), so dpkg refuses to unpack it next to
#   libdnnl-dev:amd64. Its runtime libdnnl2:arm64 co-installs; the -dev
#   package's headers are unpacked (dpkg -x, not installed) into
#   $YOLO_ARM64_EXTRA and the build links /usr/lib/aarch64-linux-gnu/libdnnl.so.2.
# - Open MPI:
# libopenmpi-dev:arm64 needs gfortran:arm64 and openmpi-bin:arm64, and even
# its runtime libopenmpi3:arm64 pulls libpmix2:arm64 -> libmunge2:arm64,
# which is not Multi-Arch: same, so apt would remove the host's Open MPI.
# MPI is not optional (DDP is in the core), so the arm64 build uses MPICH,
# which the project supports too: its runtime libmpich12:arm64 co-installs;
# its libmpich-dev:arm64 does not (it depends on the arm64 mpich binaries),
# so its headers are unpacked (dpkg -x, not installed) into
# $YOLO_ARM64_EXTRA and the build links /usr/lib/aarch64-linux-gnu/libmpich.so.12.
# glslang-tools (the shader compiler, run at build time) stays the host's.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD="${YOLO_ARM64_BUILD:-$ROOT/build-arm64}"
JOBS="${JOBS:-2}"
EXTRA="${YOLO_ARM64_EXTRA:-/opt/yolo-arm64}"
DATASETS="${YOLO_DATASETS_DIR:-$ROOT/../shared/datasets}"
TRIPLE=aarch64-linux-gnu
TRAIN=1
[ "${1:-}" = "--no-train" ] && TRAIN=0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
t0=$(date +%s)
step() { echo "cross-arm64: [$(($(date +%s) - t0)) s] $*"; }

# ---- 1. packages ----
HOST_PACKAGES="crossbuild-essential-arm64 qemu-user-static binfmt-support cmake pkg-config glslang-tools"
ARM64_PACKAGES="libyaml-dev libarchive-dev libopenblas-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev
  libwebp-dev libtiff-dev libcairo2-dev libvulkan-dev libdnnl2 libmpich12"
missing=""
for p in $HOST_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
for p in $ARM64_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p:arm64"
done
if [ -n "$missing" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    step "dpkg --add-architecture arm64"
    $SUDO dpkg --add-architecture arm64
  fi
  step "installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
else
  step "packages present"
fi

# oneDNN's and MPICH's arm64 headers, unpacked (see above)
unpack() { # package, a file it must leave under $EXTRA
  [ -f "$EXTRA/$2" ] && return 0
  step "unpacking $1:arm64 (headers) into $EXTRA"
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt's _apt user downloads into it
  (cd "$tmp" && apt-get download -q "$1:arm64")
  $SUDO mkdir -p "$EXTRA"
  $SUDO dpkg -x "$tmp/$1"_*_arm64.deb "$EXTRA"
  rm -rf "$tmp"
  [ -f "$EXTRA/$2" ] || { echo "cross-arm64: $1:arm64 left no $2"; exit 1; }
}
unpack libdnnl-dev usr/include/oneapi/dnnl/dnnl_config.h
unpack libmpich-dev usr/include/$TRIPLE/mpich/mpi.h
DNNL_INC="$EXTRA/usr/include"
DNNL_LIB=/usr/lib/$TRIPLE/libdnnl.so.2
MPI_INC="$EXTRA/usr/include/$TRIPLE/mpich"
MPI_LIB=/usr/lib/$TRIPLE/libmpich.so.12
# Target programs run under qemu-user with -L /: the arm64 multiarch loader
# of libc6:arm64, which matches the libc the host's ld.so.cache finds (the
# cross toolchain's own loader in /usr/aarch64-linux-gnu does not, and
# hangs every program at its first pthread_create: see the toolchain file).
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64)

# ---- 2. configure and build ----
step "configuring $BUILD"
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DYOLO_WERROR=ON -DYOLO_TEST_HOOKS=ON \
  -DYOLO_DATASETS_DIR="$DATASETS" -DDNNL_INCLUDE_DIR="$DNNL_INC" -DDNNL_LIBRARY="$DNNL_LIB" \
  -DMPI_SKIP_COMPILER_WRAPPER=ON -DMPI_SKIP_GUESSING=ON -DMPI_ASSUME_NO_BUILTIN_MPI=ON -DMPI_C_ADDITIONAL_INCLUDE_DIRS="$MPI_INC" \
  -DMPI_C_LIB_NAMES=mpich -DMPI_mpich_LIBRARY="$MPI_LIB" -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
  > "$BUILD/cross-configure.log" 2>&1 || { cat "$BUILD/cross-configure.log"; exit 1; }
step "building (-j$JOBS; log: $BUILD/cross-build.log)"
cmake --build "$BUILD" -j"$JOBS" > "$BUILD/cross-build.log" 2>&1 || { tail -60 "$BUILD/cross-build.log"; exit 1; }
file "$BUILD/bin/yolo" | grep -q "ARM aarch64" || { echo "cross-arm64: $BUILD/bin/yolo is not an aarch64 executable"; exit 1; }

# ---- 3. the arm64 test subset under qemu-user ----
# ctest runs each test through CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64 -L /)
step "ctest -L arm64 under $QEMU"
ctest --test-dir "$BUILD" -L arm64 --output-on-failure -j"$JOBS"

# ---- 4. one epoch of coco8 under qemu-user ----
if [ "$TRAIN" -eq 1 ]; then
  # coco8 comes from the datasets folder (no network here to fetch it); where
  # that is absent, the built-in shapes data (generated on first use) trains
  # instead, so the check still runs, and says so
  data=coco8.yaml
  if [ ! -f "$DATASETS/coco8.yaml" ]; then
    data=shapes
    step "no coco8.yaml in $DATASETS (set YOLO_DATASETS_DIR): training on the built-in shapes data instead"
  fi
  step "yolo detect train data=$data model=yolov8n.yaml epochs=1 imgsz=64 under qemu-user"
  out="$BUILD/train-coco8.log"
  rm -rf "$BUILD/runs-coco8"
  # -L /: the arm64 multiarch loader, not the cross toolchain's (see cmake/toolchain-aarch64-linux-gnu.cmake)
  YOLO_DATASETS_DIR="$DATASETS" YOLO_CACHE_DIR="$BUILD/cache" "$QEMU" -L / "$BUILD/bin/yolo" detect train \
    data="$data" model=yolov8n.yaml epochs=1 imgsz=64 project="$BUILD/runs-coco8" 2>&1 | tee "$out"
  # the validation table's row over every class: "all  <images> <instances> P R mAP50 mAP50-95"
  row=$(grep -E '^[[:space:]]+all[[:space:]]+[0-9]+[[:space:]]+[0-9]+([[:space:]]+[0-9.]+){4}[[:space:]]*$' "$out" | tail -1)
  if [ -z "$row" ]; then
    echo "cross-arm64: FAILED: the training printed no validation row (log: $out)"
    exit 1
  fi
  step "validation row:$row"
fi
step "done"
