# Runs one libFuzzer target for SECONDS on a fresh copy of its seed corpus (CTest's `fuzz` label):
#   cmake -DFUZZER=... -DSEEDS=... -DWORK=... -DDICTIONARY=<file or empty> -DSECONDS=60 -DSEED=1 -P this
# New inputs go to WORK/corpus (copied from SEEDS first, so the committed corpus is untouched);
# a crash, leak, timeout or broken invariant leaves its input in WORK/artifacts and fails.
# SEED fixes libFuzzer's random choices (0: a new seed each run): the same seeds and corpus give
# the same inputs in the same order, so a test run is a repeatable gate whose outcome depends on
# the code under test, and a failure reproduces. scripts/fuzz.sh explores with new seeds.
foreach(variable FUZZER SEEDS WORK SECONDS SEED)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzz_target.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}/corpus")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(COPY "${SEEDS}/" DESTINATION "${WORK}/corpus")

set(options -max_total_time=${SECONDS} -seed=${SEED} -print_final_stats=1 -rss_limit_mb=2048
            -timeout=10 -artifact_prefix=${WORK}/artifacts/)
if(DICTIONARY)
  list(APPEND options -dict=${DICTIONARY})
endif()
execute_process(COMMAND "${FUZZER}" ${options} "${WORK}/corpus" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${status}); the input is in ${WORK}/artifacts/")
endif()
