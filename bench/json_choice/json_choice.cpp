// Compares JSON libraries for geerpc's JSON codec: speed of parsing a JSON-RPC request into a C++
// struct and writing the reply, allocations per operation, and behaviour on hostile input.
//   json_choice bench [ms_per_batch]   timing table
//   json_choice hostile                hostile-input table (each probe in a forked child)
// Not part of the geerpc build: see build.sh.
#define JC_BOOST_SRC
#include "lib_boost.hpp"
#include "lib_boost_sax.hpp"
#include "lib_jsoncpp.hpp"
#include "lib_nlohmann.hpp"
#include "lib_rapidjson.hpp"
#include "simd_api.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>

// ---- allocation counter (global operator new replacement) ----
static std::uint64_t g_allocs = 0;
void* operator new(std::size_t n) {
  ++g_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  ++g_allocs;
  if (void* p = std::aligned_alloc(
          static_cast<std::size_t>(a),
          (n + static_cast<std::size_t>(a) - 1) / static_cast<std::size_t>(a) * static_cast<std::size_t>(a)))
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {
using clk = std::chrono::steady_clock;

// An input string with SIMDJSON_PADDING bytes of capacity after its end.
std::string padded_copy(const std::string& s) {
  std::string r;
  r.reserve(s.size() + 64);
  r = s;
  r.reserve(s.size() + 64);
  return r;
}

struct result {
  double ns;
  double allocs;
};
volatile std::size_t g_sink;

result measure(const std::function<void()>& op, double ms_per_batch, int batches) {
  // calibrate
  std::uint64_t iters = 1;
  for (;;) {
    auto t0 = clk::now();
    for (std::uint64_t i = 0; i < iters; ++i) op();
    double ms = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
    if (ms > ms_per_batch / 4 || iters > (1u << 26)) {
      iters = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(iters * ms_per_batch / std::max(ms, 1e-3)));
      break;
    }
    iters *= 4;
  }
  std::vector<double> ns;
  double allocs = 0;
  for (int b = 0; b < batches; ++b) {
    std::uint64_t a0 = g_allocs;
    auto t0 = clk::now();
    for (std::uint64_t i = 0; i < iters; ++i) op();
    auto t1 = clk::now();
    allocs = double(g_allocs - a0) / double(iters);
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters));
  }
  std::sort(ns.begin(), ns.end());
  return {ns[ns.size() / 2], allocs};
}

struct lib {
  const char* name;
  bool (*parse_sum)(std::string_view, jc::sum_request&);
  void (*write_sum)(std::string&, std::int64_t, std::int64_t);
  bool (*parse_echo)(std::string_view, jc::echo_request&);
  void (*write_echo)(std::string&, std::int64_t, std::string_view);
  bool (*parse_array)(std::string_view, std::vector<jc::args>&);
  void (*write_array)(std::string&, const std::vector<jc::args>&);
};

