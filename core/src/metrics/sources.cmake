# Sources of ss_math's metrics area.
target_sources(ss_math PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/accumulator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/progressive.cpp
  ${CMAKE_CURRENT_LIST_DIR}/status_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history.cpp)
target_sources(ss_math PRIVATE ${CMAKE_CURRENT_LIST_DIR}/prometheus.cpp)
