#include "util/prom_text.h"

#include <fmt/format.h>

namespace muster::util {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

PromFamily::PromFamily(std::string name, std::string_view type, std::string_view help)
    : name_(std::move(name)) {
  text_ = fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, help, name_, type);
}

void PromFamily::Add(const PromLabels& labels, double value, std::string_view suffix) {
  ++series_;
  text_ += name_;
  text_ += suffix;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += labels[i].first;
      text_ += "=\"";
      text_ += EscapeLabelValue(labels[i].second);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += fmt::format(" {}\n", value);
}

}  // namespace muster::util
