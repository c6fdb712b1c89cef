# Install rules: `cmake --install <build> --prefix <dir>` lays out
#
#   <dir>/bin/yolo                          the CLI (libyolo linked in; it exports
#                                           the SDK to the plugins it loads)
#   <dir>/lib/libyolo.so                    the library (exports the SDK only)
#   <dir>/lib/libyolo-detection.so          the detection toolkit (yolo/detection.h)
#   <dir>/lib/yolo/plugins/libyolo-*.so     the task plugins (the loader looks
#                                           in <exe dir>/../lib/yolo/plugins)
#   <dir>/include/yolo/*.h                  the public SDK headers
#   <dir>/lib/pkgconfig/yolo.pc             pkg-config (relocatable)
#   <dir>/lib/pkgconfig/yolo-detection.pc   pkg-config of the toolkit (Requires: yolo)
#   <dir>/lib/cmake/yolo/yoloConfig.cmake   find_package(yolo) -> yolo::yolo;
#                                           COMPONENTS detection -> yolo::detection
#
# Everything is relative to the prefix given at install time, so the tree
# can be installed anywhere (and moved afterwards). lib/ and bin/ are the
# GNUInstallDirs defaults (CMAKE_INSTALL_LIBDIR, CMAKE_INSTALL_BINDIR, ...).
include(CMakePackageConfigHelpers)

