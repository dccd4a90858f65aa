# unit.cmake -- unit tests of the emulated machine (internal) and of options and crash points (API).
spm_test(test_crypto unit internal)
spm_test(test_ctr_cache unit internal)
spm_test(test_timing unit internal)
spm_test(test_config unit)
spm_test(test_crashpoints unit)
spm_test(test_supermem unit internal)
spm_test(test_txlog_fill unit internal)
spm_test(test_multicore unit)
