# DDP: the communicator's test runs as two ranks under mpirun; the
# end-to-end DDP tests (test_ddp_*.c) start `yolo ... world=2`, which
# re-launches itself under mpirun.
set(YOLO_MPIRUN ${MPIEXEC_EXECUTABLE}) # the launcher of the MPI found (-DMPIEXEC_EXECUTABLE=... to choose)
add_executable(test_dist ${CMAKE_CURRENT_SOURCE_DIR}/mpi_dist.c)
target_link_libraries(test_dist PRIVATE yolo_test_util MPI::MPI_C)
yolo_link_core(test_dist)
set(YOLO_MPIRUN_ARGS -np 2)
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  list(PREPEND YOLO_MPIRUN_ARGS --oversubscribe)
endif()
add_test(NAME test_dist COMMAND ${YOLO_MPIRUN} ${YOLO_MPIRUN_ARGS} $<TARGET_FILE:test_dist>)
# Open MPI refuses root unless told; its own allocations are not ours to report as leaks
set_tests_properties(test_dist PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0:halt_on_error=1")
# test_ddp_fault checks rank 0's message where the launcher lets it live (Open MPI)
target_link_libraries(test_ddp_fault PRIVATE MPI::MPI_C)
