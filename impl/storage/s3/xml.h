// The small part of XML that S3's answers need: the text of elements by tag name, entity
// decoding and escaping, and whether a body is one whole document. No DTDs, namespaces or
// attributes: S3's documents have none that smd reads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace smd::s3 {

namespace xml {
// The decoded text of each <tag>...</tag> directly or indirectly inside `doc`, in order.
std::vector<std::string> AllText(std::string_view doc, std::string_view tag);
// The inner XML of each <tag>...</tag> element, in order (not decoded).
std::vector<std::string_view> Elements(std::string_view doc, std::string_view tag);
// The first decoded text of <tag>, or "".
std::string FirstText(std::string_view doc, std::string_view tag);
// Decodes &amp; &lt; &gt; &quot; &apos; &#N; &#xH;.
std::string Unescape(std::string_view s);
std::string Escape(std::string_view s);
// "" when `body` is one whole <root>...</root> document (a listing not cut short), else what is
// wrong with it.
std::string WholeDocument(std::string_view body, std::string_view root);
}  // namespace xml

}  // namespace smd::s3
