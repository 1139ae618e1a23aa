// CPU time of each thread of another process (the benchmark server), read from
// /proc/<pid>/task/<tid>/schedstat (nanoseconds on a CPU) or stat (utime + stime, in ticks) and
// /proc/<pid>/task/<tid>/comm (the thread's name: the threaded server's pool threads are "geerpc-r<reactor>"). The
// client samples the server before and after a workload's timed phase and prints, per thread and per name, the CPU time
// per call:
//   threadcpu <peer> <workload> name=<comm> tid=<tid> cpu_ns_per_call=<float>
//   reactorcpu <peer> <workload> name=<comm> threads=<n> cpu_ns_per_call=<float>
// (a thread that ended during the phase, a pool thread retiring, is not counted; without
// schedstat the tick is 10 ms, and a phase should last seconds for the figures to mean anything).
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace bench {

struct thread_cpu {
  std::string name;
  double cpu_ns = 0;
};
using thread_cpu_sample = std::map<long, thread_cpu>;  // by tid

// The CPU time of one task in nanoseconds: the first field of its schedstat (exact, where the
// kernel keeps it), else utime + stime from its stat (fields 14 and 15, counted after the ')' that
// ends the name, which may hold spaces), in clock ticks; -1 when unreadable.
inline double task_cpu_ns(const std::string& dir) {
  std::ifstream schedstat(dir + "/schedstat");
  double on_cpu_ns = 0;
  if (schedstat >> on_cpu_ns) return on_cpu_ns;
  std::ifstream in(dir + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atol(field.c_str());
    if (i == 15) stime = std::atol(field.c_str());
  }
  return static_cast<double>(utime + stime) * 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

inline thread_cpu_sample sample_threads(int pid) {
  thread_cpu_sample out;
  const std::string base = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(base.c_str());
  if (dir == nullptr) return out;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = base + "/" + entry->d_name;
    thread_cpu t;
    std::ifstream comm(task + "/comm");
    std::getline(comm, t.name);
    t.cpu_ns = task_cpu_ns(task);
    if (t.cpu_ns >= 0) out[std::atol(entry->d_name)] = t;
  }
  ::closedir(dir);
  return out;
}

// Prints the lines above for the threads that used CPU between `before` and `after`.
inline void print_thread_cpu(const std::string& peer, const std::string& workload, const thread_cpu_sample& before,
                             const thread_cpu_sample& after, double calls) {
  std::map<std::string, std::pair<int, double>> by_name;
  for (const auto& [tid, t] : after) {
    const auto was = before.find(tid);
    const double used = t.cpu_ns - (was != before.end() ? was->second.cpu_ns : 0);
    if (used <= 0) continue;
    std::printf("threadcpu %s %s name=%s tid=%ld cpu_ns_per_call=%.1f\n", peer.c_str(), workload.c_str(),
                t.name.c_str(), tid, used / calls);
    auto& sum = by_name[t.name];
    ++sum.first;
    sum.second += used;
  }
  for (const auto& [name, sum] : by_name)
    std::printf("reactorcpu %s %s name=%s threads=%d cpu_ns_per_call=%.1f\n", peer.c_str(), workload.c_str(),
                name.c_str(), sum.first, sum.second / calls);
  std::fflush(stdout);
}

}  // namespace bench
