// Test helper: writes trials in smdebug's format with smd's own encoders (impl/format), so the
// reader tests can build any layout, including broken ones, without the hook.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/format/event.h"
#include "impl/format/index_file.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"

namespace smd::trial::testing {

inline void MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty()) ::mkdir(cur.c_str(), 0755);
    }
    if (i < path.size()) cur.push_back(path[i]);
  }
}

inline void WriteFile(const std::string& path, const std::string& content) {
  MakeDirs(path.substr(0, path.rfind('/')));
  // .tmp + rename, as writers do: a reader never sees half a file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  ASSERT_EQ(0, std::rename(tmp.c_str(), path.c_str())) << path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// This test process's folder under $TEST_TMPDIR (or /tmp). It is removed when the process exits
// with every test passed, and kept, with a line on stderr saying where, when one failed.
inline const std::string& ProcessTempRoot() {
  // Never destroyed: the exit handler below runs after static destructors registered later.
  static const std::string* root = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    auto* r = new std::string(std::string(base ? base : "/tmp") + "/smd_trial_test_" +
                              std::to_string(::getpid()));
    MakeDirs(*r);
    static const pid_t owner = ::getpid();
    std::atexit([] {
      if (::getpid() != owner) return;  // a forked child exiting: the folder is its parent's
      const std::string& dir = ProcessTempRoot();
      if (::testing::UnitTest::GetInstance()->failed_test_count() > 0) {
        std::fprintf(stderr, "the failed tests' folders are kept in %s\n", dir.c_str());
        return;
      }
      std::string cmd = "rm -rf '" + dir + "'";
      if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
    });
    return r;
  }();
  return *root;
}

// A fresh folder under the test's temporary directory.
inline std::string TempDir(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ProcessTempRoot() + "/" +
                    (info ? std::string(info->test_suite_name()) + "." + info->name() : "x") +
                    "_" + name;
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  MakeDirs(dir);
  return dir;
}

inline std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

template <typename T>
std::string BytesOf(const std::vector<T>& v) {
  return Bytes(v.data(), v.size() * sizeof(T));
}

// Writes one trial. Records of a (step, worker) accumulate until FinishStep writes the event file
// and then its index file.
class TrialBuilder {
 public:
  explicit TrialBuilder(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  void WriteCollections(const std::vector<std::string>& workers, int num_workers,
                        const std::string& collections_json = DefaultCollections()) {
    for (const std::string& w : workers) {
      WriteFile(dir_ + "/" + io::CollectionsFileRelPath(w),
                "{\"collections\": " + collections_json + ", \"_meta\": {\"num_workers\": " +
                    std::to_string(num_workers) + "}}");
    }
  }
  static std::string DefaultCollections() {
    return "{\"weights\": {\"name\": \"weights\", \"include_regex\": [\"^(?!gradient).*weight\"], "
           "\"tensor_names\": [\"fc.weight\"], \"reduction_config\": {\"save_raw_tensor\": true, "
           "\"reductions\": \"min,l2_norm\", \"save_shape\": false}, \"save_config\": null, "
           "\"save_histogram\": false}, \"losses\": {\"name\": \"losses\", \"include_regex\": "
           "[\"[Ll]oss\"], \"tensor_names\": [], \"reduction_config\": null, \"save_config\": null, "
           "\"save_histogram\": true}}";
  }

  // Adds a record. content: C-order element bytes.
  void Add(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
           const std::string& name, DType dtype, std::vector<int64_t> shape,
           const std::string& content) {
    Pending& p = pending_[{step, worker}];
    p.mode = mode;
    p.mode_step = mode_step;
    io::TensorEventFields f;
    f.wall_time = 1.7e9 + static_cast<double>(step);
    f.step = step;
    f.tag = name;
    f.dtype = dtype;
    f.shape = shape.data();
    f.ndim = shape.size();
    f.mode = mode;
    f.mode_step = mode_step;
    std::string prefix, suffix;
    io::EncodeTensorRecord(f, content, crc_kind_, &prefix, &suffix);
    std::string record = prefix + content + suffix;
    p.tensors.push_back({name, p.event.size(), record.size()});
    p.event += record;
  }
  void AddFloats(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
                 const std::string& name, const std::vector<float>& v,
                 std::vector<int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
    Add(step, worker, mode, mode_step, name, DType::kFloat32, shape, BytesOf(v));
  }
  void AddStrings(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
                  const std::string& name, const std::vector<std::string>& v) {
    Pending& p = pending_[{step, worker}];
    p.mode = mode;
    p.mode_step = mode_step;
    io::TensorEventFields f;
    f.wall_time = 1.7e9;
    f.step = step;
    f.tag = name;
    f.mode = mode;
    f.mode_step = mode_step;
    std::string record;
    io::EncodeStringTensorRecord(f, v, crc_kind_, &record);
    p.tensors.push_back({name, p.event.size(), record.size()});
    p.event += record;
  }
  void AddShape(int64_t step, const std::string& worker, Mode mode, int64_t mode_step,
                const std::string& name, std::vector<int64_t> shape) {
    Pending& p = pending_[{step, worker}];
    p.mode = mode;
    p.mode_step = mode_step;
    p.shapes.push_back({name, name, std::move(shape)});
  }
  // Writes the event file (if any record) and then the index file of (step, worker).
  void FinishStep(int64_t step, const std::string& worker = "worker_0") {
    auto it = pending_.find({step, worker});
    ASSERT_NE(it, pending_.end());
    Pending& p = it->second;
    io::IndexMeta meta;
    meta.mode = p.mode;
    meta.mode_step = p.mode_step;
    if (!p.tensors.empty()) {
      meta.event_file_name = io::EventFileRelPath(step, worker);
      WriteFile(dir_ + "/" + *meta.event_file_name, p.event);
    }
    WriteFile(dir_ + "/" + io::IndexFileRelPath(step, worker),
              io::BuildIndexJson(meta, p.tensors, p.shapes));
    pending_.erase(it);
  }
  // A GLOBAL... convenience: one float32 [1] scalar per step in TRAIN with mode step == step.
  void SimpleStep(int64_t step, const std::vector<std::string>& tensors,
                  const std::string& worker = "worker_0", Mode mode = Mode::kTrain,
                  int64_t mode_step = -1) {
    for (const std::string& t : tensors) {
      AddFloats(step, worker, mode, mode_step < 0 ? step : mode_step, t,
                {static_cast<float>(step)});
    }
    FinishStep(step, worker);
  }
  void End() { WriteFile(dir_ + "/" + io::kEndOfJobFile, ""); }
  void UseRealCrc(bool real) { crc_kind_ = real ? io::PayloadCrcKind::kReal : io::PayloadCrcKind::kSmdebugConstant; }

 private:
  struct Pending {
    Mode mode = Mode::kGlobal;
    int64_t mode_step = 0;
    std::string event;
    std::vector<io::IndexTensorEntry> tensors;
    std::vector<io::IndexShapeEntry> shapes;
  };
  std::string dir_;
  std::map<std::pair<int64_t, std::string>, Pending> pending_;
  io::PayloadCrcKind crc_kind_ = io::PayloadCrcKind::kSmdebugConstant;
};

}  // namespace smd::trial::testing
