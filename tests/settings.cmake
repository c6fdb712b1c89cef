# grep-level evidence that every key of default.yaml is read somewhere (issue 14).
add_test(NAME key_readers COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_key_readers.sh ${CMAKE_SOURCE_DIR})
