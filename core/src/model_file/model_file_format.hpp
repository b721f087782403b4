// The model file's sections, shared by its writer (model_writer.cpp) and reader
// (model_reader.cpp); the byte-level format is specified in ss/core/model_file/model_file.hpp, the
// framing (preamble, section heads, CRCs, the temporary) is ss/core/io/section_file.hpp's.
#pragma once

#include <cstdint>
#include <string>

#include "ss/core/io/section_file.hpp"
#include "ss/core/model_file/model_file.hpp"

namespace ss::model::file_format {

constexpr std::uint64_t max_header_bytes = std::uint64_t{1} << 30;
constexpr std::uint32_t max_tables = 1u << 20;
constexpr std::uint32_t max_dim = 1u << 16;

constexpr char tag_head[4] = {'H', 'E', 'A', 'D'};
constexpr char tag_dense[4] = {'D', 'E', 'N', 'S'};
constexpr char tag_rows[4] = {'R', 'O', 'W', 'S'};
constexpr char tag_foot[4] = {'F', 'O', 'O', 'T'};

// The HEAD section's payload, and back (false when it is malformed).
std::string encode_header(const model_header& h);
bool decode_header(const unsigned char* p, std::size_t n, model_header& h);
using io::tag_text;

}  // namespace ss::model::file_format
