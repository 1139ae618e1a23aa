// geerpc: how many CPUs this process may really use. Affinity says which CPUs its threads may run
// on; a cgroup CPU quota (docker --cpus=1, a Kubernetes CPU limit) says how much CPU time they may
// take together per period. A process held to one CPU's worth of time on a machine of many
// behaves as a one-CPU process: a caller that spins burns the quota the thread it waits for needs.
// The budget is therefore the smaller of the two, min(affinity, ceil(quota / period)), with the
// tightest quota along the process's cgroup and its ancestors (a parent's limit binds its
// children).
//
// Every file is read relative to a root directory, so that the tests can point the detection at a
// fake tree; a runtime reads "/" once, when it is made (runtime.hpp). A file that is missing, unreadable or
// garbled means "no limit": a wrong guess costs some speed, never correctness, and nothing here
// throws.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {
namespace cgroup {

// What the functions below return for "no quota found": callers treat it as no limit.
inline constexpr unsigned no_limit = 0;

// The smaller of two limits, either of which may be no_limit.
constexpr unsigned tighter(unsigned a, unsigned b) noexcept {
  if (a == no_limit) return b;
  if (b == no_limit) return a;
  return a < b ? a : b;
}

// Reads the file at `path` whole, up to `cap` bytes (a file cut there loses its last, partial
// line). False when it cannot be opened or read. Files under /proc and /sys report a size of 0, so
// it reads until end of file rather than asking for the size.
inline bool read_file(const std::string& path, std::string& out, std::size_t cap = std::size_t{1} << 20) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[4096];
  bool ok = true;
  while (out.size() < cap) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ok = false;
    if (got <= 0) break;
    out.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  if (out.size() >= cap) {
    out.resize(cap);
    const std::size_t last_line = out.rfind('\n');
    out.resize(last_line == std::string::npos ? 0 : last_line + 1);
  }
  return ok;
}

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

constexpr std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Splits off the next whitespace-separated word of `text`; empty when there is none.
constexpr std::string_view next_word(std::string_view& text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  std::size_t length = 0;
  while (length < text.size() && !is_space(text[length])) ++length;
  const std::string_view word = text.substr(0, length);
  text.remove_prefix(length);
  return word;
}

