#include "ss/core/model/dlrm_config.hpp"

#include <charconv>
#include <string>

namespace ss::model {

status dlrm_config::validate() const {
  if (num_sparse == 0) return {errc::invalid_argument, "the model needs at least one categorical feature"};
  if (num_sparse + 1 > 128)
    return {errc::invalid_argument,
            "at most 127 categorical features are supported (got " + std::to_string(num_sparse) + ")"};
  if (embedding_dim == 0 || embedding_dim > 1024)
    return {errc::invalid_argument, "embedding dim must be in [1, 1024] (got " +
                                        std::to_string(embedding_dim) + ")"};
  if (bottom_mlp.empty()) return {errc::invalid_argument, "the bottom MLP needs at least one layer"};
  if (top_mlp.empty()) return {errc::invalid_argument, "the top MLP needs at least one layer"};
  for (auto w : bottom_mlp)
    if (w == 0 || w > 65536) return {errc::invalid_argument, "bottom MLP widths must be in [1, 65536]"};
  for (auto w : top_mlp)
    if (w == 0 || w > 65536) return {errc::invalid_argument, "top MLP widths must be in [1, 65536]"};
  if (bottom_mlp.back() != embedding_dim)
    return {errc::invalid_argument, "the last bottom MLP layer (" + std::to_string(bottom_mlp.back()) +
                                        ") must equal the embedding dim (" +
                                        std::to_string(embedding_dim) + ")"};
  if (top_mlp.back() != 1)
    return {errc::invalid_argument, "the last top MLP layer must have width 1 (the logit), got " +
                                        std::to_string(top_mlp.back())};
  // Weights and biases of both MLPs, counted before anything is allocated: an absurd shape is a
  // message, not an allocation failure.
  std::uint64_t params = 0, in = num_dense;
  for (auto w : bottom_mlp) params += (in + 1) * w, in = w;
  in = top_input();
  for (auto w : top_mlp) params += (in + 1) * w, in = w;
  if (params > max_dense_params)
    return {errc::invalid_argument, "the MLPs would have " + std::to_string(params) + " dense parameters (" +
                                        std::to_string(params * 4 >> 20) + " MiB); at most " +
                                        std::to_string(max_dense_params) + " are supported: use narrower layers"};
  return status::ok();
}

std::string dlrm_config::describe() const {
  return std::to_string(num_dense) + "-" + layer_list_text(bottom_mlp) + " | " + std::to_string(top_input()) + "-" +
         layer_list_text(top_mlp) + " | " + std::to_string(num_sparse) + " x " + std::to_string(embedding_dim);
}

std::string layer_list_text(const std::vector<std::uint32_t>& layers) {
  std::string s;
  for (auto w : layers) s += (s.empty() ? "" : "-") + std::to_string(w);
  return s;
}

result<std::vector<std::uint32_t>> parse_layer_list(std::string_view text) {
  std::vector<std::uint32_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find_first_of("-,", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    std::uint32_t v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v == 0)
      return {errc::invalid_argument, "'" + std::string(text) +
                                          "' is not a list of positive layer widths such as 512-256-64-16"};
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

}  // namespace ss::model
