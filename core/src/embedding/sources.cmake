# Sources of ss_core's embedding area.
target_sources(ss_core PRIVATE)
