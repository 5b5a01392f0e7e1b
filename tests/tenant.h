// A tenant's process for tests of attacks by an unprivileged workload (issue 37): `sh -c '...;
// read x'` run as uid/gid 65534 through setpriv(1), with exactly the environment given, blocked on
// a pipe until the test closes it. Needs root and /usr/bin/setpriv (callers skip otherwise).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace tfdiag::test {

class TenantShell {
 public:
  // Starts the shell with `env` and returns once it runs (it says so on a pipe before it
  // blocks, so setpriv's exec of it is over and its environ is final; at most 10 s). pid() is
  // -1 when the fork failed or the shell did not start.
  explicit TenantShell(const std::vector<std::string>& env) {
    int fds[2], ready[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    if (pipe2(ready, O_CLOEXEC) != 0) {
      close(fds[0]), close(fds[1]);
      return;
    }
    std::vector<const char*> envp;
    for (const std::string& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[0], 0);
      dup2(ready[1], 1);
      const char* argv[] = {"/usr/bin/setpriv",       "--reuid=65534", "--regid=65534",
                            "--clear-groups",         "/bin/sh",       "-c",
                            "echo; exec >&-; read x", nullptr};
      execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
      _exit(127);
    }
    close(fds[0]);
    close(ready[1]);
    stdin_ = fds[1];
    pollfd p{ready[0], POLLIN, 0};
    char c = 0;
    const bool started = pid_ > 0 && poll(&p, 1, 10000) == 1 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (!started && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  ~TenantShell() {
    if (stdin_ >= 0) close(stdin_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  TenantShell(const TenantShell&) = delete;
  TenantShell& operator=(const TenantShell&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
};

}  // namespace tfdiag::test
