// Modes (TRAIN, EVAL, PREDICT, GLOBAL) with smdebug's enum values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace smd {

enum class Mode : int { kTrain = 1, kEval = 2, kPredict = 3, kGlobal = 4 };

constexpr int kNumModes = 4;
inline constexpr Mode kAllModesInOrder[kNumModes] = {Mode::kTrain, Mode::kEval, Mode::kPredict,
                                                    Mode::kGlobal};

inline bool IsValidMode(int m) { return m >= 1 && m <= 4; }
inline int ModeIndex(Mode m) { return static_cast<int>(m) - 1; }

// "TRAIN", "EVAL", "PREDICT", "GLOBAL".
const char* ModeName(Mode m);
// Case-insensitive; also accepts the lower-case JSON prefixes.
std::optional<Mode> ParseMode(std::string_view name);

}  // namespace smd
