// Unit tests for impl/core/mode.{h,cc}.
#include "impl/core/mode.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>

namespace smd {
namespace {

TEST(Mode, ValuesAreSmdebugsModeKeys) {
  EXPECT_EQ(static_cast<int>(Mode::kTrain), 1);
  EXPECT_EQ(static_cast<int>(Mode::kEval), 2);
  EXPECT_EQ(static_cast<int>(Mode::kPredict), 3);
  EXPECT_EQ(static_cast<int>(Mode::kGlobal), 4);
  ASSERT_EQ(kNumModes, 4);
  for (int i = 0; i < kNumModes; ++i) {
    EXPECT_EQ(static_cast<int>(kAllModesInOrder[i]), i + 1);
    EXPECT_EQ(ModeIndex(kAllModesInOrder[i]), i);
  }
}

TEST(Mode, IsValidModeBoundaries) {
  for (int m = 1; m <= 4; ++m) EXPECT_TRUE(IsValidMode(m)) << m;
  for (int m : {0, 5, -1, -4, 100, INT_MIN, INT_MAX}) EXPECT_FALSE(IsValidMode(m)) << m;
}

TEST(Mode, Names) {
  EXPECT_STREQ(ModeName(Mode::kTrain), "TRAIN");
  EXPECT_STREQ(ModeName(Mode::kEval), "EVAL");
  EXPECT_STREQ(ModeName(Mode::kPredict), "PREDICT");
  EXPECT_STREQ(ModeName(Mode::kGlobal), "GLOBAL");
  EXPECT_EQ(ModeName(static_cast<Mode>(0)), nullptr);
  EXPECT_EQ(ModeName(static_cast<Mode>(5)), nullptr);
  EXPECT_EQ(ModeName(static_cast<Mode>(-1)), nullptr);
}

TEST(Mode, ParseIsCaseInsensitive) {
  for (Mode m : kAllModesInOrder) {
    const std::string upper = ModeName(m);
    std::string lower, mixed;
    for (size_t i = 0; i < upper.size(); ++i) {
      char l = static_cast<char>(upper[i] - 'A' + 'a');
      lower.push_back(l);
      mixed.push_back(i % 2 ? l : upper[i]);
    }
    EXPECT_EQ(ParseMode(upper), m) << upper;
    EXPECT_EQ(ParseMode(lower), m) << lower;
    EXPECT_EQ(ParseMode(mixed), m) << mixed;
  }
}

TEST(Mode, ParseRefusesEverythingElse) {
  for (const char* bad : {"", " ", "TRAIN ", " train", "TRAI", "TRAINING", "TRAIN\n", "EVALUATE",
                          "eval.", "mode.train", "ModeKeys.TRAIN", "1", "0", "PREDICTION", "ALL",
                          "GLOBALS", "trainEVAL", "TR AIN"}) {
    EXPECT_FALSE(ParseMode(bad).has_value()) << "'" << bad << "'";
  }
  // A NUL inside the name: not "TRAIN" (C strings would stop there, a string_view does not).
  EXPECT_FALSE(ParseMode(std::string_view("TRAIN\0", 6)).has_value());
  EXPECT_FALSE(ParseMode(std::string_view("TR\0AIN", 6)).has_value());
  // Only ASCII letters fold: U+0130 (capital I with dot) and U+0131 (dotless i) are not 'I'/'i'.
  EXPECT_FALSE(ParseMode("TRA\xc4\xb0N").has_value());
  EXPECT_FALSE(ParseMode("tra\xc4\xb1n").has_value());
  EXPECT_FALSE(ParseMode("\xff\xfe").has_value());
}

}  // namespace
}  // namespace smd
