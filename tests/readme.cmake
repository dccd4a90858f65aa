# readme.cmake -- tests of the README's program, compiled and run as a user would.

# readme_using_it: the ```c block of README.md's "Using it" section (so the
# README and the test cannot drift) compiled with -Wall -Wextra -Werror against
# the built libspm and run twice on one pool; the second run must see the
# first's data (count 1, then count 2).  tests/readme_using_it.cmake.
set(readme_flags "")
if(SPM_SANITIZE)
  list(APPEND readme_flags -fsanitize=address,undefined)
endif()
if(SPM_TSAN)
  list(APPEND readme_flags -fsanitize=thread)
endif()
string(REPLACE ";" "\\;" readme_flags "${readme_flags}")
add_test(NAME readme_using_it
         COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md
                 -DCC=${CMAKE_C_COMPILER} -DINC=${PROJECT_SOURCE_DIR}/include
                 -DLIB=$<TARGET_FILE:spm> -DDIR=${CMAKE_CURRENT_BINARY_DIR}/tmp/readme
                 "-DFLAGS=${readme_flags}"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/readme_using_it.cmake)
set_tests_properties(readme_using_it PROPERTIES LABELS unit TIMEOUT 120
                     ENVIRONMENT "SPM_CONF=;SPM_CRASH=;SPM_EVICT=;SPM_AUDIT=;SPM_POWERFAIL=")
