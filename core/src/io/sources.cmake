# Sources of ss_core's io area: durable files and the on-disk byte order.
target_sources(ss_core PRIVATE src/io/durable_file.cpp)
