// Writing generated rows (generator.hpp): files split for readers, a train and a test set, and
// rows appended to a growing file; the teacher itself is in generator.cpp.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "ss/core/data/generator.hpp"
#include "ss/core/hash.hpp"

namespace ss::data {

std::vector<std::string> generated_paths(const std::string& path, std::uint32_t files) {
  if (files <= 1) return {path};
  const auto slash = path.find_last_of('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  auto dot = path.find('.', name_start + 1);  // a leading dot is part of the name
  if (dot == std::string::npos) dot = path.size();
  const std::string stem = path.substr(0, dot);
  const std::string ext = path.substr(dot);
  std::vector<std::string> out;
  char part[40];
  for (std::uint32_t k = 0; k < files; ++k) {
    std::snprintf(part, sizeof part, "-%05u-of-%05u", k, files);
    out.push_back(stem + part + ext);
  }
  return out;
}

namespace {

// A plain or gzip output file.
class sink {
 public:
  // `append`: a plain file written at its end, unbuffered (every write is whole lines, so one
  // that follows the file never waits long on half a line).
  static result<std::unique_ptr<sink>> open(const std::string& path, bool gzip, int level, bool append = false) {
    auto s = std::unique_ptr<sink>(new sink(path));
    if (append) {
      s->file_ = std::fopen(path.c_str(), "ab");
      if (s->file_ == nullptr) return status(errc::io_error, path + ": cannot append: " + std::strerror(errno));
      std::setvbuf(s->file_, nullptr, _IONBF, 0);
    } else if (gzip) {
      const char mode[4] = {'w', 'b', static_cast<char>('0' + std::min(std::max(level, 0), 9)), '\0'};
      s->gz_ = gzopen(path.c_str(), mode);
      if (s->gz_ == nullptr) return status(errc::io_error, path + ": cannot create: " + std::strerror(errno));
      gzbuffer(s->gz_, 1 << 20);
    } else {
      s->file_ = std::fopen(path.c_str(), "wb");
      if (s->file_ == nullptr) return status(errc::io_error, path + ": cannot create: " + std::strerror(errno));
    }
    return s;
  }
  sink(const sink&) = delete;
  sink& operator=(const sink&) = delete;
  ~sink() { static_cast<void>(close()); }

  status write(const char* data, std::size_t n) {
    if (n == 0) return status::ok();
    const bool ok = file_ != nullptr ? std::fwrite(data, 1, n, file_) == n
                                     : gzwrite(gz_, data, static_cast<unsigned>(n)) == static_cast<int>(n);
    if (!ok) return status(errc::io_error, path_ + ": write failed: " + std::strerror(errno));
    return status::ok();
  }

  status close() {
    bool ok = true;
    if (file_ != nullptr) ok = std::fclose(file_) == 0;
    if (gz_ != nullptr) ok = gzclose_w(gz_) == Z_OK;
    file_ = nullptr;
    gz_ = nullptr;
    if (!ok) return status(errc::io_error, path_ + ": close failed: " + std::strerror(errno));
    return status::ok();
  }

 private:
  explicit sink(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
};

// Writes stream rows into sinks and sums up what the report says of them.
class row_writer {
 public:
  row_writer(const teacher& t, const generator_options& options)
      : t_(t),
        options_(options),
        rows_key_(hash_combine(hash_combine(t.options().seed, options.rows_seed), 0x726f7773ULL)),
        buffer_(buffer_bytes) {}

  // Rows [first, last) of the stream (the row of `first` in options.first_row's numbering).
  status write(sink& out, std::uint64_t first, std::uint64_t last) {
    static constexpr char hex[] = "0123456789abcdef";
    char* p = buffer_.data();
    char* const flush_at = buffer_.data() + buffer_bytes - max_row_bytes;
    for (std::uint64_t i = first; i < last; ++i) {
      rng r(hash_combine(rows_key_, i));  // row i depends on nothing but i
      t_.draw(r, row_);
      const double prob = t_.probability(row_, drift_angle(options_, i));
      const bool click = r.uniform() < prob;
      report_.clicks += click ? 1 : 0;
      sum_entropy_ += binary_entropy(prob);
      sum_loss_ -= std::log(std::max(click ? prob : 1.0 - prob, 1e-300));

      *p++ = click ? '1' : '0';
      for (std::uint32_t j = 0; j < teacher::num_dense; ++j) {
        *p++ = '\t';
        if (!row_.dense_missing[j]) p = std::to_chars(p, p + 24, row_.dense[j]).ptr;
      }
      for (std::uint32_t f = 0; f < teacher::num_categorical; ++f) {
        *p++ = '\t';
        if (row_.categorical_missing[f]) continue;
        const std::uint32_t tok = row_.token[f];
        for (int c = 0; c < 8; ++c) p[c] = hex[(tok >> (28 - 4 * c)) & 15];
        p += 8;
      }
      *p++ = '\n';
      if (p >= flush_at) {
        SS_RETURN_IF_ERROR(flush(out, p));
        p = buffer_.data();
      }
    }
    return flush(out, p);
  }

  // The report over rows [first, last).
  teacher_report finish(std::uint64_t first, std::uint64_t last) {
    teacher_report report = report_;
    report.rows = last - first;
    if (report.rows > 0) {
      const double n = static_cast<double>(report.rows);
      report.click_rate = static_cast<double>(report.clicks) / n;
      report.bayes_log_loss = sum_entropy_ / n;
      report.realized_log_loss = sum_loss_ / n;
      const double h = binary_entropy(report.click_rate);
      if (h > 0) {
        report.bayes_ne = report.bayes_log_loss / h;
        report.realized_ne = report.realized_log_loss / h;
      }
      constexpr double quarter_turn = 1.5707963267948966;
      report.drift_start = drift_angle(options_, first) / quarter_turn;
      report.drift_end = drift_angle(options_, last - 1) / quarter_turn;
    }
    return report;
  }

 private:
  static constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
  static constexpr std::size_t max_row_bytes = 1024;  // 40 fields, none over 21 bytes

  status flush(sink& out, const char* end) {
    const auto n = static_cast<std::size_t>(end - buffer_.data());
    SS_RETURN_IF_ERROR(out.write(buffer_.data(), n));
    report_.bytes += n;
    return status::ok();
  }

  const teacher& t_;
  const generator_options& options_;
  std::uint64_t rows_key_;
  std::vector<char> buffer_;
  teacher_row row_;
  teacher_report report_;
  double sum_entropy_ = 0, sum_loss_ = 0;
};

}  // namespace

result<teacher_report> generate_criteo(const teacher& t, const generator_options& options,
                                       const std::string& path) {
  if (options.files == 0) return status(errc::invalid_argument, "files must be at least 1");
  if (options.drift_rows > 0 && !t.options().drift)
    return status(errc::invalid_argument, "drift needs a teacher calibrated for it (teacher_options::drift)");
  const auto paths = generated_paths(path, options.files);
  row_writer writer(t, options);
  const std::uint64_t first = options.first_row, last = options.first_row + options.rows;
  for (std::uint32_t k = 0; k < options.files; ++k) {
    auto out = sink::open(paths[k], options.gzip, options.gzip_level);
    if (!out) return out.error();
    SS_RETURN_IF_ERROR(writer.write(**out, first + options.rows * k / options.files,
                                    first + options.rows * (k + 1) / options.files));
    SS_RETURN_IF_ERROR((*out)->close());
  }
  teacher_report report = writer.finish(first, last);
  report.paths = paths;
  return report;
}

result<teacher_report> append_criteo(const teacher& t, const generator_options& options, const std::string& path,
                                     std::uint64_t piece_rows, const std::function<void(std::uint64_t)>& pace) {
  if (options.gzip) return status(errc::invalid_argument, path + ": rows are appended to plain files only, not gzip");
  if (options.drift_rows > 0 && !t.options().drift)
    return status(errc::invalid_argument, "drift needs a teacher calibrated for it (teacher_options::drift)");
  auto out = sink::open(path, false, 0, /*append=*/true);
  if (!out) return out.error();
  row_writer writer(t, options);
  const std::uint64_t first = options.first_row, last = options.first_row + options.rows;
  const std::uint64_t step = std::max<std::uint64_t>(piece_rows, 1);
  for (std::uint64_t at = first; at < last; at += std::min(step, last - at)) {
    SS_RETURN_IF_ERROR(writer.write(**out, at, at + std::min(step, last - at)));
    if (pace) pace(std::min(at + step, last) - first);
  }
  SS_RETURN_IF_ERROR((*out)->close());
  teacher_report report = writer.finish(first, last);
  report.paths = {path};
  return report;
}

namespace {
teacher_options teacher_options_of(const generator_options& options) {
  teacher_options t;
  t.seed = options.seed;
  t.click_rate = options.click_rate;
  t.bayes_ne = options.bayes_ne;
  t.drift = options.drift_rows > 0;
  return t;
}
}  // namespace

result<teacher_report> generate_criteo(const generator_options& options, const std::string& path) {
  const teacher t(teacher_options_of(options));
  return generate_criteo(t, options, path);
}

result<train_test_report> generate_train_test(const generator_options& options, std::uint64_t test_rows,
                                              const std::string& train_path, const std::string& test_path) {
  const teacher t(teacher_options_of(options));
  auto train = generate_criteo(t, options, train_path);
  if (!train) return train.error();
  generator_options test_options = options;
  test_options.rows = test_rows;
  test_options.rows_seed = hash_combine(options.rows_seed, 0x74657374ULL);
  test_options.files = 1;  // the test set is one file; only training data is split for readers
  test_options.first_row = 0;
  if (options.drift_rows > 0 && options.drift_at_row < 0)  // the teacher after the last training row
    test_options.drift_at_row = static_cast<std::int64_t>(options.first_row + options.rows);
  auto test = generate_criteo(t, test_options, test_path);
  if (!test) return test.error();
  return train_test_report{std::move(*train), std::move(*test)};
}

}  // namespace ss::data
