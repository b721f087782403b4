# Sources of ss_core's job area: the options every training command and service shares.
target_sources(ss_core PRIVATE
  src/job/epoch_options.cpp
  src/job/follow_options.cpp
  src/job/input_options.cpp
  src/job/job_report.cpp
  src/job/job_options.cpp
  src/job/model_options.cpp
  src/job/reader_plan.cpp
  src/job/snapshot.cpp
  src/job/preflight.cpp
  src/job/membership_fence.cpp
  src/job/member_name.cpp
  src/job/progressive_options.cpp)
