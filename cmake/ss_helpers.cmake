# Sanitized builds run several times slower (ASan ~2-3x, TSan ~5-15x): every test's timeout is
# multiplied by SS_TEST_TIMEOUT_SCALE, so a timeout still means a hang, not a slow build.
if(SS_SANITIZE MATCHES "thread")
  set(_ss_default_scale 6)
elseif(SS_SANITIZE)
  set(_ss_default_scale 3)
else()
  set(_ss_default_scale 1)
endif()
set(SS_TEST_TIMEOUT_SCALE ${_ss_default_scale} CACHE STRING "Multiplier of every test's timeout")

# ss_timeout(<out_var> <seconds>): <seconds> x SS_TEST_TIMEOUT_SCALE.
function(ss_timeout out seconds)
  math(EXPR scaled "${seconds} * ${SS_TEST_TIMEOUT_SCALE}")
  set(${out} ${scaled} PARENT_SCOPE)
endfunction()

# ss_add_test(NAME <name> SOURCES <src...> [LIBS <lib...>] [LABELS <label...>] [TIMEOUT <s>])
#
# Builds one Catch2 v2 executable and registers every TEST_CASE in it as its own CTest test,
# labelled with LABELS (unit, actor, adapter, integration) so `ctest -L unit` selects a layer.
function(ss_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  ss_timeout(T_TIMEOUT ${T_TIMEOUT})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} ss_test_main ss_warnings)
  catch_discover_tests(${T_NAME}
    TEST_PREFIX "${T_NAME}: "
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    EXTRA_ARGS --warn NoAssertions)
endfunction()
