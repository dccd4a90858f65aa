# hardening_runtime.cmake -- tests of the runtime's refusals of misuse: fork, dead threads, statistics, frees.
