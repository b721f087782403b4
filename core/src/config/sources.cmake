# Sources of ss_core's config area.
target_sources(ss_core PRIVATE)
