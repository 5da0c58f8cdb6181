// Unit tests for impl/core/regex.{h,cc}: Python re.search semantics on UTF-8 names, compile errors
// that name the pattern and the place, and PCRE2's match limit reported as an error.
#include "impl/core/regex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "impl/core/text.h"

namespace smd {
namespace {

std::shared_ptr<const Regex> MustCompile(const std::string& pattern) {
  Result<std::shared_ptr<const Regex>> r = Regex::Compile(pattern);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : nullptr;
}

// re.search(pattern, subject) is not None; fails the test when the search reports an error.
bool Matches(const std::string& pattern, std::string_view subject) {
  std::shared_ptr<const Regex> re = MustCompile(pattern);
  if (re == nullptr) return false;
  Result<bool> m = re->Search(subject);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() && *m;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Regex, SearchMatchesAnywhere) {
  EXPECT_TRUE(Matches("b", "abc"));
  EXPECT_TRUE(Matches("gradients", "model/gradients/dense"));
  EXPECT_FALSE(Matches("^b", "abc"));
  EXPECT_FALSE(Matches("a$", "ab"));
  EXPECT_TRUE(Matches("^abc$", "abc"));
  EXPECT_FALSE(Matches("x", "abc"));
  EXPECT_TRUE(Matches("relu_output_\\d+", "layer1/relu_output_12"));
  EXPECT_TRUE(Matches(".*", "anything"));
}

TEST(Regex, EmptyPatternAndEmptySubject) {
  EXPECT_TRUE(Matches("", ""));
  EXPECT_TRUE(Matches("", "abc"));
  EXPECT_TRUE(Matches("^$", ""));
  EXPECT_FALSE(Matches("^$", "a"));
  EXPECT_FALSE(Matches("a", ""));
  EXPECT_TRUE(Matches("a*", ""));
}

TEST(Regex, DollarMatchesBeforeATrailingNewlineAsInPython) {
  EXPECT_TRUE(Matches("a$", "a\n"));  // re.search('a$', 'a\n') matches
  EXPECT_FALSE(Matches("a$", "a\n\n"));
  EXPECT_FALSE(Matches("^b", "a\nb"));  // no MULTILINE
  EXPECT_TRUE(Matches("(?m)^b", "a\nb"));
  EXPECT_FALSE(Matches("a.b", "a\nb"));  // '.' stops at a newline
  EXPECT_TRUE(Matches("(?s)a.b", "a\nb"));
}

// Where PCRE2 reads Python's syntax otherwise, the pattern means what it means to Python's re.
TEST(Regex, PythonsEndOfStringAndOmittedLowerBound) {
  EXPECT_FALSE(Matches("a\\Z", "a\n"));  // re.search('a\\Z', 'a\n') is None
  EXPECT_TRUE(Matches("a\\Z", "a"));
  EXPECT_TRUE(Matches("a\\\\Z", "a\\Z"));  // an escaped backslash, then a literal Z
  EXPECT_TRUE(Matches("^a{,2}b$", "aab"));
  EXPECT_TRUE(Matches("^a{,2}b$", "b"));
  EXPECT_FALSE(Matches("^a{,2}b$", "aaab"));
  EXPECT_TRUE(Matches("^a{,}b$", "aaaab"));
  EXPECT_TRUE(Matches("^x\\{,2}$", "x{,2}"));  // escaped: literal text
  EXPECT_TRUE(Matches("^[{,2}]+$", "{,2}"));   // inside a class: literal characters
  EXPECT_TRUE(Matches("^[]{,2}]+$", "]{,2}"));  // a ']' first in a class is literal
  EXPECT_TRUE(Matches("^a{ ,2}$", "a{ ,2}"));   // not a quantifier in Python either
  EXPECT_TRUE(Matches("^a{,2 }$", "a{,2 }"));
  // A compile error names the offset in the pattern as written, not in its translation (PCRE2
  // names the end of the second quantifier: 10 in "a{0,2}{0,3}(", 8 as written).
  Result<std::shared_ptr<const Regex>> r = Regex::Compile("a{,2}{,3}(");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "at offset 8:")) << r.status().message();
  r = Regex::Compile("a{,2}b(");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "at offset 7:")) << r.status().message();
}

