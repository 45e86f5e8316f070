#include "cli/options.h"

namespace muster::cli {

std::vector<std::string> SplitShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        cur += line[++i];
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
      continue;
    }
    if (c == '#' && !in_word) break;  // a comment after the options
    cur += c;
    in_word = true;
  }
  if (in_word) words.push_back(cur);
  return words;
}

}  // namespace muster::cli
