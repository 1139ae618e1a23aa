// The CPU budget (tuning/cpu_budget.hpp): the CPUs a process may use are the fewer of what its
// affinity allows and what its cgroup CPU quota allows, rounded up. Driven against fake cgroup
// trees in a temporary directory: /proc/self/cgroup, /proc/self/mountinfo and the cgroup files,
// laid out as the kernel shows them, for cgroup v2, v1 and the hybrid of both.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

#include "catch.hpp"
#include "support.hpp"

namespace cpu_budget_test {

namespace cgroup = geerpc::detail::cgroup;
using geerpc::detail::cpu_budget;
using namespace std::string_view_literals;

namespace {

// A directory standing for "/" of a machine, removed with everything in it at the end.
class fake_root {
 public:
  fake_root() {
    std::string pattern = (std::filesystem::temp_directory_path() / "geerpc-cgroup-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~fake_root() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  fake_root(const fake_root&) = delete;
  fake_root& operator=(const fake_root&) = delete;

  // Writes `content` to the absolute path `file` of the fake machine, making its directories.
  void write(std::string_view file, std::string_view content) const {
    const std::filesystem::path target = path_ + std::string(file);
    std::filesystem::create_directories(target.parent_path());
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) throw std::runtime_error("cannot write " + target.string());
  }
  void make_directory(std::string_view directory) const {
    std::filesystem::create_directories(path_ + std::string(directory));
  }

  const std::string& path() const noexcept { return path_; }
  unsigned limit() const noexcept { return cgroup::quota_limit(path_); }

 private:
  std::string path_;
};

// What a pure cgroup v2 machine shows, with the process in `cgroup_path`.
constexpr std::string_view v2_mountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
    "26 22 0:24 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "30 26 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

void make_v2(const fake_root& root, std::string_view cgroup_path) {
  root.write("/proc/self/cgroup", "0::" + std::string(cgroup_path) + "\n");
  root.write("/proc/self/mountinfo", v2_mountinfo);
}

// A cgroup v1 machine: the cpu controller shares a hierarchy with cpuacct; a cpuset hierarchy,
// whose name starts with "cpu", comes first in both files to catch a parser that matches prefixes.
constexpr std::string_view v1_mountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "31 22 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime shared:9 - cgroup cgroup rw,cpuset\n"
    "35 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct\n";

void make_v1(const fake_root& root, std::string_view cgroup_path) {
  root.write("/proc/self/cgroup",
             "12:cpuset:/elsewhere\n"
             "4:cpu,cpuacct:" +
                 std::string(cgroup_path) +
                 "\n"
                 "1:name=systemd:/elsewhere\n");
  root.write("/proc/self/mountinfo", v1_mountinfo);
}

void write_v1_quota(const fake_root& root, std::string_view directory, std::string_view quota,
                    std::string_view period = "100000\n") {
  root.write(std::string(directory) + "/cpu.cfs_quota_us", quota);
  root.write(std::string(directory) + "/cpu.cfs_period_us", period);
}

}  // namespace

TEST_CASE("cgroup v2: a quota in cpu.max limits the budget", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/app.slice/app.service");
  root.write("/sys/fs/cgroup/app.slice/app.service/cpu.max", "200000 100000\n");
  CHECK(root.limit() == 2);
  CHECK(cpu_budget(8, root.path()) == 2);
}

TEST_CASE("cgroup v2: cpu.max of \"max\" is no limit", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/app.slice/app.service");
  root.write("/sys/fs/cgroup/app.slice/app.service/cpu.max", "max 100000\n");
  root.write("/sys/fs/cgroup/app.slice/cpu.max", "max 100000\n");
  CHECK(root.limit() == cgroup::no_limit);
  CHECK(cpu_budget(8, root.path()) == 8);
}

TEST_CASE("cgroup v2: the tightest quota on the way up to the root counts", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/kubepods.slice/pod1/container");
  SECTION("the parent is tighter") {
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/container/cpu.max", "400000 100000\n");
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/cpu.max", "100000 100000\n");
    root.write("/sys/fs/cgroup/kubepods.slice/cpu.max", "max 100000\n");
    CHECK(root.limit() == 1);
  }
  SECTION("the grandparent is tighter, the cgroup itself has no limit") {
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/container/cpu.max", "max 100000\n");
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/cpu.max", "600000 100000\n");
    root.write("/sys/fs/cgroup/kubepods.slice/cpu.max", "300000 100000\n");
    CHECK(root.limit() == 3);
  }
  SECTION("the cgroup itself is tighter") {
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/container/cpu.max", "100000 100000\n");
    root.write("/sys/fs/cgroup/kubepods.slice/pod1/cpu.max", "600000 100000\n");
    CHECK(root.limit() == 1);
  }
  SECTION("the mount point itself (a container's own cgroup namespace root) is read too") {
    root.write("/sys/fs/cgroup/cpu.max", "200000 100000\n");
    CHECK(root.limit() == 2);
  }
}

TEST_CASE("cgroup v2 inside a cgroup namespace: the path is \"/\", the limit at the mount point", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/");
  root.write("/sys/fs/cgroup/cpu.max", "100000 100000\n");
  CHECK(root.limit() == 1);
}

TEST_CASE("cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us limits the budget", "[cpu_budget]") {
  const fake_root root;
  make_v1(root, "/docker/abc");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc", "300000\n");
  CHECK(root.limit() == 3);
  CHECK(cpu_budget(8, root.path()) == 3);
}

TEST_CASE("cgroup v1: a quota of -1 is no limit", "[cpu_budget]") {
  const fake_root root;
  make_v1(root, "/docker/abc");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc", "-1\n");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker", "-1\n");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct", "-1\n");
  CHECK(root.limit() == cgroup::no_limit);
  CHECK(cpu_budget(8, root.path()) == 8);
}

TEST_CASE("cgroup v1: a parent's quota binds too", "[cpu_budget]") {
  const fake_root root;
  make_v1(root, "/docker/abc");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc", "-1\n");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker", "200000\n");
  CHECK(root.limit() == 2);
}

