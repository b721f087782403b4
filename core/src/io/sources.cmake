# Sources of ss_core's io area: durable files, the on-disk byte order, the manifests' keyed text,
# the model file's magic, the framing of sectioned binary files (model and delta files).
target_sources(ss_core PRIVATE src/io/durable_file.cpp src/io/keyed_text.cpp src/io/model_magic.cpp
                               src/io/section_file.cpp)
