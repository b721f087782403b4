# Sources of ss_core's config area.
target_sources(ss_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/environment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ini.cpp
  ${CMAKE_CURRENT_LIST_DIR}/option_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/suggest.cpp
  ${CMAKE_CURRENT_LIST_DIR}/text.cpp)
