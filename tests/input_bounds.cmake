# test_input_bounds (tests/test_input_bounds.c) writes its hostile .pt
# files with zlib: members of gigabytes of deflated zeros.
if(TARGET test_input_bounds)
  pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
  target_link_libraries(test_input_bounds PRIVATE PkgConfig::ZLIB)
endif()
