# unit.cmake -- unit tests of the emulated machine (internal) and of options and crash points (API).
spm_test(test_crypto unit internal)
spm_test(test_mac unit internal)
spm_test(test_ctr_cache unit internal)
spm_test(test_timing unit internal)
spm_test(test_config unit)
spm_test(test_crashpoints unit)
spm_test(test_supermem unit internal)
spm_test(test_txlog_fill unit internal)
spm_test(test_multicore unit)
spm_test(test_cache unit internal)
spm_test(test_poolsize unit)
spm_test(test_redo unit internal)
# Memory channels (channels=N, emu/channel.c).
spm_test(test_channel unit internal)
# The core model's access path in an instrumented program: fork, a core
# shared by threads, an address in no view.
if(SPM_INSTRUMENT)
  spm_test(test_access unit)
  target_include_directories(test_access PRIVATE ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(test_access PRIVATE Threads::Threads)
  spm_instrument(test_access)
endif()
# The map workloads' key distributions (examples/common/ex_keys.c): Zipfian
# keys skewed and deterministic, uniform keys the op sequence they always were.
if(TARGET ex_common)
  spm_test(test_zipf unit)
  if(TARGET ex_common_native)
    target_link_libraries(test_zipf PRIVATE ex_common_native)
  else()
    target_link_libraries(test_zipf PRIVATE ex_common)
  endif()
endif()