int bench(double ms) {
  const lib libs[] = {
      {"hand-written writer", nullptr, jc::hand_write_sum_reply, nullptr, jc::hand_write_echo_reply, nullptr,
       jc::hand_write_array},
      {"Boost.JSON 1.81 (parse/serialize)", jc::boostjson::parse_sum, jc::boostjson::write_sum,
       jc::boostjson::parse_echo, jc::boostjson::write_echo, jc::boostjson::parse_array, jc::boostjson::write_array},
      {"Boost.JSON 1.81 (reused parser+arena)", jc::boostjson::parse_sum_tuned, jc::boostjson::write_sum_tuned,
       jc::boostjson::parse_echo_tuned, jc::boostjson::write_echo_tuned, jc::boostjson::parse_array_tuned,
       jc::boostjson::write_array_tuned},
      {"Boost.JSON 1.81 basic_parser -> struct", jc::boostsax::parse_sum, nullptr, jc::boostsax::parse_echo, nullptr,
       jc::boostsax::parse_array, nullptr},
      {"nlohmann 3.11.2", jc::nlohmannjson::parse_sum, jc::nlohmannjson::write_sum, jc::nlohmannjson::parse_echo,
       jc::nlohmannjson::write_echo, jc::nlohmannjson::parse_array, jc::nlohmannjson::write_array},
      {"RapidJSON 1.1.0 (DOM parse, SAX Writer)", jc::rapid::parse_sum, jc::rapid::write_sum, jc::rapid::parse_echo,
       jc::rapid::write_echo, jc::rapid::parse_array, jc::rapid::write_array},
      {"simdjson 3.0.1 OnDemand, no -march", jc::simd_api::simd_generic_parse_sum, nullptr,
       jc::simd_api::simd_generic_parse_echo, nullptr, jc::simd_api::simd_generic_parse_array, nullptr},
      {"simdjson 3.0.1 OnDemand, -march=haswell", jc::simd_api::simd_haswell_parse_sum, nullptr,
       jc::simd_api::simd_haswell_parse_echo, nullptr, jc::simd_api::simd_haswell_parse_array, nullptr},
      {"JsonCpp 1.9.5", jc::jsoncpp::parse_sum, jc::jsoncpp::write_sum, jc::jsoncpp::parse_echo,
       jc::jsoncpp::write_echo, jc::jsoncpp::parse_array, jc::jsoncpp::write_array},
  };
  const std::string sum_in = padded_copy(jc::make_sum_request());
  const std::string plain = jc::payload_plain(), esc = jc::payload_escapes();
  const std::string echo_plain_in = padded_copy(jc::make_echo_request(plain));
  const std::string echo_esc_in = padded_copy(jc::make_echo_request(esc));
  const auto arr = jc::make_array_values();
  const std::string arr_in = padded_copy(jc::make_array_json(arr));
  std::printf("# inputs: sum %zu B, echo plain %zu B, echo escapes %zu B, array %zu B (%zu objects)\n", sum_in.size(),
              echo_plain_in.size(), echo_esc_in.size(), arr_in.size(), arr.size());

  // Correctness check before timing: every parser fills the same struct.
  for (auto& l : libs) {
    if (!l.parse_sum) continue;
    jc::sum_request r;
    jc::echo_request e1, e2;
    std::vector<jc::args> v;
    bool ok = l.parse_sum(sum_in, r) && r.method == "Arith.Sum" && r.params.A == 1 && r.params.B == 2 && r.id == 7 &&
              l.parse_echo(echo_plain_in, e1) && e1.payload == plain && l.parse_echo(echo_esc_in, e2) &&
              e2.payload == esc && l.parse_array(arr_in, v) && v.size() == arr.size() && v.back().B == arr.back().B;
    if (!ok) {
      std::printf("CHECK FAILED: %s\n", l.name);
      return 1;
    }
  }
  for (auto& l : libs) {
    if (!l.write_sum) continue;
    std::string out;
    jc::echo_request e;
    bool ok = true;
    l.write_echo(out, 7, esc);
    // round-trip the escaped payload through Boost.JSON to check the writer escaped correctly
    boost::json::error_code ec;
    auto v = boost::json::parse(out, ec);
    ok = !ec && v.at("result").as_string() == esc && v.at("id").as_int64() == 7;
    l.write_array(out, arr);
    std::vector<jc::args> back;
    ok = ok && jc::boostjson::parse_array(out, back) && back.size() == arr.size() && back[5].A == arr[5].A;
    if (!ok) {
      std::printf("WRITE CHECK FAILED: %s\n", l.name);
      return 1;
    }
  }

  const int batches = 7;
  std::printf("# simdjson kernels: %s / %s\n", jc::simd_api::simd_generic_kernel(),
              jc::simd_api::simd_haswell_kernel());
  std::printf("%-42s %-22s %12s %10s\n", "library", "operation", "ns/op", "allocs/op");
  for (auto& l : libs) {
    auto row = [&](const char* op, const std::function<void()>& f) {
      result r = measure(f, ms, batches);
      std::printf("%-42s %-22s %12.0f %10.1f\n", l.name, op, r.ns, r.allocs);
      std::fflush(stdout);
    };
    jc::sum_request sr;
    jc::echo_request er;
    std::vector<jc::args> av;
    std::string out;
    out.reserve(256 * 1024);
    er.payload.reserve(8192);
    av.reserve(arr.size());
    if (l.parse_sum) {
      row("parse sum request", [&] { g_sink = l.parse_sum(sum_in, sr); });
      row("parse echo 4K plain", [&] { g_sink = l.parse_echo(echo_plain_in, er); });
      row("parse echo 4K escapes", [&] { g_sink = l.parse_echo(echo_esc_in, er); });
      row("parse 64K array", [&] { g_sink = l.parse_array(arr_in, av); });
    }
    if (l.write_sum) {
      row("write sum reply", [&] {
        l.write_sum(out, 7, 3);
        g_sink = out.size();
      });
      row("write echo 4K plain", [&] {
        l.write_echo(out, 7, plain);
        g_sink = out.size();
      });
      row("write echo 4K escapes", [&] {
        l.write_echo(out, 7, esc);
        g_sink = out.size();
      });
      row("write 64K array", [&] {
        l.write_array(out, arr);
        g_sink = out.size();
      });
    }
  }
  return 0;
}

