# ss_add_test(NAME <name> SOURCES <src...> [LIBS <lib...>] [LABELS <label...>] [TIMEOUT <s>])
#
# Builds one Catch2 v2 executable and registers every TEST_CASE in it as its own CTest test,
# labelled with LABELS (unit, actor, adapter, integration) so `ctest -L unit` selects a layer.
function(ss_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} ss_test_main ss_warnings)
  catch_discover_tests(${T_NAME}
    TEST_PREFIX "${T_NAME}: "
    PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    EXTRA_ARGS --warn NoAssertions)
endfunction()
