// impl/storage/s3/xml.h: the elements, text and entities of S3's answers.
#include "impl/storage/s3/xml.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace smd::s3 {
namespace {

TEST(S3Xml, ParsesListObjectsV2) {
  const std::string doc =
      "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a &amp; b&lt;c&gt;&#x1234;&#252;</Key><Size>12</Size><ETag>&quot;e1&quot;"
      "</ETag></Contents><Contents><Key>k2</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes>"
      "<NextContinuationToken>tok+/=</NextContinuationToken><KeyCount>2</KeyCount>"
      "</ListBucketResult>";
  auto contents = xml::Elements(doc, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(xml::FirstText(contents[0], "Key"), "a & b<c>\xe1\x88\xb4\xc3\xbc");
  EXPECT_EQ(xml::FirstText(contents[0], "ETag"), "\"e1\"");
  EXPECT_EQ(xml::FirstText(contents[1], "Size"), "0");
  EXPECT_EQ(xml::AllText(doc, "Prefix"), std::vector<std::string>{"dir/"});
  EXPECT_EQ(xml::FirstText(doc, "NextContinuationToken"), "tok+/=");
  // <Key> must not match <KeyCount>.
  EXPECT_EQ(xml::AllText(doc, "Key").size(), 2u);
  EXPECT_EQ(xml::FirstText(doc, "Missing"), "");
}

TEST(S3Xml, MalformedInputIsHandled) {
  EXPECT_TRUE(xml::Elements("<Key>unterminated", "Key").empty());
  EXPECT_TRUE(xml::Elements("<Key", "Key").empty());
  EXPECT_EQ(xml::Elements("<Key/><Key>x</Key>", "Key").size(), 2u);
  EXPECT_EQ(xml::Unescape("&bogus; & &#;"), "&bogus; & &#;");
  EXPECT_EQ(xml::Unescape(xml::Escape("<a&'\">")), "<a&'\">");
}

}  // namespace
}  // namespace smd::s3
