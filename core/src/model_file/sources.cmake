# Sources of ss_core's model_file area: the exported model file, above the job whose options it records.
target_sources(ss_core PRIVATE src/model_file/model_writer.cpp src/model_file/model_reader.cpp)