// A decimal number made of digits only (no sign, no blanks), that fits in 64 bits.
constexpr std::optional<std::uint64_t> parse_number(std::string_view text) noexcept {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// The CPUs a quota of `quota` per `period` (both in microseconds) lets a process use at once:
// ceil(quota / period), so that 1.5 CPUs' worth lets two threads run. The kernel accepts neither a
// zero quota nor a zero period, so either means the file was not what it should be: no limit.
constexpr unsigned cpus_of_quota(std::uint64_t quota, std::uint64_t period) noexcept {
  if (quota == 0 || period == 0) return no_limit;
  const std::uint64_t cpus = (quota - 1) / period + 1;
  constexpr auto most = std::numeric_limits<unsigned>::max();
  return cpus > most ? most : static_cast<unsigned>(cpus);
}

// cgroup v2's cpu.max: "max 100000" (no limit) or "150000 100000" (quota and period).
constexpr unsigned parse_cpu_max(std::string_view text) noexcept {
  const std::string_view quota = next_word(text);
  const std::string_view period = next_word(text);
  if (!trim(text).empty() || quota == "max") return no_limit;
  const auto q = parse_number(quota);
  const auto p = parse_number(period);
  return q && p ? cpus_of_quota(*q, *p) : no_limit;
}

// cgroup v1's cpu.cfs_quota_us ("-1": no limit) and cpu.cfs_period_us, one number each.
constexpr unsigned parse_cfs(std::string_view quota_text, std::string_view period_text) noexcept {
  const auto quota = parse_number(trim(quota_text));  // "-1" is no number: no limit
  const auto period = parse_number(trim(period_text));
  return quota && period ? cpus_of_quota(*quota, *period) : no_limit;
}

// Where /proc/self/cgroup puts this process: its cgroup v2 path ("0::/path") and its cgroup v1
// path in the hierarchy that holds the cpu controller ("4:cpu,cpuacct:/path"). A systemd
// "hybrid" system has both lines, with the cpu controller on v1.
struct membership {
  std::optional<std::string> v2;
  std::optional<std::string> v1_cpu;
};

// Whether the comma-separated list `list` holds `name` exactly ("cpuset" and "cpuacct" are not "cpu").
constexpr bool list_has(std::string_view list, std::string_view name) noexcept {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

inline membership parse_proc_cgroup(std::string_view text) {
  membership found;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    // "hierarchy-id:controllers:path"; the path is the rest of the line and may hold colons.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (path.empty() || path.front() != '/') continue;
    if (id == "0" && controllers.empty()) {
      if (!found.v2) found.v2.emplace(path);
    } else if (list_has(controllers, "cpu")) {
      if (!found.v1_cpu) found.v1_cpu.emplace(path);
    }
  }
  return found;
}

// A mounted cgroup hierarchy: which of its directories is mounted (`root`: "/" unless a container
// sees only its own part of the tree) and where.
struct mount {
  std::string root;
  std::string point;
};

struct mounts {
  std::optional<mount> v2;
  std::optional<mount> v1_cpu;
};

// mountinfo writes a blank, tab, newline or backslash in a path as \ and three octal digits.
inline std::string unescape_mount_path(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      const char a = text[i + 1], b = text[i + 2], c = text[i + 3];
      if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out.push_back(static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

// /proc/self/mountinfo, one mount a line:
//   36 35 98:0 /root /mount/point rw,noatime shared:1 - cgroup2 cgroup2 rw,nsdelegate
// After the optional fields comes " - ", the file system type, its source and its options; a
// cgroup v1 hierarchy names its controllers among those options. The first of each kind counts.
inline mounts parse_mountinfo(std::string_view text) {
  mounts found;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    for (int skip = 0; skip < 3; ++skip) next_word(line);  // mount id, parent id, major:minor
    const std::string_view root = next_word(line);
    const std::string_view point = next_word(line);
    std::string_view word = next_word(line);  // the mount's options, then the optional fields
    while (!word.empty() && word != "-") word = next_word(line);
    if (word != "-" || root.empty() || point.empty()) continue;
    const std::string_view type = next_word(line);
    next_word(line);  // the source
    const std::string_view options = next_word(line);
    if (type == "cgroup2" && !found.v2)
      found.v2 = mount{unescape_mount_path(root), unescape_mount_path(point)};
    else if (type == "cgroup" && list_has(options, "cpu") && !found.v1_cpu)
      found.v1_cpu = mount{unescape_mount_path(root), unescape_mount_path(point)};
  }
  return found;
}

// The path of the process's cgroup below its hierarchy's mount point: its own path less the part
// of the tree above the mounted directory. A path outside the mounted part (a cgroup namespace
// shows one as "/../x"), or one that climbs with "..", gives "/": the mount point itself, the
// nearest directory there is to read.
inline std::string path_below_mount(std::string_view cgroup_path, std::string_view mount_root) {
  std::string_view rest = cgroup_path;
  if (mount_root != "/") {
    if (rest.substr(0, mount_root.size()) != mount_root) return "/";
    rest.remove_prefix(mount_root.size());
    if (!rest.empty() && rest.front() != '/') return "/";  // "/docker1" is not below "/docker"
  }
  for (std::string_view check = rest; !check.empty();) {
    const std::size_t slash = check.find('/');
    const std::string_view part = check.substr(0, slash);
    if (part == "." || part == "..") return "/";
    if (slash == std::string_view::npos) break;
    check.remove_prefix(slash + 1);
  }
  return rest.empty() ? std::string("/") : std::string(rest);
}

// `root` joined with an absolute `path`: "/" and "" are the real root, a trailing slash is dropped.
inline std::string under(std::string_view root, std::string_view path) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  std::string out(root);
  out.append(path);
  return out;
}

// Walks from the cgroup's directory up to the mount point, calling read(directory) on each and
// keeping the tightest limit.
template <class Read>
unsigned tightest_up(const std::string& mount_dir, std::string_view below, Read read) {
  unsigned limit = no_limit;
  for (;;) {
    while (below.size() > 1 && below.back() == '/') below.remove_suffix(1);
    std::string directory = mount_dir;
    if (below != "/") directory.append(below);
    limit = tighter(limit, read(directory));
    if (below.size() <= 1) return limit;
    const std::size_t slash = below.rfind('/');
    below = slash == 0 || slash == std::string_view::npos ? std::string_view("/") : below.substr(0, slash);
  }
}

inline unsigned v2_limit(std::string_view root, const mount& m, std::string_view cgroup_path) {
  std::string text;
  return tightest_up(under(root, m.point), path_below_mount(cgroup_path, m.root), [&](const std::string& directory) {
    return read_file(directory + "/cpu.max", text) ? parse_cpu_max(text) : no_limit;
  });
}

inline unsigned v1_limit(std::string_view root, const mount& m, std::string_view cgroup_path) {
  std::string quota, period;
  return tightest_up(under(root, m.point), path_below_mount(cgroup_path, m.root), [&](const std::string& directory) {
    return read_file(directory + "/cpu.cfs_quota_us", quota) && read_file(directory + "/cpu.cfs_period_us", period)
               ? parse_cfs(quota, period)
               : no_limit;
  });
}

// The tightest CPU quota that applies to this process, found under `root` (a directory standing
// for "/"), in CPUs rounded up; no_limit when none is found. Both hierarchies are read when both
// exist, and the tighter counts. Without mountinfo, the usual mount points are tried.
inline unsigned quota_limit(std::string_view root) noexcept {
  try {
    std::string text;
    if (!read_file(under(root, "/proc/self/cgroup"), text)) return no_limit;
    const membership member = parse_proc_cgroup(text);
    if (!member.v2 && !member.v1_cpu) return no_limit;
    mounts found;
    if (read_file(under(root, "/proc/self/mountinfo"), text)) found = parse_mountinfo(text);
    unsigned limit = no_limit;
    if (member.v2) limit = tighter(limit, v2_limit(root, found.v2.value_or(mount{"/", "/sys/fs/cgroup"}), *member.v2));
    if (member.v1_cpu) {
      if (found.v1_cpu) {
        limit = tighter(limit, v1_limit(root, *found.v1_cpu, *member.v1_cpu));
      } else {
        limit = tighter(limit, v1_limit(root, mount{"/", "/sys/fs/cgroup/cpu,cpuacct"}, *member.v1_cpu));
        limit = tighter(limit, v1_limit(root, mount{"/", "/sys/fs/cgroup/cpu"}, *member.v1_cpu));
      }
    }
    return limit;
  } catch (...) {  // out of memory building a path: no limit found
    return no_limit;
  }
}

}  // namespace cgroup

