# Runs one libFuzzer target for SECONDS on a fresh copy of its seed corpus (CTest's `fuzz` label):
#   cmake -DFUZZER=... -DSEEDS=... -DWORK=... -DDICTIONARY=<file or empty> -DSECONDS=60 -P this
# New inputs go to WORK/corpus (copied from SEEDS first, so the committed corpus is untouched);
# a crash, leak, timeout or broken invariant leaves its input in WORK/artifacts and fails.
foreach(variable FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzz_target.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}/corpus")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(COPY "${SEEDS}/" DESTINATION "${WORK}/corpus")

set(options -max_total_time=${SECONDS} -print_final_stats=1 -rss_limit_mb=2048 -timeout=10
            -artifact_prefix=${WORK}/artifacts/)
if(DICTIONARY)
  list(APPEND options -dict=${DICTIONARY})
endif()
execute_process(COMMAND "${FUZZER}" ${options} "${WORK}/corpus" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${status}); the input is in ${WORK}/artifacts/")
endif()
