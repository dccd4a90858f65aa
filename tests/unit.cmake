# unit.cmake -- unit tests of the emulated machine (internal) and of options and crash points (API).
spm_test(test_crypto unit internal)
spm_test(test_ctr_cache unit internal)
spm_test(test_timing unit internal)
spm_test(test_config unit)
spm_test(test_crashpoints unit)
spm_test(test_supermem unit internal)
spm_test(test_txlog_fill unit internal)
spm_test(test_multicore unit)
spm_test(test_cache unit internal)
spm_test(test_poolsize unit)
# The core model's access path in an instrumented program: fork, a core
# shared by threads, an address in no view.
if(SPM_INSTRUMENT)
  spm_test(test_access unit)
  target_include_directories(test_access PRIVATE ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(test_access PRIVATE Threads::Threads)
  spm_instrument(test_access)
endif()
