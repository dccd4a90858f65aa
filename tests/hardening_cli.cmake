# hardening_cli.cmake -- tests of options, crash points, layouts and the examples' command lines.
# Test knobs refused without SPM_TEST_KNOBS=1; SPM_CRASH=point:NAME checked
# against the list of crash points.
spm_test(test_test_knobs unit internal)
# layout=NAME stored at create, checked at open before anything is written.
spm_test(test_layout unit)
# The examples' command lines: layouts (spm-hello on a B-tree pool), the
# recovery line of check, usage errors, --help, the test switch.
if(TARGET spm-btree)
  add_test(NAME examples_cli
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_examples_cli.sh
                   $<TARGET_FILE_DIR:spm-btree> ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(examples_cli PROPERTIES LABELS unit TIMEOUT 300
                       ENVIRONMENT "SPM_CONF=;SPM_CRASH=;SPM_TEST_KNOBS=")
endif()
