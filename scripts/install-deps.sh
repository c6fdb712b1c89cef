#!/bin/sh
# Installs the Debian 12 packages that yolo's build, tests and runs need.
# Idempotent: packages already present are left as they are.
set -eu

PACKAGES="
  build-essential cmake pkg-config git
  libyaml-dev libarchive-dev
  libdnnl-dev libopenblas-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev
  libcairo2-dev fonts-dejavu-core
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslang-tools
  libopenmpi-dev openmpi-bin
  python3
"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