set(YOLO_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(YOLO_INSTALL_BINDIR ${CMAKE_INSTALL_BINDIR})
set(YOLO_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(YOLO_INSTALL_CMAKEDIR ${YOLO_INSTALL_LIBDIR}/cmake/yolo)

# libyolo, with its usage requirements exported as yolo::yolo.
install(TARGETS yolo EXPORT yoloTargets
  LIBRARY DESTINATION ${YOLO_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${YOLO_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${YOLO_INSTALL_BINDIR}
)

# The detection toolkit: a component of the same package (installed, versioned
# and released with libyolo, whose SDK headers it implements), in an export
# set of its own so that only find_package(yolo COMPONENTS detection) loads it.
install(TARGETS yolo-detection EXPORT yoloDetectionTargets
  LIBRARY DESTINATION ${YOLO_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${YOLO_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${YOLO_INSTALL_BINDIR}
)

install(TARGETS yolo_cli RUNTIME DESTINATION ${YOLO_INSTALL_BINDIR})

# The in-tree task plugins: lib/yolo/plugins/libyolo-<task>.so. An installed
# plugin finds libyolo two directories up when loaded on its own.
foreach(plugin ${YOLO_PLUGIN_TARGETS})
  set_target_properties(${plugin} PROPERTIES INSTALL_RPATH "\$ORIGIN/../..")
  install(TARGETS ${plugin} LIBRARY DESTINATION ${YOLO_INSTALL_PLUGINDIR})
endforeach()

# The public headers (the whole plugin-facing API).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/sdk/include/yolo DESTINATION ${YOLO_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# The plugin ABI of the installed headers (yolo/plugin.h), for yolo.pc.
file(STRINGS ${CMAKE_SOURCE_DIR}/sdk/include/yolo/plugin.h yolo_abi_lines REGEX "^#define YOLO_PLUGIN_ABI_(MAJOR|MINOR) ")
string(REGEX REPLACE ".*ABI_MAJOR ([0-9]+).*" "\\1" yolo_abi_major "${yolo_abi_lines}")
string(REGEX REPLACE ".*ABI_MINOR ([0-9]+).*" "\\1" yolo_abi_minor "${yolo_abi_lines}")
set(YOLO_PLUGIN_ABI_VERSION_TEXT "${yolo_abi_major}.${yolo_abi_minor}")

# pkg-config: prefix is derived from the .pc file's own location.
set(YOLO_PC_FILE ${CMAKE_BINARY_DIR}/yolo.pc)
file(WRITE ${YOLO_PC_FILE}
"prefix=\${pcfiledir}/../..
exec_prefix=\${prefix}
libdir=\${exec_prefix}/${YOLO_INSTALL_LIBDIR}
includedir=\${prefix}/${YOLO_INSTALL_INCLUDEDIR}
plugindir=\${libdir}/yolo/plugins
plugin_abi=${YOLO_PLUGIN_ABI_VERSION_TEXT}

Name: yolo
Description: YOLO training framework: libyolo and the task plugin SDK
Version: ${PROJECT_VERSION}
Libs: -L\${libdir} -lyolo
Libs.private: -lpthread -lm
Cflags: -I\${includedir}
")
install(FILES ${YOLO_PC_FILE} DESTINATION ${YOLO_INSTALL_LIBDIR}/pkgconfig)
set(YOLO_DETECTION_PC_FILE ${CMAKE_BINARY_DIR}/yolo-detection.pc)
file(WRITE ${YOLO_DETECTION_PC_FILE}
"prefix=\${pcfiledir}/../..
exec_prefix=\${prefix}
libdir=\${exec_prefix}/${YOLO_INSTALL_LIBDIR}
includedir=\${prefix}/${YOLO_INSTALL_INCLUDEDIR}

Name: yolo-detection
Description: YOLO detection toolkit (yolo/detection.h): boxes, anchors, TAL, the v8 detection loss, NMS, AP
Version: ${PROJECT_VERSION}
Requires: yolo = ${PROJECT_VERSION}
Libs: -L\${libdir} -lyolo-detection
Libs.private: -lm
Cflags: -I\${includedir}
")
install(FILES ${YOLO_DETECTION_PC_FILE} DESTINATION ${YOLO_INSTALL_LIBDIR}/pkgconfig)

# The CMake package: yoloConfig.cmake, its version file and the targets.
install(EXPORT yoloTargets NAMESPACE yolo:: DESTINATION ${YOLO_INSTALL_CMAKEDIR})
install(EXPORT yoloDetectionTargets NAMESPACE yolo:: DESTINATION ${YOLO_INSTALL_CMAKEDIR})
# yolo_embed_model_yamls() for out-of-tree plugins (cmake/embed.cmake).
install(FILES ${CMAKE_SOURCE_DIR}/cmake/embed.cmake DESTINATION ${YOLO_INSTALL_CMAKEDIR} RENAME yoloEmbed.cmake)
set(YOLO_CONFIG_IN ${CMAKE_BINARY_DIR}/yoloConfig.cmake.in)
file(WRITE ${YOLO_CONFIG_IN}
"# find_package(yolo): the imported target yolo::yolo (libyolo and the SDK
# headers <yolo/*.h>), the function yolo_embed_model_yamls() (a plugin's
# model yamls embedded at build time), and
#   YOLO_PLUGIN_DIR   the installed plugin directory (lib/yolo/plugins)
#   YOLO_INCLUDE_DIR  the installed include directory
# find_package(yolo COMPONENTS detection) adds yolo::detection, the
# detection toolkit of <yolo/detection.h> (libyolo-detection).
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include(\"\${CMAKE_CURRENT_LIST_DIR}/yoloTargets.cmake\")
include(\"\${CMAKE_CURRENT_LIST_DIR}/yoloEmbed.cmake\")
foreach(yolo_component \${yolo_FIND_COMPONENTS})
  if(yolo_component STREQUAL \"detection\")
    include(\"\${CMAKE_CURRENT_LIST_DIR}/yoloDetectionTargets.cmake\")
    set(yolo_detection_FOUND TRUE)
  else()
    set(yolo_\${yolo_component}_FOUND FALSE)
  endif()
endforeach()
set_and_check(YOLO_INCLUDE_DIR \"@PACKAGE_YOLO_INSTALL_INCLUDEDIR@\")
set(YOLO_PLUGIN_DIR \"@PACKAGE_YOLO_INSTALL_PLUGINDIR@\")
check_required_components(yolo)
")
configure_package_config_file(${YOLO_CONFIG_IN} ${CMAKE_BINARY_DIR}/yoloConfig.cmake
  INSTALL_DESTINATION ${YOLO_INSTALL_CMAKEDIR}
  PATH_VARS YOLO_INSTALL_INCLUDEDIR YOLO_INSTALL_PLUGINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/yoloConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/yoloConfig.cmake ${CMAKE_BINARY_DIR}/yoloConfigVersion.cmake
  DESTINATION ${YOLO_INSTALL_CMAKEDIR})
