# The exported symbols: libyolo.so exports exactly the SDK (no internal
# function), and the yolo executable, which the plugins bind to when it
# loads them, exports every YOLO_API function (cmake/check_exports.cmake).
add_test(NAME symbols_libyolo COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DBINARY=$<TARGET_FILE:yolo>
  -DHEADERS=${CMAKE_SOURCE_DIR}/sdk/include -P ${CMAKE_SOURCE_DIR}/cmake/check_exports.cmake)
add_test(NAME symbols_cli COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DBINARY=$<TARGET_FILE:yolo_cli>
  -DHEADERS=${CMAKE_SOURCE_DIR}/sdk/include -DEXTRA_ALLOWED=ON -P ${CMAKE_SOURCE_DIR}/cmake/check_exports.cmake)
set_tests_properties(symbols_libyolo symbols_cli PROPERTIES TIMEOUT 60 LABELS symbols)
