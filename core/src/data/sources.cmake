# Sources of ss_math's data area.
target_sources(ss_math PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/batch_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/epoch_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/follow_batch_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/follow_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generator_files.cpp
  ${CMAKE_CURRENT_LIST_DIR}/input_schema.cpp
  ${CMAKE_CURRENT_LIST_DIR}/line_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/row_assembler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/row_parser.cpp)
