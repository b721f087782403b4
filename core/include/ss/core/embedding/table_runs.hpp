#pragma once
// Rows listed by table, then id (a staged publication, a page of one): each run of one table is
// read or written as one block.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::embedding {

// Calls add(begin, end) for each run of one table in `tables`, until one fails.
template <class Add>
status for_each_table_run(const std::vector<std::uint32_t>& tables, Add&& add) {
  for (std::size_t begin = 0; begin < tables.size();) {
    std::size_t end = begin;
    while (end < tables.size() && tables[end] == tables[begin]) ++end;
    SS_RETURN_IF_ERROR(add(begin, end));
    begin = end;
  }
  return status::ok();
}

}  // namespace ss::embedding
