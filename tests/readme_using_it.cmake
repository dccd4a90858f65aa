# readme_using_it.cmake -- cmake -P script: the ```c block of README.md's
# "Using it" section, compiled as a user would (-Wall -Wextra -Werror, against
# the built libspm) and run twice on one pool: the first run must print
# "count 1", the second "count 2" (it opened what the first created).
#   -DREADME=README.md -DCC=compiler -DINC=include dir -DLIB=libspm.so
#   -DDIR=work dir [-DFLAGS=extra;compiler;flags]
foreach(v README CC INC LIB DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "readme_using_it: -D${v}= missing")
  endif()
endforeach()

file(READ ${README} text)
string(FIND "${text}" "\n## Using it\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "readme_using_it: no \"## Using it\" section in ${README}")
endif()
# the section: from its heading to the next "## " heading
math(EXPR at "${at} + 1")
string(SUBSTRING "${text}" ${at} -1 text)
string(FIND "${text}" "\n## " next)
if(NOT next EQUAL -1)
  string(SUBSTRING "${text}" 0 ${next} text)
endif()
string(FIND "${text}" "\n```c\n" open)
if(open EQUAL -1)
  message(FATAL_ERROR "readme_using_it: no ```c block in README's \"Using it\"")
endif()
math(EXPR open "${open} + 6")
string(SUBSTRING "${text}" ${open} -1 text)
string(FIND "${text}" "\n```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "readme_using_it: the ```c block is not closed")
endif()
string(SUBSTRING "${text}" 0 ${close} code)

file(MAKE_DIRECTORY ${DIR})
set(src ${DIR}/readme_using_it.c)
set(exe ${DIR}/readme_using_it)
set(pool ${DIR}/readme.pool)
file(WRITE ${src} "${code}\n")
file(REMOVE ${exe} ${pool} ${pool}.meta ${pool}.key)

get_filename_component(libdir ${LIB} DIRECTORY)
execute_process(COMMAND ${CC} -Wall -Wextra -Werror ${FLAGS} -I${INC} -o ${exe} ${src}
                        ${LIB} -Wl,-rpath,${libdir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readme_using_it: README's program does not compile "
                      "(${src}):\n${out}")
endif()

foreach(run 1 2)
  execute_process(COMMAND ${exe} ${pool} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "run ${run}: exit ${rc}: ${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readme_using_it: run ${run} exited ${rc}: ${out}${err}")
  endif()
  if(NOT out MATCHES "(^|\n)count ${run}[^0-9]")
    message(FATAL_ERROR "readme_using_it: run ${run} should print \"count ${run}\", "
                        "printed: ${out}")
  endif()
endforeach()
file(REMOVE ${exe} ${pool} ${pool}.meta ${pool}.key)
