# Sources of ss_core's io area: durable files, the on-disk byte order, the manifests' keyed text.
target_sources(ss_core PRIVATE src/io/durable_file.cpp src/io/keyed_text.cpp)
