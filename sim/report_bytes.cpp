#include "sim/report_bytes.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

namespace capsim::sim {
namespace {

template <typename T>
void append(std::string& bytes, T value) {
  const auto raw = std::bit_cast<std::array<char, sizeof(T)>>(value);
  bytes.append(raw.data(), raw.size());
}

}  // namespace

void ReportWriter::put_double(double value) {
  append(bytes_, value);
}

void ReportWriter::put_int(std::int64_t value) {
  append(bytes_, value);
}

void ReportWriter::put_string(std::string_view text) {
  put_int(static_cast<std::int64_t>(text.size()));
  bytes_.append(text);
}

void ReportReader::take(void* into, std::size_t size) {
  if (bytes_.size() - at_ < size) {
    throw std::runtime_error("child report ends after " + std::to_string(bytes_.size()) +
                             " bytes, expected more");
  }
  std::memcpy(into, bytes_.data() + at_, size);
  at_ += size;
}

double ReportReader::get_double() {
  double value = 0.0;
  take(&value, sizeof value);
  return value;
}

std::int64_t ReportReader::get_int() {
  std::int64_t value = 0;
  take(&value, sizeof value);
  return value;
}

std::string ReportReader::get_string() {
  const std::int64_t size = get_int();
  if (size < 0 || static_cast<std::uint64_t>(size) > bytes_.size() - at_) {
    throw std::runtime_error("child report ends after " + std::to_string(bytes_.size()) +
                             " bytes, expected more");
  }
  std::string text(bytes_.substr(at_, static_cast<std::size_t>(size)));
  at_ += static_cast<std::size_t>(size);
  return text;
}

void ReportReader::finish() const {
  if (at_ != bytes_.size()) {
    throw std::runtime_error("child report has " + std::to_string(bytes_.size() - at_) +
                             " bytes past its end");
  }
}

}  // namespace capsim::sim
