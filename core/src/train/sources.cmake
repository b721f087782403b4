# Sources of ss_core's train area.
target_sources(ss_core PRIVATE)
