# Cross-compiling yolo for 64-bit ARM Linux (aarch64) on a Debian x86-64 host
# with crossbuild-essential-arm64 and arm64 multiarch -dev packages
# (scripts/cross-arm64.sh installs them and uses this file):
#   cmake -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# Programs the build runs on the target (ctest's tests) run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(YOLO_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${YOLO_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${YOLO_CROSS_TRIPLE}-g++)

# Debian multiarch: the target's libraries and headers live in the host's
# /usr/lib/aarch64-linux-gnu and /usr/include (+ /usr/include/aarch64-linux-gnu),
# which the cross gcc searches itself; its own libc is in /usr/aarch64-linux-gnu.
set(CMAKE_FIND_ROOT_PATH /usr/${YOLO_CROSS_TRIPLE})
set(CMAKE_LIBRARY_ARCHITECTURE ${YOLO_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER) # glslang, pkg-config: the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config must read the arm64 .pc files, never the host's
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${YOLO_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Run target programs under qemu-user with the arm64 multiarch loader,
# /lib/ld-linux-aarch64.so.1 from libc6:arm64 (-L /, qemu's default prefix,
# made explicit). Not -L /usr/aarch64-linux-gnu: that is the cross
# toolchain's loader (libc6-arm64-cross, Debian 12: glibc 2.36-8) while the
# host's /etc/ld.so.cache resolves libc.so.6 to libc6:arm64's (2.36-9+deb12uN,
# pulled in by the arm64 -dev packages); a loader and a libc from different
# builds disagree on their private shared data (GLIBC_PRIVATE), and the first
# pthread_create then loops forever walking the stack cache list: every
# program that started a thread (our thread pool, OpenBLAS's thread server)
# hung at 100% CPU.
find_program(YOLO_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(YOLO_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${YOLO_QEMU_AARCH64} -L /)
endif()