TEST_CASE("cgroup v1 in a container: the mounted directory is the process's cgroup", "[cpu_budget]") {
  // Docker without a cgroup namespace: /proc/self/cgroup names the host's path, and the container
  // has that directory mounted at /sys/fs/cgroup/cpu,cpuacct (mountinfo's root field says so).
  const fake_root root;
  root.write("/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n");
  root.write("/proc/self/mountinfo",
             "35 31 0:30 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,relatime - cgroup cgroup rw,cpu,cpuacct\n");
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct", "200000\n");
  // A cgroup the container made for itself, named as the host's path: reading the host's path
  // below the mount point would find it.
  write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/docker", "100000\n");
  CHECK(root.limit() == 2);
}

TEST_CASE("a fractional quota rounds up: 1.5 CPUs' worth lets two threads run", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/app");
  root.write("/sys/fs/cgroup/app/cpu.max", "150000 100000\n");
  CHECK(root.limit() == 2);
  const fake_root v1;
  make_v1(v1, "/app");
  write_v1_quota(v1, "/sys/fs/cgroup/cpu,cpuacct/app", "150000\n");
  CHECK(v1.limit() == 2);
}

TEST_CASE("a quota of less than one CPU still leaves one", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/app");
  root.write("/sys/fs/cgroup/app/cpu.max", "50000 100000\n");
  CHECK(root.limit() == 1);
  CHECK(cpu_budget(8, root.path()) == 1);
  const fake_root v1;
  make_v1(v1, "/app");
  write_v1_quota(v1, "/sys/fs/cgroup/cpu,cpuacct/app", "1000\n", "1000000\n");
  CHECK(v1.limit() == 1);
}

TEST_CASE("an affinity smaller than the quota is the budget", "[cpu_budget]") {
  const fake_root root;
  make_v2(root, "/app");
  root.write("/sys/fs/cgroup/app/cpu.max", "400000 100000\n");
  CHECK(cpu_budget(1, root.path()) == 1);
  CHECK(cpu_budget(3, root.path()) == 3);
  CHECK(cpu_budget(4, root.path()) == 4);
  CHECK(cpu_budget(5, root.path()) == 4);
}

