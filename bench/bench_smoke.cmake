# bench_smoke.cmake -- ctest bench_smoke: spm-bench on two designs, two workloads, 2 cores; CSV checked; --prefault 0 changes no modeled column.
set(csv ${DIR}/bench_smoke.csv)
file(REMOVE ${csv})
execute_process(COMMAND ${BENCH} --designs plain,sca --workloads queue,btree --ops 200
                        --cores 1,2 --dir ${DIR} --csv ${csv}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spm-bench exited ${rc}:\n${err}")
endif()
if(NOT EXISTS ${csv})
  message(FATAL_ERROR "no CSV at ${csv}")
endif()
file(STRINGS ${csv} lines)
list(LENGTH lines n)
list(GET lines 0 header)
set(want "design,workload,profile,cores,threads,tx_size,ops,modeled_ns,wall_ns,writes,writes_data,writes_counter,writes_log,writes_meta,reads,ctr_hits,ctr_misses,coalesced")
string(FIND "${header}" "${want}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "CSV header is\n${header}\nexpected it to start with\n${want}")
endif()
# 2 designs x 2 workloads x 2 core counts
if(NOT n EQUAL 9)
  message(FATAL_ERROR "CSV has ${n} lines, expected 9:\n${lines}")
endif()
foreach(line IN LISTS lines)
  if(line MATCHES "^sca,btree,sca,2,1,64,400,[1-9][0-9]*,")
    set(found 1)
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "no row sca,btree,...,2 cores, 400 ops with modeled time:\n${lines}")
endif()

# Prefaulting (the default) changes no modeled number: the same run with --prefault 0 gives
# every column but wall_ns and the options string, to the digit.
set(csv0 ${DIR}/bench_smoke_prefault0.csv)
file(REMOVE ${csv0})
execute_process(COMMAND ${BENCH} --designs plain,sca --workloads queue,btree --ops 200
                        --cores 1,2 --dir ${DIR} --csv ${csv0} --prefault 0
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spm-bench --prefault 0 exited ${rc}:\n${err}")
endif()
file(STRINGS ${csv0} lines0)
function(modeled_only in out)
  set(r "")
  foreach(line IN LISTS ${in})
    # CMake's regular expressions have no {n}: eight fields, then wall_ns
    string(REGEX REPLACE "^([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*,"
           "\\1-," line "${line}")
    string(REGEX REPLACE ",\"[^\"]*\"" "" line "${line}") # the options column
    list(APPEND r "${line}")
  endforeach()
  set(${out} "${r}" PARENT_SCOPE)
endfunction()
modeled_only(lines m1)
modeled_only(lines0 m0)
if(NOT m1 STREQUAL m0)
  message(FATAL_ERROR "--prefault 0 changed a modeled column:\n${m1}\n---\n${m0}")
endif()
file(REMOVE ${csv0})
