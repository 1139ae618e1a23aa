// The driver of the cross-version test: runs one server program and one client program of the
// other version (store.cpp, built as v1 and v2) against each other over one transport.
//
//   evolution_driver <server program> <server version> <client program> <client version> <transport>
//
// It starts the server, reads the address line it prints once listening (no sleeps), runs the
// client against it, then closes the server's stdin and waits for it to exit. A process that
// outlives its bound is killed by its PID and fails the test. Exits 0 only if the client and the
// server both exit 0.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

// Starts `argv` with its stdin and stdout as given (-1: inherited); stderr is inherited.
pid_t start(const std::vector<std::string>& argv, int in, int out, const std::vector<int>& close_in_child) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    if (out >= 0) ::dup2(out, STDOUT_FILENO);
    for (int fd : close_in_child) ::close(fd);
    ::execv(args[0], args.data());
    std::perror("evolution driver: execv");
    ::_exit(127);
  }
  return pid;
}

// The exit status of `pid` if it exits within `limit`; otherwise it is killed (SIGKILL, by its PID),
// reaped, and nullopt returned. Waits on a pidfd, so no polling loop.
std::optional<int> wait_bounded(pid_t pid, std::chrono::milliseconds limit, const char* who) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    int ready;
    do ready = ::poll(&p, 1, static_cast<int>(limit.count()));
    while (ready < 0 && errno == EINTR);
    ::close(pidfd);
    if (ready == 0) {
      std::fprintf(stderr, "evolution driver: the %s (pid %d) has not exited within %lld ms: killing it\n", who,
                   static_cast<int>(pid), static_cast<long long>(limit.count()));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return std::nullopt;
    }
  } else {
    // No pidfd (a kernel before 5.3): check the child every 10 ms within the bound.
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "evolution driver: the %s (pid %d) has not exited in time: killing it\n", who,
                     static_cast<int>(pid));
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        return std::nullopt;
      }
      ::poll(nullptr, 0, 10);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The first line `fd` gives within `limit`, without its newline; nullopt on EOF or after the limit.
std::optional<std::string> read_line(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::string line;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char c;
    if (::read(fd, &c, 1) != 1) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: evolution_driver <server program> <server version> <client program> <client version> "
                 "<blocking|threaded>\n");
    return 2;
  }
  const std::string server_program = argv[1], server_version = argv[2], client_program = argv[3],
                    client_version = argv[4], transport = argv[5];
  ::signal(SIGPIPE, SIG_IGN);

  int to_server[2], from_server[2];
  if (::pipe2(to_server, O_CLOEXEC) != 0 || ::pipe2(from_server, O_CLOEXEC) != 0) {
    std::perror("evolution driver: pipe");
    return 1;
  }
  // dup2 clears O_CLOEXEC on the child's stdin and stdout; every other copy closes on exec.
  const pid_t server = start({server_program, "serve", transport}, to_server[0], from_server[1], {});
  ::close(to_server[0]);
  ::close(from_server[1]);
  if (server < 0) {
    std::perror("evolution driver: fork");
    return 1;
  }
  std::printf("evolution driver: v%s server (%s transport), pid %d\n", server_version.c_str(), transport.c_str(),
              static_cast<int>(server));

  bool ok = true;
  const std::optional<std::string> address = read_line(from_server[0], 10s);
  if (!address || address->empty()) {
    std::printf("evolution driver: FAIL the server printed no address line within 10 s\n");
    ok = false;
  } else {
    std::printf("evolution driver: the server listens on %s; v%s client\n", address->c_str(), client_version.c_str());
    std::fflush(stdout);
    const pid_t client =
        start({client_program, "call", *address, transport, "--peer-version", server_version}, -1, -1, {});
    const std::optional<int> client_status = client < 0 ? std::nullopt : wait_bounded(client, 30s, "client");
    if (client_status != 0) {
      std::printf("evolution driver: FAIL the client exited with %s\n",
                  client_status ? std::to_string(*client_status).c_str() : "no status (killed)");
      ok = false;
    }
  }

  ::close(to_server[1]);  // the server's stdin closes: it stops and exits
  const std::optional<int> server_status = wait_bounded(server, 10s, "server");
  ::close(from_server[0]);
  if (server_status != 0) {
    std::printf("evolution driver: FAIL the server exited with %s\n",
                server_status ? std::to_string(*server_status).c_str() : "no status (killed after 10 s)");
    ok = false;
  }
  std::printf("evolution driver: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