TEST(Regex, LookAroundAndGroups) {
  EXPECT_TRUE(Matches("(?<=grad/)w", "grad/w"));
  EXPECT_FALSE(Matches("(?<=grad/)w", "loss/w"));
  EXPECT_TRUE(Matches("(?<!grad/)w", "loss/w"));
  EXPECT_TRUE(Matches("weight(?!s)", "weight_1"));
  EXPECT_FALSE(Matches("weight(?!s)", "weights"));
  EXPECT_TRUE(Matches("(?=.*bias)(?=.*dense)", "dense_1/bias"));
  EXPECT_TRUE(Matches("(?P<layer>conv)\\d_(?P=layer)", "conv1_conv"));  // Python's named groups
  EXPECT_TRUE(Matches("(a)\\1", "xaax"));
  EXPECT_FALSE(Matches("(a)\\1", "xabx"));
  EXPECT_TRUE(Matches("(?i)RELU", "relu"));
}

TEST(Regex, UnicodeCodePointsNotBytes) {
  EXPECT_TRUE(Matches("^.{4}$", "caf\xc3\xa9"));  // 4 characters, 5 bytes
  EXPECT_FALSE(Matches("^.{5}$", "caf\xc3\xa9"));
  EXPECT_TRUE(Matches("\xc3\xa9", "caf\xc3\xa9"));
  EXPECT_TRUE(Matches("^\\w+$", "caf\xc3\xa9"));  // \w is Unicode in Python 3
  EXPECT_TRUE(Matches("^\\d$", "\xd9\xa3"));     // ARABIC-INDIC DIGIT THREE is a \d
  EXPECT_TRUE(Matches("(?i)CAF\xc3\x89", "caf\xc3\xa9"));  // É folds to é
  EXPECT_TRUE(Matches("^[\xc3\xa0-\xc3\xbf]$", "\xc3\xa9"));  // a range of code points
  EXPECT_TRUE(Matches("^\xf0\x9f\x98\x80$", "\xf0\x9f\x98\x80"));  // outside the BMP
  EXPECT_TRUE(Matches("^.$", "\xf0\x9f\x98\x80"));
}

TEST(Regex, NulBytesAreOrdinaryCharacters) {
  const std::string pattern("a\0b", 3);
  EXPECT_TRUE(Matches(pattern, std::string_view("xa\0by", 5)));
  EXPECT_FALSE(Matches(pattern, "ab"));
  EXPECT_TRUE(Matches("b$", std::string_view("a\0b", 3)));  // the subject does not end at the NUL
  EXPECT_FALSE(Matches("^a$", std::string_view("a\0", 2)));
}

TEST(Regex, PatternIsKept) {
  std::shared_ptr<const Regex> re = MustCompile("^conv\\d+/(weights|bias)$");
  ASSERT_NE(re, nullptr);
  EXPECT_EQ(re->pattern(), "^conv\\d+/(weights|bias)$");
  EXPECT_EQ(MustCompile("")->pattern(), "");
}

TEST(Regex, CompileErrorsNameThePatternTheOffsetAndTheReason) {
  struct Case {
    std::string pattern;
    size_t offset;
    std::string reason;  // part of PCRE2's message
  };
  const Case cases[] = {
      {"(", 1, "missing closing parenthesis"},
      {"conv(\\d+", 8, "missing closing parenthesis"},
      {"*", 0, "quantifier does not follow a repeatable item"},
      {"[a", 2, "missing terminating ]"},
      {"a{2,1}", 5, "out of order"},
      {"ab\\", 3, "\\ at end of pattern"},
      {"(?P<x>a)(?P<x>b)", 14, "two named subpatterns have the same name"},
      {"(?<=a+)b", 0, "lookbehind"},  // Python: "look-behind requires fixed-width pattern"
  };
  for (const Case& c : cases) {
    Result<std::shared_ptr<const Regex>> r = Regex::Compile(c.pattern);
    ASSERT_FALSE(r.ok()) << c.pattern;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << c.pattern;
    const std::string& msg = r.status().message();
    EXPECT_TRUE(Contains(msg, "invalid regex '" + c.pattern + "'")) << msg;
    EXPECT_TRUE(Contains(msg, "at offset " + std::to_string(c.offset) + ":")) << msg;
    EXPECT_TRUE(Contains(msg, c.reason)) << msg;
  }
}

