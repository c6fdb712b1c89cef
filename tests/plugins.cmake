# Fixture task plugins for test_plugin and test_cli (tests/plugin_fixture.c,
# one variant per file) in <build>/tests/plugin-fixtures, plus a file named
# like a plugin that is not a shared object at all. They are kept out of
# lib/yolo/plugins so that `yolo checks` on the build tree stays clean.
set(YOLO_FIXTURE_PLUGIN_DIR ${CMAKE_BINARY_DIR}/tests/plugin-fixtures)
set(yolo_fixture_variants
  fixture:FIXTURE_GOOD badabi:FIXTURE_BAD_ABI newminor:FIXTURE_NEW_MINOR nosymbol:FIXTURE_NO_SYMBOL
  misnamed:FIXTURE_MISNAMED badkeys:FIXTURE_BAD_KEYS nulltable:FIXTURE_NULL_TABLE oldminor:FIXTURE_OLD_MINOR
  badread:FIXTURE_BAD_KEYS_READ)
set(yolo_fixture_targets "")
foreach(variant ${yolo_fixture_variants})
  string(REPLACE ":" ";" parts ${variant})
  list(GET parts 0 name)
  list(GET parts 1 define)
  add_library(yolo-fixture-${name} MODULE ${CMAKE_CURRENT_LIST_DIR}/plugin_fixture.c)
  target_compile_definitions(yolo-fixture-${name} PRIVATE ${define})
  target_include_directories(yolo-fixture-${name} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../sdk/include)
  target_link_libraries(yolo-fixture-${name} PRIVATE yolo_build_flags)
  set_target_properties(yolo-fixture-${name} PROPERTIES PREFIX "lib" OUTPUT_NAME yolo-${name}
    LIBRARY_OUTPUT_DIRECTORY ${YOLO_FIXTURE_PLUGIN_DIR})
  list(APPEND yolo_fixture_targets yolo-fixture-${name})
endforeach()
file(MAKE_DIRECTORY ${YOLO_FIXTURE_PLUGIN_DIR})
file(WRITE ${YOLO_FIXTURE_PLUGIN_DIR}/libyolo-garbage.so "this text file is named like a plugin but is not one\n")

foreach(test test_plugin test_cli test_config)
  add_dependencies(${test} ${yolo_fixture_targets} ${YOLO_PLUGIN_TARGETS} yolo_cli)
endforeach()
