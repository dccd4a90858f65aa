# spm_instrument(<target>...) -- build each target for spm's execution-driven
# core model: every load and store of its sources is instrumented (the
# compiler's ThreadSanitizer instrumentation, GCC or clang, at compile time
# only), and it links libspm-instrument, whose entry points hand the
# accesses to libspm's model instead of a ThreadSanitizer runtime; memcpy,
# memmove and memset calls of the program are wrapped at link time, and
# kept calls (-fno-builtin-*: GCC expands a bounded copy inline, unseen;
# -U_FORTIFY_SOURCE: no __memcpy_chk, which is not wrapped).  Not seen:
# copies by other libc functions (snprintf into a view); counted twice:
# GCC's copies of aggregates of 16 KiB and more (a range and a memcpy).  Static
# libraries may be instrumented too: the executable that links them gets the
# entry points and the wraps.  Link libspm as the shared library (spm::spm):
# the wraps must not reach libspm's own calls.
function(spm_instrument)
  foreach(target IN LISTS ARGN)
    get_target_property(libs ${target} LINK_LIBRARIES)
    if(libs MATCHES "(^|;)(spm::)?spm_static(;|$)")
      message(FATAL_ERROR "spm_instrument(${target}): it links the static libspm; "
              "link spm::spm (the wraps of memcpy, memmove and memset would reach "
              "libspm's own calls)")
    endif()
    target_compile_options(${target} PRIVATE -fsanitize=thread
      -fno-builtin-memcpy -fno-builtin-memmove -fno-builtin-memset -U_FORTIFY_SOURCE
      $<$<COMPILE_LANG_AND_ID:C,GNU>:--param=tsan-instrument-func-entry-exit=0>
      $<$<COMPILE_LANG_AND_ID:CXX,GNU>:--param=tsan-instrument-func-entry-exit=0>
      "$<$<COMPILE_LANG_AND_ID:C,Clang>:SHELL:-mllvm -tsan-instrument-func-entry-exit=0>"
      "$<$<COMPILE_LANG_AND_ID:CXX,Clang>:SHELL:-mllvm -tsan-instrument-func-entry-exit=0>")
    target_link_libraries(${target} PRIVATE spm::instrument)
  endforeach()
endfunction()