// The message must stay UTF-8 (smd_error_message promises it): the bad bytes are shown escaped.
TEST(Regex, InvalidUtf8PatternIsRefusedWithAUtf8Message) {
  struct Case {
    std::string pattern;
    std::string shown;
  };
  const Case cases[] = {
      {"\xff", "\\xff"},
      {"a\xc3", "a\\xc3"},
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},  // a surrogate
      {"\xc0\x80", "\\xc0\\x80"},             // overlong
      {"caf\xc3\xa9\x80", "caf\xc3\xa9\\x80"},   // the valid part is kept as it is
  };
  for (const Case& c : cases) {
    Result<std::shared_ptr<const Regex>> r = Regex::Compile(c.pattern);
    ASSERT_FALSE(r.ok()) << "compiled an invalid UTF-8 pattern: " << c.shown;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    const std::string& msg = r.status().message();
    EXPECT_TRUE(IsValidUtf8(msg)) << c.shown;
    EXPECT_TRUE(Contains(msg, "invalid regex '" + c.shown + "'")) << msg;
    EXPECT_TRUE(Contains(msg, "UTF-8 error")) << msg;
  }
}

// "(x+x+)+y|a$": alone, "(x+x+)+y" is answered at once by PCRE2's check for a required 'y'; the
// alternative turns that check off, and the x's then backtrack exponentially.
constexpr char kEvil[] = "(x+x+)+y|a$";

TEST(Regex, MatchLimitIsAnErrorNotANoMatch) {
  std::shared_ptr<const Regex> re = MustCompile(kEvil);
  ASSERT_NE(re, nullptr);
  const std::string subject(40, 'x');
  Result<bool> m = re->Search(subject);
  ASSERT_FALSE(m.ok()) << "catastrophic backtracking gave " << (*m ? "a match" : "no match");
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  const std::string& msg = m.status().message();
  EXPECT_TRUE(Contains(msg, "regex '(x+x+)+y|a$'")) << msg;
  EXPECT_TRUE(Contains(msg, "'" + subject + "'")) << msg;
  EXPECT_TRUE(Contains(msg, "limit")) << msg;  // PCRE2's reason: "match limit exceeded"
  EXPECT_TRUE(Contains(msg, "simplify the pattern")) << msg;
  // The same regex still answers where it can.
  for (const char* easy : {"xxy", "xa", "a"}) {
    Result<bool> quick = re->Search(easy);
    ASSERT_TRUE(quick.ok()) << quick.status().message();
    EXPECT_TRUE(*quick) << easy;
  }
}

TEST(Regex, MatchLimitMessageShortensAndEscapesTheSubject) {
  std::shared_ptr<const Regex> re = MustCompile(kEvil);
  ASSERT_NE(re, nullptr);
  const std::string subject = "\n" + std::string(299, 'x');
  Result<bool> m = re->Search(subject);
  ASSERT_FALSE(m.ok());
  const std::string& msg = m.status().message();
  EXPECT_TRUE(Contains(msg, "'\\x0a" + std::string(199, 'x') + "...'")) << msg;
  EXPECT_FALSE(Contains(msg, std::string(200, 'x'))) << "the whole subject is in the message";
  EXPECT_FALSE(Contains(msg, "\n")) << "a raw newline in the message";
}