// The CPUs this process's affinity mask allows, at least 1 (1 too when it cannot be read: the
// one-CPU paths are the safe ones). The mask grows past CPU_SETSIZE for machines with more CPUs.
inline unsigned affinity_cpus() noexcept {
  for (std::size_t cpus = CPU_SETSIZE; cpus <= (std::size_t{1} << 20); cpus *= 2) {
    cpu_set_t* const set = CPU_ALLOC(cpus);
    if (set == nullptr) return 1;
    const std::size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    const int result = ::sched_getaffinity(0, size, set);
    const int error = errno;
    const int count = result == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (result == 0) return count > 0 ? static_cast<unsigned>(count) : 1;
    if (error != EINVAL) return 1;  // EINVAL: the kernel's mask is larger than ours
  }
  return 1;
}

// The CPUs a process with `affinity` CPUs may use under the cgroup limits found below `root`.
inline unsigned cpu_budget(unsigned affinity, std::string_view root) noexcept {
  const unsigned budget = cgroup::tighter(affinity, cgroup::quota_limit(root));
  return budget == 0 ? 1 : budget;
}

// This process's budget as it is now (a few system calls; a runtime reads it once).
inline unsigned process_cpus() noexcept { return cpu_budget(affinity_cpus(), "/"); }

}  // namespace detail
GEERPC_END_NAMESPACE
