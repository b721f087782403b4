# Sources of ss_core's serving area: a model serving predictions while its versions change.
target_sources(ss_core PRIVATE
  src/serving/served_model.cpp
  src/serving/request_rows.cpp
  src/serving/publish_follower.cpp
  src/serving/published_model.cpp)
