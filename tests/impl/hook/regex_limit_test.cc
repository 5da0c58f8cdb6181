// The hook's include_regex when PCRE2 gives up on a name (its match limit): the save fails with
// an error naming the regex and the tensor, instead of the tensor silently not being saved.
#include <string>

#include "gtest/gtest.h"
#include "impl/hook/hook.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::hook {
namespace {

TEST(HookRegex, MatchLimitIsReportedBySave) {
  const std::string dir = trial::testing::TempDir("hook");
  HookOptions o;
  SaveConfigMode every;
  every.save_interval = 1;
  o.save_config.SetAll(every);
  o.include_regex = {"(x+x+)+y|a$"};
  auto hook = Hook::Create(dir, o);
  ASSERT_TRUE(hook.ok()) << hook.status().message();
  auto save = [&](const std::string& name) {
    int64_t shape[1] = {1};
    float v = 1.0f;
    Hook::SaveRequest r;
    r.name = name.c_str();
    r.dtype = DType::kFloat32;
    r.shape = shape;
    r.ndim = 1;
    r.data = &v;
    r.nbytes = sizeof v;
    return (*hook)->Save(r);
  };
  ASSERT_TRUE((*hook)->BeginStep().ok());
  EXPECT_TRUE(save("xa").ok());  // matches a$ at once
  const std::string evil = std::string(40, 'x') + "a";  // Python's re: a match (a$)
  Status st = save(evil);
  ASSERT_FALSE(st.ok()) << "the tensor was silently not saved";
  EXPECT_NE(st.message().find("(x+x+)+y|a$"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("was not saved"), std::string::npos) << st.message();
  EXPECT_TRUE(save("plain").ok());  // other names are unaffected
  EXPECT_TRUE((*hook)->Close().ok());
}

}  // namespace
}  // namespace smd::hook
