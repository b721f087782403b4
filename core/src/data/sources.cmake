# Sources of ss_core's data area.
target_sources(ss_core PRIVATE)
