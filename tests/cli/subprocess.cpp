// posix_spawn with three pipes, read with poll until the child closes its ends or the bound passes.
#include "subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <stdexcept>

extern char** environ;

namespace cli_test {
namespace {

struct pipe_pair {
  int read = -1, write = -1;
  pipe_pair() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    read = fds[0];
    write = fds[1];
  }
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

finished run_program(const std::string& program, const std::vector<std::string>& arguments,
                     const std::string& stdin_text, std::chrono::milliseconds bound) {
  pipe_pair in, out, err;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in.read, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out.write, 1);
  ::posix_spawn_file_actions_adddup2(&actions, err.write, 2);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto started = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  if (spawned != 0) throw std::runtime_error("posix_spawn failed for " + program);
  // The stdin text is small (a pipe holds 64 KiB): written whole, then closed for EOF.
  if (!stdin_text.empty()) (void)!::write(in.write, stdin_text.data(), stdin_text.size());
  close_fd(in.write);

  finished result;
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<int, 2> fds{out.read, err.read};
  const auto deadline = started + bound;
  while (fds[0] >= 0 || fds[1] >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    std::array<pollfd, 2> watched{{{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}}};
    if (::poll(watched.data(), watched.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < 2; ++i) {
      if (fds[i] < 0 || watched[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i], buffer, sizeof buffer);
      if (n > 0)
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      else
        close_fd(fds[i]);
    }
  }
  close_fd(fds[0]);
  close_fd(fds[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace cli_test
