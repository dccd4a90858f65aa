# examples.cmake -- the persistent data-structure examples (examples/<name>),
# each driven by test_examples.sh: round trips on every design (unit) and
# crash tests (crash): SPM_CRASH sweeps and a kill -9 on ideal, fca and sca,
# and the unsafe design shown to fail the check.
if(TARGET spm-btree)
  foreach(name array bptree btree hashmap list queue rbtree skiplist)
    if(NOT TARGET spm-${name})
      continue()
    endif()
    add_test(NAME examples_${name}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_examples.sh ${name}
                     $<TARGET_FILE:spm-${name}> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
    add_test(NAME examples_${name}_crash
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_examples.sh ${name}
                     $<TARGET_FILE:spm-${name}> ${CMAKE_CURRENT_BINARY_DIR}/tmp crash)
    set_tests_properties(examples_${name} PROPERTIES LABELS unit TIMEOUT 300
                         ENVIRONMENT "SPM_CONF=;SPM_CRASH=")
    set_tests_properties(examples_${name}_crash PROPERTIES LABELS crash TIMEOUT 600
                         ENVIRONMENT "SPM_CONF=;SPM_CRASH=")
  endforeach()
endif()
