# Hostile inputs (issue 14): the data-level cases need libarchive to write
# a zip bomb; the CLI-level ones run build/bin/yolo.
if(TARGET test_data_hostile)
  target_link_libraries(test_data_hostile PRIVATE PkgConfig::ARCHIVE)
endif()
