// A tenant's process for tests of attacks by an unprivileged workload (issue 37): `sh -c 'read
// x'` run as uid/gid 65534 through setpriv(1), with exactly the environment given, blocked on a
// pipe until the test closes it. Needs root and /usr/bin/setpriv (callers skip otherwise).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace tfdiag::test {

class TenantShell {
 public:
  // Starts the shell with `env` ("NAME=value" entries) and waits `settle_ms` for setpriv to exec
  // it (its environ is final then). pid() is -1 when the fork failed.
  explicit TenantShell(const std::vector<std::string>& env, int settle_ms = 300) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    std::vector<const char*> envp;
    for (const std::string& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[0], 0);
      const char* argv[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                            "--clear-groups",   "/bin/sh",       "-c",
                            "read x",           nullptr};
      execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
      _exit(127);
    }
    close(fds[0]);
    stdin_ = fds[1];
    ::usleep(settle_ms * 1000);
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
