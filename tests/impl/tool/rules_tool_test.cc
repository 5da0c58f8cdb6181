// smd rules and the other trials a rule compares with: under --follow they are opened the way
// the base trial is (waiting for the folder and its collections file), whether they come from
// --other or from a rule parameter (other_trial_N, other_trials).
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/impl/tool/tool_run.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial::testing {
namespace {

#ifdef SMD_TOOL_PATH

// Steps 0-3 of "loss" (value = step), ended.
void WriteEnded(const std::string& dir) {
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 4; ++s) b.SimpleStep(s, {"loss"});
  b.End();
}

// Runs smd rules while another thread writes `late` (the same trial as the base) after a pause,
// as a job that starts after its watcher.
ToolRun RunWhileWriting(const std::string& dir, const std::string& late,
                        const std::vector<std::string>& args) {
  std::thread writer([late] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    WriteEnded(late);
  });
  ToolRun r = RunTool(dir, args, 60);
  writer.join();
  return r;
}

// The other trial of SimilarAcrossRuns named by its parameter other_trial_0 was opened without
// the collections wait that --follow gives the base trial: a job whose collections file was not
// there yet failed at once (exit 3, "opening the other trial ... No collections file").
TEST(RulesTool, FollowWaitsForAnOtherTrialNamedByAParameter) {
  std::string dir = TempDir("other-param");
  WriteEnded(dir + "/base");
  MakeDirs(dir + "/other");  // the folder exists, nothing in it yet
  ToolRun r = RunWhileWriting(dir, dir + "/other",
                              {"rules", dir + "/base", "--follow", "--timeout", "30000",
                               "--no-progress", "--rule",
                               "SimilarAcrossRuns:other_trial_0=" + dir + "/other"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SimilarAcrossRuns: NoIssuesFound"), std::string::npos) << r.out;
  // The 2019 parameter other_trials (comma-separated) likewise, here a folder not there yet.
  r = RunWhileWriting(dir, dir + "/other2",
                      {"rules", dir + "/base", "--follow", "--timeout", "30000", "--no-progress",
                       "--rule", "SimilarAcrossRuns:other_trials=" + dir + "/other2"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
}

// --other under --follow: a folder that is not there yet is waited for, as the base trial's is
// (it failed at once: 'trial folder ... does not exist').
TEST(RulesTool, FollowWaitsForTheFolderOfAnOtherTrial) {
  std::string dir = TempDir("other-folder");
  WriteEnded(dir + "/base");
  ToolRun r = RunWhileWriting(dir, dir + "/other",
                              {"rules", dir + "/base", "--follow", "--timeout", "30000",
                               "--no-progress", "--rule", "SimilarAcrossRuns", "--other",
                               dir + "/other"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SimilarAcrossRuns: NoIssuesFound"), std::string::npos) << r.out;
}

// A rule parameter's "~/..." (the shell does not expand it inside --rule) names a folder under
// $HOME, as smd_trial_open reads it: the folder wait looked for a folder literally named "~" and
// waited out the whole limit (here 10 minutes: the run would time out) before opening it.
TEST(RulesTool, FollowFindsAnOtherTrialUnderHome) {
  std::string dir = TempDir("other-home");
  WriteEnded(dir + "/base");
  WriteEnded(dir + "/home/other");
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  ::setenv("HOME", (dir + "/home").c_str(), 1);
  ToolRun r = RunTool(dir, {"rules", dir + "/base", "--follow", "--timeout", "600000",
                            "--no-progress", "--rule", "SimilarAcrossRuns:other_trial_0= ~/other"},
                      60);
  if (old_home) ::setenv("HOME", saved.c_str(), 1); else ::unsetenv("HOME");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SimilarAcrossRuns: NoIssuesFound"), std::string::npos) << r.out;
}

// Without --follow nothing is waited for: an other trial without a collections file is an error
// naming the rule, the parameter and the trial (exit 3); one that does not exist, exit 1.
TEST(RulesTool, WithoutFollowAnOtherTrialWithoutCollectionsIsAnError) {
  std::string dir = TempDir("other-early");
  WriteEnded(dir + "/base");
  MakeDirs(dir + "/other");
  ToolRun r = RunTool(dir, {"rules", dir + "/base", "--rule",
                            "SimilarAcrossRuns:other_trial_0=" + dir + "/other"});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("SimilarAcrossRuns"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/other"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No collections file"), std::string::npos) << r.err;
  r = RunTool(dir, {"rules", dir + "/base", "--rule",
                    "SimilarAcrossRuns:other_trial_0=" + dir + "/missing"});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  // Both --other and the parameter: still the library's error (bad usage).
  WriteEnded(dir + "/other3");
  r = RunTool(dir, {"rules", dir + "/base", "--other", dir + "/other3", "--rule",
                    "SimilarAcrossRuns:other_trial_0=" + dir + "/other3"});
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("both as trials and as parameters"), std::string::npos) << r.err;
}

#else
TEST(RulesTool, NeedsTheTool) { GTEST_SKIP() << "the smd tool is not built (SMD_BUILD_TOOLS=OFF)"; }
#endif

}  // namespace
}  // namespace smd::trial::testing
