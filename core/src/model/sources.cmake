# Sources of ss_core's model area.
target_sources(ss_core PRIVATE)
