# Sources of ss_core's metrics area.
target_sources(ss_core PRIVATE)
