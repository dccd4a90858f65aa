# API tests: public header only (#include <spm.h>).
spm_test(test_roundtrip unit)
spm_test(test_canary unit)
spm_test(test_badinput unit)
target_link_libraries(test_badinput PRIVATE ZLIB::ZLIB)
spm_test(test_crash crash)
spm_test(test_tx_threads unit)
target_link_libraries(test_tx_threads PRIVATE Threads::Threads)
spm_test(test_txlog crash)
