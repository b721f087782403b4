# Sources of ss_core's sync area.
target_sources(ss_core PRIVATE)
