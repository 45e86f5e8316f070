// Prometheus' text exposition format (version 0.0.4), as musterd's and the
// agents' /metrics write it: one Family per metric, its HELP and TYPE
// first, then its series together (the format wants a family's series in
// one block, so a family's text() is appended whole).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace muster::util {

// A label value, escaped as the format asks (backslash, quote, newline).
std::string EscapeLabelValue(std::string_view v);

// Label name, value pairs of one series.
using PromLabels = std::vector<std::pair<std::string_view, std::string_view>>;

class PromFamily {
 public:
  // `type`: gauge, counter, histogram or summary.
  PromFamily(std::string name, std::string_view type, std::string_view help);
  // One series; `suffix` for a histogram's or summary's _bucket, _sum, _count.
  void Add(const PromLabels& labels, double value, std::string_view suffix = "");
  // Room for `bytes` more of text: a family of many series grows once.
  void Reserve(size_t bytes) { text_.reserve(text_.size() + bytes); }
  bool empty() const { return series_ == 0; }
  const std::string& text() const { return text_; }

 private:
  std::string name_;
  std::string text_;
  int series_ = 0;
};

}  // namespace muster::util
