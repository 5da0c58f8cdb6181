#include "impl/core/mode.h"

#include <string>

#include "impl/core/text.h"

namespace smd {

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kTrain: return "TRAIN";
    case Mode::kEval: return "EVAL";
    case Mode::kPredict: return "PREDICT";
    case Mode::kGlobal: return "GLOBAL";
  }
  return nullptr;
}

std::optional<Mode> ParseMode(std::string_view name) {
  std::string up;
  for (char c : name) up.push_back(AsciiUpper(c));
  for (Mode m : kAllModesInOrder) {
    if (up == ModeName(m)) return m;
  }
  return std::nullopt;
}

}  // namespace smd
