// An etcd server of the test's own: started on two free loopback ports with a fresh data directory,
// stopped (or killed) by its PID, and restarted on the same client URL, with its data or without.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <geerpc/etcd.hpp>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace test {

#ifndef GEERPC_TEST_ETCD_BINARY
#define GEERPC_TEST_ETCD_BINARY "etcd"
#endif

// A port no one listens on now (the kernel's pick; etcd's gateway cannot take port 0 itself).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// How an etcd is started beyond the plain default: its client URL's scheme, flags of its own (TLS
// files, auth token settings), and the TLS settings its clients (the readiness probe included) use.
struct etcd_launch {
  std::string scheme = "http";
  std::vector<std::string> flags{};
  geerpc::etcd::tls_options tls{};
};

class etcd_process {
 public:
  explicit etcd_process(etcd_launch how = {}) : how_(std::move(how)) {
    std::string pattern = (std::filesystem::temp_directory_path() / "geerpc-etcd-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) {
      client_port_ = free_loopback_port();
      peer_port_ = free_loopback_port();
      if (!launch()) stop();
    }
    if (pid_ <= 0) throw std::runtime_error("etcd did not start: " + log_tail());
  }
  etcd_process(const etcd_process&) = delete;
  etcd_process& operator=(const etcd_process&) = delete;
  ~etcd_process() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string endpoint() const { return how_.scheme + "://127.0.0.1:" + std::to_string(client_port_); }
  int client_port() const { return client_port_; }
  geerpc::etcd::options options() const {
    return {.endpoints = {endpoint()}, .request_timeout = std::chrono::milliseconds(500), .tls = how_.tls};
  }

  // SIGTERM, then SIGKILL if it has not ended within 5 s; waits for it.
  void stop() { end(SIGTERM); }
  void kill() { end(SIGKILL); }

  // Starts again on the same client URL, with the data it had or (keep_data false) none.
  void restart(bool keep_data) {
    stop();
    if (!keep_data) {
      std::filesystem::remove_all(dir_ / "data");
      ++generation_;
    }
    if (!launch()) throw std::runtime_error("etcd did not restart: " + log_tail());
  }

 private:
  // The end of etcd's log, for a failure's message (the directory goes with this object).
  std::string log_tail() const {
    std::ifstream log(dir_ / "etcd.stderr");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  bool launch() {
    const std::string client = endpoint();
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
    const std::string name = "geerpc-test";
    std::vector<std::string> args{GEERPC_TEST_ETCD_BINARY,
                                  "--name=" + name,
                                  "--data-dir=" + (dir_ / "data").string(),
                                  "--listen-client-urls=" + client,
                                  "--advertise-client-urls=" + client,
                                  "--listen-peer-urls=" + peer,
                                  "--initial-advertise-peer-urls=" + peer,
                                  "--initial-cluster=" + name + "=" + peer,
                                  "--initial-cluster-token=geerpc-test-" + std::to_string(generation_),
                                  "--logger=zap"};
    args.insert(args.end(), how_.flags.begin(), how_.flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, (dir_ / "etcd.stderr").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) throw std::runtime_error("cannot run " + std::string(argv[0]));
    pid_ = pid;
    // Ready when a range answers; bounded (etcd starts in about a second on this kind of machine).
    geerpc::etcd::gateway probe(options());
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;  // it exited: a port taken meanwhile, most likely
      }
      try {
        probe.range("/");
        return true;
      } catch (const geerpc::etcd::error&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a process's readiness
      }
    }
    return false;
  }

  void end(int signal) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // waiting for a process to exit
    }
    pid_ = -1;
  }

  etcd_launch how_;
  std::filesystem::path dir_;
  int client_port_ = 0;
  int peer_port_ = 0;
  int generation_ = 0;
  pid_t pid_ = -1;
};

}  // namespace test
