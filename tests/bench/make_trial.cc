// Writes a synthetic trial in smdebug's layout with smd's encoders (fast, for benchmarks):
//   make_trial OUT_DIR STEPS TENSORS [--elements N] [--workers N] [--first-step N] [--running]
// Tensors "layer<i>/weight", float32 [ELEMENTS] (default 4), TRAIN mode, steps FIRST_STEP ..
// FIRST_STEP + STEPS - 1, one event file and one index file per (step, worker), a collections
// file per worker (unless it exists), and training_job_end.ts unless --running. Running it again
// with --first-step appends steps to a live trial.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "impl/format/event.h"
#include "impl/format/index_file.h"
#include "impl/format/layout.h"

namespace {

void MakeDirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
  }
}

void Write(const std::string& path, const std::string& data) {
  MakeDirs(path.substr(0, path.rfind('/')));
  // Written under a temporary name and renamed, as the hooks do: a reader never sees half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: make_trial OUT_DIR STEPS TENSORS [--elements N] [--workers N] "
               "[--first-step N] [--running]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  const std::string out = argv[1];
  const int steps = std::atoi(argv[2]), tensors = std::atoi(argv[3]);
  int elements = 4, workers = 1, first = 0;
  bool running = false;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--running") {
      running = true;
    } else if (i + 1 < argc && (a == "--elements" || a == "--workers" || a == "--first-step")) {
      const int v = std::atoi(argv[++i]);
      (a == "--elements" ? elements : a == "--workers" ? workers : first) = v;
    } else {
      return Usage();
    }
  }
  if (steps < 0 || tensors < 1 || elements < 0 || workers < 1 || first < 0) return Usage();
  std::vector<std::string> names;
  for (int i = 0; i < tensors; ++i) names.push_back("layer" + std::to_string(i) + "/weight");
  std::vector<float> v(static_cast<size_t>(elements));
  const int64_t shape[1] = {elements};
  for (int w = 0; w < workers; ++w) {
    const std::string worker = "worker_" + std::to_string(w);
    const std::string colls_path = out + "/" + smd::io::CollectionsFileRelPath(worker);
    if (!Exists(colls_path)) {
      Write(colls_path,
            "{\"collections\": {\"weights\": {\"name\": \"weights\", \"include_regex\": "
            "[\"weight\"], \"tensor_names\": [], \"reduction_config\": null, "
            "\"save_config\": null, \"save_histogram\": true}}, \"_meta\": "
            "{\"num_workers\": " + std::to_string(workers) + "}}");
    }
    for (int s = first; s < first + steps; ++s) {
      std::string event;
      std::vector<smd::io::IndexTensorEntry> entries;
      for (int i = 0; i < tensors; ++i) {
        for (int k = 0; k < elements; ++k) v[static_cast<size_t>(k)] = float(s + i + k);
        smd::io::TensorEventFields f;
        f.wall_time = 1.7e9 + s;
        f.step = s;
        f.tag = names[static_cast<size_t>(i)];
        f.dtype = smd::DType::kFloat32;
        f.shape = shape;
        f.ndim = 1;
        f.mode = smd::Mode::kTrain;
        f.mode_step = s;
        std::string prefix, suffix;
        std::string_view content(reinterpret_cast<const char*>(v.data()), v.size() * 4);
        smd::io::EncodeTensorRecord(f, content, smd::io::PayloadCrcKind::kSmdebugConstant, &prefix,
                                    &suffix);
        entries.push_back({names[static_cast<size_t>(i)], event.size(),
                           prefix.size() + content.size() + suffix.size()});
        event += prefix;
        event.append(content.data(), content.size());
        event += suffix;
      }
      smd::io::IndexMeta meta;
      meta.mode = smd::Mode::kTrain;
      meta.mode_step = s;
      meta.event_file_name = smd::io::EventFileRelPath(s, worker);
      Write(out + "/" + *meta.event_file_name, event);
      Write(out + "/" + smd::io::IndexFileRelPath(s, worker), smd::io::BuildIndexJson(meta, entries, {}));
    }
  }
  if (!running) Write(out + "/training_job_end.ts", "");
  return 0;
}