TEST(Regex, SearchIsThreadSafe) {
  std::shared_ptr<const Regex> re = MustCompile("^layer(\\d+)/(weights|bias)$");
  ASSERT_NE(re, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool want = (i + t) % 3 != 0;
        const std::string name = "layer" + std::to_string(i) + (want ? "/bias" : "/biases");
        Result<bool> m = re->Search(name);
        if (!m.ok() || *m != want) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Whether pattern matches prefix + some index among 0..1099 and a few long ones (brute force).
bool SomeIndexMatches(const std::shared_ptr<const Regex>& re, const std::string& prefix) {
  std::vector<std::string> indices;
  for (int i = 0; i < 1100; ++i) indices.push_back(std::to_string(i));
  for (int i = 0; i < 100; ++i) indices.push_back("0" + std::to_string(i));  // 00, 01, ...
  indices.insert(indices.end(), {"12345", "999999", "1234567890123"});
  for (const std::string& index : indices) {
    Result<bool> m = re->Search(prefix + index);
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (m.ok() && *m) return true;
  }
  return false;
}

bool MayMatchNumbered(const std::string& pattern, const std::string& prefix) {
  std::shared_ptr<const Regex> re = MustCompile(pattern);
  if (re == nullptr) return true;
  Result<bool> m = re->MayMatchNumbered(prefix);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return !m.ok() || *m;
}

TEST(Regex, MayMatchNumberedNeverMissesAMatch) {
  const std::vector<std::string> patterns = {
      "^gradient", "[Ll]oss", "^(?!gradient).*weight", "^(?!gradient).*bias", "_output_1\\d",
      "\\d{3}$", "(?<=_)7", "(?<=t_)\\d", "(?m)^7", "^\\d", "^a", "weight|\\d", "outputs?_\\D",
      "_output_$", "_output_\\d+$", "(?i)LOSS", "ü_out", "^fc_output_", "^fc_output_\\d\\Z",
      "put_4{,2}2", "1|2", "\\b\\d", "\\B0", "(?=\\d)", "x*", "[^a-z]", "\\w\\w\\w\\w\\w\\w\\w\\w\\w",
      "^.{12}\\d", "^.{8}\\d", "(_output_|_input_)0$", "output_(1|22)$", "\\d\\d\\d\\d\\d",
      "conv1_output_0", "relu"};
  const std::vector<std::string> prefixes = {"conv1_output_", "layer1.0.conv1_input_", "",
                                             "CrossEntropyLoss_output_", "fc_output_",
                                             "fc2_output_", "a\n", "schicht_ü_output_", "x"};
  for (const std::string& p : patterns) {
    std::shared_ptr<const Regex> re = MustCompile(p);
    ASSERT_NE(re, nullptr) << p;
    for (const std::string& prefix : prefixes) {
      if (SomeIndexMatches(re, prefix)) {
        EXPECT_TRUE(MayMatchNumbered(p, prefix)) << "pattern " << p << ", prefix " << prefix;
      }
    }
  }
}

TEST(Regex, MayMatchNumberedRulesOutWhatCannotMatch) {
  // The collections a PyTorch hook saves by default (losses) and for gradient monitoring: no
  // module's numbered inputs or outputs can belong to them, except the loss module's.
  EXPECT_FALSE(MayMatchNumbered("^gradient", "conv1_output_"));
  EXPECT_FALSE(MayMatchNumbered("[Ll]oss", "layer1.0.conv1_output_"));
  EXPECT_FALSE(MayMatchNumbered("[Ll]oss", "layer1.0.conv1_input_"));
  EXPECT_TRUE(MayMatchNumbered("[Ll]oss", "CrossEntropyLoss_output_"));
  EXPECT_TRUE(MayMatchNumbered("[Ll]oss", "model_l"));  // likewise "model_l" + "oss"
  // add_module_tensors' pattern names one module.
  EXPECT_TRUE(MayMatchNumbered("^fc_output_", "fc_output_"));
  EXPECT_FALSE(MayMatchNumbered("^fc_output_", "fc2_output_"));
  EXPECT_FALSE(MayMatchNumbered("^fc_output_", "g"));
  // Partial matching does not know that only digits follow: "f" + "c_output_" counts.
  EXPECT_TRUE(MayMatchNumbered("^fc_output_", "f"));
  // A match inside the index needs a digit first.
  EXPECT_TRUE(MayMatchNumbered("_output_1\\d", "conv1_output_"));
  EXPECT_TRUE(MayMatchNumbered("(?<=_)7", "conv1_output_"));
  EXPECT_TRUE(MayMatchNumbered("^\\d", ""));
  EXPECT_FALSE(MayMatchNumbered("^a", ""));
  EXPECT_FALSE(MayMatchNumbered("(?m)^7", "a"));
  EXPECT_TRUE(MayMatchNumbered("(?m)^7", "a\n"));
  EXPECT_FALSE(MayMatchNumbered("weight", "conv1_output_"));
  EXPECT_TRUE(MayMatchNumbered("weight|\\d", "conv1_output_"));
  // Patterns that match the empty string match every name.
  EXPECT_TRUE(MayMatchNumbered("x*", "conv1_output_"));
  EXPECT_TRUE(MayMatchNumbered("(?=\\d)", "conv1_output_"));
}

TEST(Regex, MayMatchNumberedReportsTheMatchLimit) {
  std::shared_ptr<const Regex> re = MustCompile("^(x+x+)+y");
  ASSERT_NE(re, nullptr);
  Result<bool> m = re->MayMatchNumbered(std::string(40, 'x') + "z");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "backtracks too much")) << m.status().message();
}

TEST(Regex, OutlivesItsCompileResult) {
  std::shared_ptr<const Regex> keep;
  {
    Result<std::shared_ptr<const Regex>> r = Regex::Compile("ke+p");
    ASSERT_TRUE(r.ok());
    keep = *r;
  }
  Result<bool> m = keep->Search("keeeep");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(*m);
}

}  // namespace
}  // namespace smd
