// Event codec micro-benchmark: smd's hand-written decoder and encoder (impl/format/event.cc)
// against the protoc-c code generated from impl/format/proto/smd_event.proto, on the tensor
// events smd writes and reads. Prints one table (ns per event, median of the runs); the figures
// and what follows from them are in docs/format-codec.md. Then CRC-32C throughput (GB/s).
//   bench_codec [RUNS]      (default 5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "impl/format/crc32c.h"
#include "impl/format/event.h"
#include "impl/format/record.h"
#include "tests/impl/format/pb_oracle.h"

namespace {

using Clock = std::chrono::steady_clock;
using smd::io::TensorEventFields;

struct Case {
  const char* name;
  std::vector<int64_t> shape;  // float32 elements
  int events;                  // per run
};

volatile size_t g_sink;  // keeps the work observable

template <typename F>
double MedianNsPerEvent(int runs, int events, F&& body) {
  std::vector<double> ns;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    body();
    auto t1 = Clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / events);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

// protoc-c: the same event as smd's encoder writes, built from the generated structs.
size_t PackWithProtocC(const TensorEventFields& f, const std::string& content, std::string* out) {
  const size_t ndim = f.ndim;
  std::vector<Smd__TensorShapeProto__Dim> dims(ndim);
  std::vector<Smd__TensorShapeProto__Dim*> dim_ptrs(ndim);
  std::vector<std::string> names(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    smd__tensor_shape_proto__dim__init(&dims[i]);
    dims[i].size = f.shape[i];
    names[i] = std::string(f.tag) + "_" + std::to_string(f.shape[i]);
    dims[i].name.data = reinterpret_cast<uint8_t*>(names[i].data());
    dims[i].name.len = names[i].size();
    dim_ptrs[i] = &dims[i];
  }
  Smd__TensorShapeProto shape;
  smd__tensor_shape_proto__init(&shape);
  shape.n_dim = ndim;
  shape.dim = dim_ptrs.data();
  Smd__TensorProto tensor;
  smd__tensor_proto__init(&tensor);
  tensor.dtype = static_cast<int>(f.dtype);
  tensor.tensor_shape = &shape;
  tensor.tensor_content.data = reinterpret_cast<uint8_t*>(const_cast<char*>(content.data()));
  tensor.tensor_content.len = content.size();
  std::string ms = std::to_string(f.mode_step), m = std::to_string(static_cast<int>(f.mode));
  Smd__SummaryMetadata__PluginData pd[2];
  Smd__SummaryMetadata__PluginData* pds[2] = {&pd[0], &pd[1]};
  const char* pn[2] = {"mode_step", "mode"};
  const std::string* pc[2] = {&ms, &m};
  for (int i = 0; i < 2; ++i) {
    smd__summary_metadata__plugin_data__init(&pd[i]);
    pd[i].plugin_name.data = reinterpret_cast<uint8_t*>(const_cast<char*>(pn[i]));
    pd[i].plugin_name.len = std::strlen(pn[i]);
    pd[i].content.data = reinterpret_cast<uint8_t*>(const_cast<char*>(pc[i]->data()));
    pd[i].content.len = pc[i]->size();
  }
  Smd__SummaryMetadata md;
  smd__summary_metadata__init(&md);
  md.n_plugin_data = 2;
  md.plugin_data = pds;
  Smd__Summary__Value value;
  smd__summary__value__init(&value);
  value.tag.data = reinterpret_cast<uint8_t*>(const_cast<char*>(f.tag.data()));
  value.tag.len = f.tag.size();
  value.value_case = SMD__SUMMARY__VALUE__VALUE_TENSOR;
  value.tensor = &tensor;
  value.metadata = &md;
  Smd__Summary__Value* values[1] = {&value};
  Smd__Summary summary;
  smd__summary__init(&summary);
  summary.n_value = 1;
  summary.value = values;
  Smd__Event ev;
  smd__event__init(&ev);
  ev.wall_time = f.wall_time;
  ev.step = f.step;
  ev.what_case = SMD__EVENT__WHAT_SUMMARY;
  ev.summary = &summary;
  size_t n = smd__event__get_packed_size(&ev);
  out->resize(smd::io::kRecordHeaderSize + n + smd::io::kRecordFooterSize);
  auto* base = reinterpret_cast<unsigned char*>(out->data());
  smd__event__pack(&ev, base + smd::io::kRecordHeaderSize);
  smd::io::EncodeRecordHeader(n, base);
  smd::io::EncodeFixed32(smd::io::kSmdebugPayloadCrc, base + smd::io::kRecordHeaderSize + n);
  return out->size();
}

}  // namespace

