# Sources of ss_core's data area.
target_sources(ss_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/batch_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/epoch_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/input_schema.cpp
  ${CMAKE_CURRENT_LIST_DIR}/line_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/row_parser.cpp)
