# The Vulkan tests (test_vulkan_*) run with the Khronos validation layer and
# its synchronization validation when the layer is installed (Debian package
# vulkan-validationlayers): any message it emits fails the test. Without a
# Vulkan device they skip (exit code 77) with the reason printed.
find_file(YOLO_VK_VALIDATION_LAYER VkLayer_khronos_validation.json
  PATHS /usr/share/vulkan/explicit_layer.d /usr/local/share/vulkan/explicit_layer.d /etc/vulkan/explicit_layer.d
  NO_DEFAULT_PATH)
foreach(src ${YOLO_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  if(name MATCHES "^test_vulkan_")
    set_property(TEST ${name} APPEND PROPERTY LABELS vulkan)
    if(YOLO_VK_VALIDATION_LAYER)
      set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "YOLO_VK_VALIDATE=1")
    endif()
    if(YOLO_SANITIZE)
      # the validation layer's own leaks (see the file); libyolo's still fail the test
      set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
        "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/vulkan_lsan.supp:print_suppressions=0")
    endif()
  endif()
endforeach()

# A Vulkan test run once more as NAME under extra environment (a list of
# VAR=value); VALIDATE adds the validation layer where it is installed.
function(yolo_vulkan_test_variant name exe validate)
  set(env ${ARGN} "YOLO_DATASETS_DIR=${YOLO_DATASETS_DIR}" "YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
    "YOLO_BINARY_DIR=${CMAKE_BINARY_DIR}" "YOLO_PLUGIN_PATH=${YOLO_PLUGIN_OUTPUT_DIR}")
  if(validate AND YOLO_VK_VALIDATION_LAYER)
    list(APPEND env "YOLO_VK_VALIDATE=1")
  endif()
  if(YOLO_SANITIZE)
    list(APPEND env "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/vulkan_lsan.supp:print_suppressions=0")
  endif()
  add_test(NAME ${name} COMMAND ${exe})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS vulkan ENVIRONMENT "${env}")
endfunction()

# amp's training step once more with the GEMMs on the cooperative-matrix
# kernels, emulated (YOLO_VK_COOPMAT=emulate): gemm_coop.glsl through a whole
# YOLOv8n step, the loss scaler's skip included (test_vulkan_coop checks the ops)
yolo_vulkan_test_variant(test_amp_vulkan_train_coop test_amp_vulkan_train OFF YOLO_VK_COOPMAT=emulate)

# and with every transfer staged, as on a discrete GPU whose device memory
# the host cannot map (YOLO_VK_FORCE_STAGING=1 on lavapipe's unified memory),
# under the validation layer's synchronization checks
yolo_vulkan_test_variant(test_amp_vulkan_train_staged test_amp_vulkan_train ON YOLO_VK_FORCE_STAGING=1)

# The op parity tests once more with lavapipe's subgroups at 16 lanes instead
# of 8 (LP_NATIVE_VECTOR_WIDTH=512; other devices ignore it): the subgroup
# reductions must not assume a width (NVIDIA's is 32, AMD's 32 or 64)
yolo_vulkan_test_variant(test_vulkan_ops_subgroup16 test_vulkan_ops ON LP_NATIVE_VECTOR_WIDTH=512)