// CRC-32C of one buffer (a tensor's payload when the hook writes real payload CRCs, and every
// record's header and event): the three interleaved chains Crc32c uses against one dependent
// chain of the same instruction and the portable tables. GB/s, median of the runs.
static int BenchCrc(int runs) {
  if (!smd::io::Crc32cIsHardware()) {
    std::printf("\nCRC-32C: no SSE4.2 on this CPU, Crc32c is the portable code\n");
  }
  std::printf("\n%-36s %12s %12s %8s %12s\n", "CRC-32C of one buffer", "3 chains", "1 chain",
              "ratio", "portable");
  const size_t sizes[] = {1024, 16 * 1024, 256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024};
  std::string buf(sizes[4], '\0');
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 2654435761u >> 13);
  for (size_t n : sizes) {
    const int calls = static_cast<int>(std::max<size_t>(1, (128u << 20) / n));
    uint32_t three = 0, one = 0, portable = 0;
    auto gbps = [&](double ns_per_call) { return static_cast<double>(n) / ns_per_call; };
    double ns3 = MedianNsPerEvent(runs, calls, [&] {
      for (int i = 0; i < calls; ++i) three = smd::io::Crc32c(buf.data(), n, three);
    });
    double ns1 = MedianNsPerEvent(runs, calls, [&] {
      for (int i = 0; i < calls; ++i) one = smd::io::Crc32cOneChain(buf.data(), n, one);
    });
    double nsp = MedianNsPerEvent(runs, calls, [&] {
      for (int i = 0; i < calls; ++i) portable = smd::io::Crc32cPortable(buf.data(), n, portable);
    });
    if (three != one || three != portable) {
      std::fprintf(stderr, "bench_codec: CRC-32C implementations disagree on %zu bytes\n", n);
      return 1;
    }
    char label[64];
    std::snprintf(label, sizeof label, "%zu KiB", n / 1024);
    std::printf("%-36s %9.2fGB/s %9.2fGB/s %7.2fx %9.2fGB/s\n", label, gbps(ns3), gbps(ns1),
                ns1 / ns3, gbps(nsp));
  }
  return 0;
}

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  if (runs < 1) runs = 1;
  const Case cases[] = {
      {"scalar (0-d float32, 4 B)", {}, 200000},
      {"small (float32 [10], 40 B)", {10}, 200000},
      {"medium (float32 [128,128], 64 KiB)", {128, 128}, 5000},
      {"large (float32 [1024,1024], 4 MiB)", {1024, 1024}, 100},
  };
  std::printf("%-36s %12s %12s %8s %12s %12s %8s\n", "event", "decode smd", "protoc-c", "ratio",
              "encode smd", "protoc-c", "ratio");
  for (const Case& c : cases) {
    size_t elems = 1;
    for (int64_t d : c.shape) elems *= static_cast<size_t>(d);
    std::string content(elems * 4, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131);
    TensorEventFields f;
    f.wall_time = 1732460000.25;
    f.step = 1234;
    f.tag = "model.layers.3.mlp.weight";
    f.dtype = smd::DType::kFloat32;
    f.shape = c.shape.data();
    f.ndim = c.shape.size();
    f.mode = smd::Mode::kTrain;
    f.mode_step = 1234;
    std::string record;
    size_t p, s;
    smd::io::AppendTensorRecord(f, content, smd::io::PayloadCrcKind::kSmdebugConstant, true, &record,
                                &p, &s);
    std::string_view payload = smd::io::ParseRecord(record).value();
    // The two decoders must agree on this very event before they are timed.
    std::string diff = smd::pb_oracle::CheckEncoded(payload, f, content, nullptr);
    if (!diff.empty()) {
      std::fprintf(stderr, "bench_codec: codecs disagree on %s: %s\n", c.name, diff.c_str());
      return 1;
    }

    double dec_smd = MedianNsPerEvent(runs, c.events, [&] {
      smd::io::DecodedEvent ev;
      for (int i = 0; i < c.events; ++i) {
        if (!smd::io::DecodeEvent(payload, &ev).ok()) std::abort();
        g_sink = g_sink + ev.tensor_content.size() + ev.shape.size();
      }
    });
    double dec_pb = MedianNsPerEvent(runs, c.events, [&] {
      for (int i = 0; i < c.events; ++i) {
        Smd__Event* ev = smd::pb_oracle::Unpack(payload);
        if (ev == nullptr) std::abort();
        const Smd__TensorProto* t = ev->summary->value[0]->tensor;
        g_sink = g_sink + t->tensor_content.len + t->tensor_shape->n_dim;
        smd__event__free_unpacked(ev, nullptr);
      }
    });
    std::string out;
    double enc_smd = MedianNsPerEvent(runs, c.events, [&] {
      for (int i = 0; i < c.events; ++i) {
        out.clear();
        smd::io::AppendTensorRecord(f, content, smd::io::PayloadCrcKind::kSmdebugConstant, true,
                                    &out, &p, &s);
        g_sink = g_sink + out.size();
      }
    });
    std::string out_pb;
    double enc_pb = MedianNsPerEvent(runs, c.events, [&] {
      for (int i = 0; i < c.events; ++i) g_sink = g_sink + PackWithProtocC(f, content, &out_pb);
    });
    if (out_pb != record) {
      std::fprintf(stderr, "bench_codec: protoc-c's record differs from smd's for %s\n", c.name);
      return 1;
    }
    std::printf("%-36s %10.0fns %10.0fns %7.2fx %10.0fns %10.0fns %7.2fx\n", c.name, dec_smd,
                dec_pb, dec_pb / dec_smd, enc_smd, enc_pb, enc_pb / enc_smd);
  }
  return BenchCrc(runs);
}
