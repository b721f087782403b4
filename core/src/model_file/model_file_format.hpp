// The model file's sections, shared by its writer (model_writer.cpp) and reader
// (model_reader.cpp); the byte-level format is specified in ss/core/model_file/model_file.hpp.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "ss/core/model_file/model_file.hpp"

namespace ss::model::file_format {

constexpr std::size_t preamble_bytes = 12;
constexpr std::size_t head_bytes = 20;
constexpr std::uint64_t max_header_bytes = std::uint64_t{1} << 30;
constexpr std::uint32_t max_tables = 1u << 20;
constexpr std::uint32_t max_dim = 1u << 16;
constexpr std::size_t io_buffer_bytes = std::size_t{1} << 20;

constexpr char tag_head[4] = {'H', 'E', 'A', 'D'};
constexpr char tag_dense[4] = {'D', 'E', 'N', 'S'};
constexpr char tag_rows[4] = {'R', 'O', 'W', 'S'};
constexpr char tag_foot[4] = {'F', 'O', 'O', 'T'};

// A section head: tag, two fields, the CRC32C of those 16 bytes (little-endian).
void encode_head(unsigned char* out, const char* tag, std::uint32_t a, std::uint64_t b);
// The HEAD section's payload, and back (false when it is malformed).
std::string encode_header(const model_header& h);
bool decode_header(const unsigned char* p, std::size_t n, model_header& h);
// A tag for messages: printable bytes as they are, others as \xNN.
std::string tag_text(const unsigned char* tag);

inline std::string errno_text() { return std::strerror(errno); }

}  // namespace ss::model::file_format