// ---------------- hostile input ----------------
long vm_hwm_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}
long vm_rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Runs fn in a forked child (a crash or a hang stays there) and prints its one-line answer.
void run_probe(const char* casename, const char* probename, const std::function<std::string()>& fn, bool memory) {
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(20);
    // reset the high-water mark so that VmHWM shows this probe's peak
    {
      std::ofstream c("/proc/self/clear_refs");
      c << "5";
    }
    long before = vm_rss_kb();
    std::string r = fn();
    if (memory) r += " | peak RSS +" + std::to_string((vm_hwm_kb() - before) / 1024) + " MiB";
    if (r.size() > 230) r = r.substr(0, 230) + "...";
    for (auto& c : r)
      if (c == '\n') c = ' ';
    (void)!write(fds[1], r.data(), r.size());
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st))
    out = std::string("CRASH: signal ") + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")";
  std::printf("%-26s | %-34s | %s\n", casename, probename, out.c_str());
  std::fflush(stdout);
}

int hostile() {
  struct hcase {
    const char* name;
    std::string text;
    bool memory;
  };
  std::vector<hcase> cases;
  cases.push_back({"depth 100k [[[...]]]", std::string(100000, '[') + std::string(100000, ']'), false});
  {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "{\"a\":";
    s += "1";
    s += std::string(100000, '}');
    cases.push_back({"depth 100k {\"a\":{...}}", s, false});
  }
  cases.push_back({"depth 40 [[...]]", std::string(40, '[') + std::string(40, ']'), false});
  cases.push_back({"1e400", "1e400", false});
  cases.push_back({"-1e400", "-1e400", false});
  cases.push_back({"1e-400", "1e-400", false});
  cases.push_back({"123456789012345678901234567890", "123456789012345678901234567890", false});
  cases.push_back({"2^64 = 18446744073709551616", "18446744073709551616", false});
  cases.push_back({"2^53+1 = 9007199254740993", "9007199254740993", false});
  cases.push_back({"int64 7587869543453450161", "7587869543453450161", false});
  cases.push_back({"NaN", "NaN", false});
  cases.push_back({"Infinity", "Infinity", false});
  cases.push_back({"-Infinity", "-Infinity", false});
  cases.push_back({"[NaN]", "[NaN]", false});
  cases.push_back({"duplicate {\"a\":1,\"a\":2}", R"({"a":1,"a":2})", false});
  cases.push_back({"invalid UTF-8 \"\\xff\"", "\"\xff\"", false});
  cases.push_back({"overlong UTF-8 \"\\xc0\\xaf\"", "\"\xc0\xaf\"", false});
  cases.push_back({"UTF-8 surrogate \\xed\\xa0\\x80", "\"\xed\xa0\x80\"", false});
  cases.push_back({"truncated UTF-8 \\xe2\\x82", "\"\xe2\x82\"", false});
  cases.push_back({"lone \\ud800", R"("\ud800")", false});
  cases.push_back({"lone \\udc00", R"("\udc00")", false});
  cases.push_back({"\\ud800\\u0041", R"("\ud800\u0041")", false});
  cases.push_back({"raw control char \\x01",
                   "\"a\x01"
                   "b\"",
                   false});
  cases.push_back({"trailing garbage", R"({"a":1} x)", false});
  cases.push_back({"error position (col 29)", R"({"method":"x","params":[1,2,]})", false});
  cases.push_back({"truncated {\"a\":1", R"({"a":1)", false});
  {
    std::string s(64u << 20, 'a');
    s.front() = '"';
    s.back() = '"';
    cases.push_back({"64 MiB string", std::move(s), true});
  }

  std::printf("# case | probe | result\n");
  for (auto& c : cases) {
    std::string_view in = c.text;
    bool m = c.memory;
    run_probe(
        c.name, "Boost.JSON max_depth=64", [&] { return jc::boostjson::probe(in, 64); }, m);
    if (c.name[0] == 'd' && c.name[1] == 'e')
      run_probe(
          c.name, "Boost.JSON max_depth=200000", [&] { return jc::boostjson::probe(in, 200000); }, m);
    if (m) {
      run_probe(
          c.name, "Boost.JSON SAX, max_string 1 MiB", [&] { return jc::boostjson::probe_stream_sax_limit(in); }, m);
      run_probe(
          c.name, "Boost.JSON stream, 1 MiB static_resource", [&] { return jc::boostjson::probe_stream_budget(in); },
          m);
    }
    run_probe(
        c.name, "nlohmann parse()", [&] { return jc::nlohmannjson::probe(in); }, m);
    run_probe(
        c.name, "nlohmann SAX depth<=64,str<=1MiB", [&] { return jc::nlohmannjson::probe_limited(in, 64); }, m);
    run_probe(
        c.name, "RapidJSON iterative+validate", [&] { return jc::rapid::probe(in); }, m);
    run_probe(
        c.name, "RapidJSON default flags", [&] { return jc::rapid::probe_defaults(in); }, m);
    if (std::string_view(c.name).find("NaN") != std::string_view::npos ||
        std::string_view(c.name).find("Inf") != std::string_view::npos)
      run_probe(
          c.name, "RapidJSON kParseNanAndInfFlag", [&] { return jc::rapid::probe_nanlit(in); }, m);
    if (std::string_view(c.name).find("2^53") != std::string_view::npos ||
        std::string_view(c.name).find("e400") != std::string_view::npos)
      run_probe(
          c.name, "RapidJSON kParseFullPrecisionFlag", [&] { return jc::rapid::probe_fullprec(in); }, m);
    run_probe(
        c.name, "simdjson On Demand, full walk", [&] { return jc::simd_api::simd_haswell_probe(in); }, m);
    run_probe(
        c.name, "JsonCpp defaults", [&] { return jc::jsoncpp::probe(in); }, m);
    run_probe(
        c.name, "JsonCpp strictMode", [&] { return jc::jsoncpp::probe_strict(in); }, m);
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "bench";
  if (mode == "bench") return bench(argc > 2 ? std::atof(argv[2]) : 40.0);
  if (mode == "hostile") return hostile();
  std::fprintf(stderr, "usage: %s bench [ms_per_batch] | hostile\n", argv[0]);
  return 2;
}
