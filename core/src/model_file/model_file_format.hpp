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

// The first version whose HEAD ends with the row precision and whose rows may be 16-bit.
constexpr std::uint32_t first_version_with_row_precision = 2;

// Bytes of one ROWS row: the u64 id, then dim values at precision p.
constexpr std::uint64_t row_bytes(std::uint32_t dim, embedding::row_precision p) {
  return 8 + std::uint64_t{dim} * embedding::bytes_per_value(p);
}

// The HEAD section's payload (always the newest version's), and back from a file of `version`
// (false when it is malformed). The row precision's code is handed back as read, for the reader
// to refuse an unknown one with the file's name; version 1 has none and reads as fp32's.
std::string encode_header(const model_header& h);
bool decode_header(const unsigned char* p, std::size_t n, std::uint32_t version, model_header& h,
                   std::uint32_t& row_precision_code);
using io::tag_text;

}  // namespace ss::model::file_format