TEST_CASE("a hybrid system: the cpu controller on v1, an empty v2 hierarchy beside it", "[cpu_budget]") {
  // As systemd's hybrid layout (and this project's CI machines): both kinds of lines.
  const fake_root root;
  root.write("/proc/self/cgroup", "3:cpuset:/\n2:cpuacct:/\n1:cpu:/batch\n0::/batch\n");
  root.write("/proc/self/mountinfo",
             "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
             "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
             "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
             "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
             "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  root.make_directory("/sys/fs/cgroup/unified/batch");
  write_v1_quota(root, "/sys/fs/cgroup/cpu/batch", "250000\n");
  CHECK(root.limit() == 3);
}

TEST_CASE("without mountinfo the usual mount points are read", "[cpu_budget]") {
  SECTION("v2 at /sys/fs/cgroup") {
    const fake_root root;
    root.write("/proc/self/cgroup", "0::/app\n");
    root.write("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    CHECK(root.limit() == 1);
  }
  SECTION("v1 at /sys/fs/cgroup/cpu,cpuacct") {
    const fake_root root;
    root.write("/proc/self/cgroup", "4:cpu,cpuacct:/app\n");
    write_v1_quota(root, "/sys/fs/cgroup/cpu,cpuacct/app", "200000\n");
    CHECK(root.limit() == 2);
  }
  SECTION("v1 at /sys/fs/cgroup/cpu") {
    const fake_root root;
    root.write("/proc/self/cgroup", "4:cpu:/app\n");
    write_v1_quota(root, "/sys/fs/cgroup/cpu/app", "200000\n");
    CHECK(root.limit() == 2);
  }
}

TEST_CASE("a mount point with a blank in its name, as mountinfo escapes it", "[cpu_budget]") {
  const fake_root root;
  root.write("/proc/self/cgroup", "0::/app\n");
  root.write("/proc/self/mountinfo", "30 26 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n");
  root.write("/sys/fs/my cgroup/app/cpu.max", "300000 100000\n");
  CHECK(root.limit() == 3);
}

TEST_CASE("missing files mean no limit", "[cpu_budget]") {
  SECTION("an empty machine") {
    const fake_root root;
    CHECK(root.limit() == cgroup::no_limit);
    CHECK(cpu_budget(6, root.path()) == 6);
  }
  SECTION("a root directory that does not exist") {
    CHECK(cgroup::quota_limit("/nonexistent/geerpc-no-such-root") == cgroup::no_limit);
  }
  SECTION("cgroup v2 without cpu.max anywhere (the root cgroup has none)") {
    const fake_root root;
    make_v2(root, "/app");
    root.make_directory("/sys/fs/cgroup/app");
    CHECK(root.limit() == cgroup::no_limit);
  }
  SECTION("cgroup v1 with a quota and no period") {
    const fake_root root;
    make_v1(root, "/app");
    root.write("/sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us", "100000\n");
    CHECK(root.limit() == cgroup::no_limit);
  }
  SECTION("the process in no hierarchy with a cpu controller") {
    const fake_root root;
    root.write("/proc/self/cgroup", "3:cpuset:/app\n2:cpuacct:/app\n1:name=systemd:/app\n");
    root.write("/sys/fs/cgroup/cpuset/app/cpu.cfs_quota_us", "100000\n");
    root.write("/sys/fs/cgroup/cpuset/app/cpu.cfs_period_us", "100000\n");
    CHECK(root.limit() == cgroup::no_limit);
  }
}

TEST_CASE("garbled cgroup files mean no limit", "[cpu_budget]") {
  const std::string_view garbage[] = {
      "",
      "\n",
      "garbage",
      "100000",                          // a quota without its period
      "max",                             // "max" without its period is still no limit
      "100000 100000 100000\n",          // a word too many
      "-5 100000\n",                     // no such quota
      "100000 0\n",                      // a zero period would divide by zero
      "0 100000\n",                      // a zero quota the kernel refuses
      "99999999999999999999999 100000",  // overflows 64 bits
      "1e5 1e5\n",
      "+100000 100000\n",
      "100000 -100000\n",
      "\x01\xff\x00 100000"sv,
  };
  for (const std::string_view text : garbage) {
    INFO("cpu.max: " << text);
    const fake_root root;
    make_v2(root, "/app");
    root.write("/sys/fs/cgroup/app/cpu.max", text);
    CHECK(root.limit() == cgroup::no_limit);
    CHECK(cpu_budget(4, root.path()) == 4);
  }
  SECTION("v1 quota and period") {
    CHECK(cgroup::parse_cfs("-1", "100000") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs("-100000", "100000") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs("abc", "100000") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs("100000", "") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs("100000", "0") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs("100000 100000", "100000") == cgroup::no_limit);
    CHECK(cgroup::parse_cfs(" 100000\n", "100000\n") == 1);  // the control: surrounding blanks are fine
  }
  SECTION("a huge quota is clamped, not wrapped") {
    CHECK(cgroup::parse_cpu_max("18446744073709551615 1") == std::numeric_limits<unsigned>::max());
  }
  SECTION("a garbled /proc/self/cgroup") {
    const fake_root root;
    root.write("/proc/self/cgroup", "0:\n::\n0::app\n::::\n4:cpu\n\n");
    root.write("/proc/self/mountinfo", v2_mountinfo);
    root.write("/sys/fs/cgroup/cpu.max", "100000 100000\n");  // would count if a line were taken
    root.write("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    CHECK(root.limit() == cgroup::no_limit);
  }
  SECTION("a garbled mountinfo falls back to the usual mount point") {
    const fake_root root;
    root.write("/proc/self/cgroup", "0::/app\n");
    root.write("/proc/self/mountinfo", "30 26 0:26 / /elsewhere cgroup2 cgroup2 rw\n- \n - cgroup2\n\\\n");
    root.write("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    CHECK(root.limit() == 1);
  }
  SECTION("a cgroup path that climbs out of the mount reads the mount point only") {
    const fake_root root;
    make_v2(root, "/../../outside");
    root.write("/sys/outside/cpu.max", "100000 100000\n");  // /sys/fs/cgroup/../../outside
    root.write("/sys/fs/cgroup/cpu.max", "200000 100000\n");
    CHECK(root.limit() == 2);
  }
}

TEST_CASE("random bytes in every file: never a crash, never a limit of zero", "[cpu_budget]") {
  // Run under ASan+UBSan, this is what proves no content reaches undefined behaviour.
  std::mt19937 random(20261201);
  const char alphabet[] = "0123456789 :/-\n\\max,cpucgroup2";
  for (int round = 0; round < 200; ++round) {
    const fake_root root;
    const auto noise = [&](std::size_t length) {
      std::string text;
      for (std::size_t i = 0; i < length; ++i)
        text.push_back(random() % 4 == 0 ? static_cast<char>(random() % 256)
                                         : alphabet[random() % (sizeof alphabet - 1)]);
      return text;
    };
    root.write("/proc/self/cgroup", round % 2 == 0 ? "0::/a/b\n4:cpu:/a/b\n" : noise(random() % 80));
    root.write("/proc/self/mountinfo",
               round % 3 == 0 ? std::string(v2_mountinfo) + std::string(v1_mountinfo) : noise(random() % 300));
    for (const char* dir :
         {"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup/cpu,cpuacct/a/b", "/sys/fs/cgroup/cpu/a"}) {
      root.write(std::string(dir) + "/cpu.max", noise(random() % 30));
      root.write(std::string(dir) + "/cpu.cfs_quota_us", noise(random() % 12));
      root.write(std::string(dir) + "/cpu.cfs_period_us", noise(random() % 12));
    }
    CHECK(cpu_budget(4, root.path()) >= 1);
    CHECK(cpu_budget(4, root.path()) <= 4);
  }
}

TEST_CASE("this process's budget: within its affinity, read by a runtime once, overridable", "[cpu_budget]") {
  const geerpc::runtime rt;
  CHECK(rt.cpus() >= 1);
  CHECK(rt.cpus() <= geerpc::detail::affinity_cpus());
  CHECK(geerpc::runtime({.cpus = 64}).cpus() == 64);
}

}  // namespace cpu_budget_test
