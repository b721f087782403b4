# Sources of ss_core's publish area: the publication format (manifests, delta files, the publish
# directory and the chains a server follows in it), above the model file a base is written in.
target_sources(ss_core PRIVATE
  src/publish/manifest.cpp
  src/publish/publish_dir.cpp
  src/publish/chain.cpp
  src/publish/delta_writer.cpp
  src/publish/delta_reader.cpp)
