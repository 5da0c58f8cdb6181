// The library reads and compares text the same whatever locale the host program has set: a Python
// process takes LC_CTYPE from the environment, and a C program may call setlocale(LC_ALL, ""). The
// locales are built here with localedef (Debian's `locales` package, which scripts/setup.sh
// installs) into a folder of the test's own, named by LOCPATH.
#include <locale.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "impl/core/mode.h"
#include "impl/core/text.h"
#include "impl/storage/s3/sigv4.h"

namespace smd {
namespace {

class HostLocale : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* base = std::getenv("TEST_TMPDIR");
    dir_ = new std::string(std::string(base ? base : "/tmp") + "/smd_locales_" + std::to_string(::getpid()));
    for (const char* spec : {"tr_TR UTF-8 tr_TR.UTF-8", "de_DE UTF-8 de_DE.UTF-8"}) {
      std::string s(spec);
      const size_t a = s.find(' '), b = s.rfind(' ');
      const std::string cmd = "mkdir -p '" + *dir_ + "' && localedef -i " + s.substr(0, a) + " -f " +
                              s.substr(a + 1, b - a - 1) + " '" + *dir_ + "/" + s.substr(b + 1) +
                              "' >/dev/null 2>&1";
      built_ = built_ && std::system(cmd.c_str()) == 0;
    }
    setenv("LOCPATH", dir_->c_str(), 1);
  }
  static void TearDownTestSuite() {
    unsetenv("LOCPATH");
    std::string cmd = "rm -rf '" + *dir_ + "'";
    (void)!std::system(cmd.c_str());
  }
  void TearDown() override { setlocale(LC_ALL, "C"); }

  // Sets the locale; fails the test (with what is missing) when it cannot.
  static bool Use(const char* name) {
    EXPECT_TRUE(built_) << "localedef could not build the test's locales (Debian package: locales)";
    const char* got = setlocale(LC_ALL, name);
    EXPECT_NE(got, nullptr) << "setlocale(LC_ALL, \"" << name << "\") failed";
    return built_ && got != nullptr;
  }

  static std::string* dir_;
  static bool built_;
};
std::string* HostLocale::dir_ = nullptr;
bool HostLocale::built_ = true;

TEST_F(HostLocale, TurkishCaseRulesChangeNothing) {
  if (!Use("tr_TR.UTF-8")) return;
  ASSERT_EQ(std::toupper('i'), 'i');  // the C library's case mapping is what this locale breaks
  ASSERT_EQ(std::tolower('I'), 'I');
  EXPECT_EQ(ParseMode("train"), Mode::kTrain);
  EXPECT_EQ(ParseMode("Predict"), Mode::kPredict);
  EXPECT_EQ(AsciiLower("If-None-Match"), "if-none-match");

  // An S3 request signs the same header names as in the "C" locale.
  s3::SignRequest req;
  req.method = "PUT";
  req.path = "/bucket/claim";
  req.headers = {{"Host", "localhost"}, {"If-None-Match", "*"}};
  req.payload_hash = s3::Sha256Hex("");
  s3::Credentials creds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
  s3::SignOptions opts;
  opts.region = "us-east-1";
  opts.amz_date = "20150830T123600Z";
  const s3::Signature turkish = s3::Sign(req, creds, opts);
  setlocale(LC_ALL, "C");
  const s3::Signature c = s3::Sign(req, creds, opts);
  EXPECT_EQ(turkish.canonical_request, c.canonical_request);
  EXPECT_EQ(turkish.signature, c.signature);
  EXPECT_NE(c.canonical_request.find("if-none-match:*"), std::string::npos) << c.canonical_request;
}

TEST_F(HostLocale, DecimalCommaLocaleReadsNumbersWithAPoint) {
  if (!Use("de_DE.UTF-8")) return;
  ASSERT_EQ(std::strtod("0.5", nullptr), 0.0);  // the C library's strtod stops at the '.' here
  EXPECT_EQ(ParseDouble("0.5"), 0.5);
  EXPECT_EQ(ParseDouble(" -2.5e-3 "), -2.5e-3);
  EXPECT_FALSE(ParseDouble("0,5").has_value());
}

TEST(AsciiText, OnlyAsciiLettersChangeCaseAndOnlyAsciiIsClassified) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool upper = b >= 'A' && b <= 'Z', lower = b >= 'a' && b <= 'z';
    EXPECT_EQ(AsciiLower(c), upper ? static_cast<char>(b + 32) : c) << b;
    EXPECT_EQ(AsciiUpper(c), lower ? static_cast<char>(b - 32) : c) << b;
    EXPECT_EQ(IsAsciiAlpha(c), upper || lower) << b;
    EXPECT_EQ(IsAsciiDigit(c), b >= '0' && b <= '9') << b;
    EXPECT_EQ(IsAsciiAlnum(c), upper || lower || (b >= '0' && b <= '9')) << b;
    EXPECT_EQ(IsAsciiSpace(c), b == ' ' || (b >= '\t' && b <= '\r')) << b;
  }
  EXPECT_EQ(AsciiLower("ÇAĞRI Train"), "ÇaĞri train");  // UTF-8 bytes are left as they are
}

}  // namespace
}  // namespace smd
