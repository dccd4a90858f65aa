# spm_instrument(<target>...) -- build each target for spm's execution-driven
# core model: every load and store of its sources is instrumented (the
# compiler's ThreadSanitizer instrumentation, GCC or clang, at compile time
# only), and it links libspm-instrument, whose entry points hand the
# accesses to libspm's model instead of a ThreadSanitizer runtime; memcpy,
# memmove and memset calls of the program are wrapped at link time, and
# kept calls (-fno-builtin-*: GCC expands a bounded copy inline, unseen).  Static
# libraries may be instrumented too: the executable that links them gets the
# entry points and the wraps.  Link libspm as the shared library (spm::spm):
# the wraps must not reach libspm's own calls.
function(spm_instrument)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE -fsanitize=thread
      -fno-builtin-memcpy -fno-builtin-memmove -fno-builtin-memset
      $<$<COMPILE_LANG_AND_ID:C,GNU>:--param=tsan-instrument-func-entry-exit=0>
      $<$<COMPILE_LANG_AND_ID:CXX,GNU>:--param=tsan-instrument-func-entry-exit=0>
      "$<$<COMPILE_LANG_AND_ID:C,Clang>:SHELL:-mllvm -tsan-instrument-func-entry-exit=0>"
      "$<$<COMPILE_LANG_AND_ID:CXX,Clang>:SHELL:-mllvm -tsan-instrument-func-entry-exit=0>")
    target_link_libraries(${target} PRIVATE spm::instrument)
  endforeach()
endfunction()
