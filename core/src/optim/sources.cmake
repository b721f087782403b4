# Sources of ss_core's optim area.
target_sources(ss_core PRIVATE src/optim/optimizers.cpp)
