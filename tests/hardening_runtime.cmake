# hardening_runtime.cmake -- tests of the runtime's refusals of misuse: fork, dead threads, statistics, frees.
# An inherited pool in a child of fork(): every call refused, and the
# child's spm_close leaves the parent's crash recoverable.
spm_test(test_fork unit)
# Threads exiting inside transactions: aborted, their lanes freed.
spm_test(test_thread_exit unit)
target_link_libraries(test_thread_exit PRIVATE Threads::Threads)
# Statistic names, the root's free, spm_root in a transaction, spm_errcode,
# a failed spm_tx_add.
spm_test(test_misuse unit)
