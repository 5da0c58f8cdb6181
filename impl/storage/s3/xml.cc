#include "impl/storage/s3/xml.h"

#include <cstdint>

namespace smd::s3 {
namespace xml {

std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out.push_back('&');
    else if (ent == "lt") out.push_back('<');
    else if (ent == "gt") out.push_back('>');
    else if (ent == "quot") out.push_back('"');
    else if (ent == "apos") out.push_back('\'');
    else if (ent.size() >= 2 && ent[0] == '#') {
      unsigned long cp = ent[1] == 'x' || ent[1] == 'X'
                             ? std::strtoul(std::string(ent.substr(2)).c_str(), nullptr, 16)
                             : std::strtoul(std::string(ent.substr(1)).c_str(), nullptr, 10);
      // UTF-8 encode.
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.push_back('&');
      continue;
    }
    i = semi;
  }
  return out;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string_view> Elements(std::string_view doc, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(tag);
  const std::string close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = doc.find(open, pos)) != std::string_view::npos) {
    size_t after = pos + open.size();
    if (after >= doc.size()) break;
    char c = doc[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') {
      pos = after;  // a longer tag name with the same start
      continue;
    }
    size_t gt = doc.find('>', after);
    if (gt == std::string_view::npos) break;
    if (doc[gt - 1] == '/') {  // <tag/>
      out.push_back(std::string_view());
      pos = gt + 1;
      continue;
    }
    size_t end = doc.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(doc.substr(gt + 1, end - gt - 1));
    pos = end + close.size();
  }
  return out;
}

std::vector<std::string> AllText(std::string_view doc, std::string_view tag) {
  std::vector<std::string> out;
  for (std::string_view e : Elements(doc, tag)) out.push_back(Unescape(e));
  return out;
}

std::string FirstText(std::string_view doc, std::string_view tag) {
  auto e = Elements(doc, tag);
  return e.empty() ? std::string() : Unescape(e[0]);
}

std::string WholeDocument(std::string_view body, std::string_view root) {
  const std::string open = "<" + std::string(root);
  const std::string close = "</" + std::string(root) + ">";
  size_t end = body.find_last_not_of(" \t\r\n");
  if (body.find(open) == std::string_view::npos) return "no <" + std::string(root) + ">";
  if (end == std::string_view::npos || end + 1 < close.size() ||
      body.substr(end + 1 - close.size(), close.size()) != close)
    return "it does not end with " + close;
  return "";
}

}  // namespace xml
}  // namespace smd::s3
