#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schemagate::testing {

// A child process with its stdout and stderr captured through pipes (drained by a thread so
// the child never blocks on a full pipe).
class Process {
 public:
  Process(std::vector<std::string> argv, std::map<std::string, std::string> extra_env = {});
  ~Process();  // kills with SIGKILL if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int pid() const { return pid_; }
  void signal(int sig);
  // Waits for exit and returns the exit status (128+N when killed by signal N), or nullopt on
  // timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);

  std::string stdout_text() const;
  std::string stderr_text() const;
  // Waits until stderr contains `needle`; returns false on timeout or exit.
  bool wait_for_stderr(const std::string& needle, std::chrono::milliseconds timeout) const;
  bool wait_for_stdout(const std::string& needle, std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  Impl* impl_;
  int pid_ = -1;
};

// Runs a command to completion (standard input is /dev/null).
struct Completed {
  int status;
  std::string out;
  std::string err;
};
Completed run_command(std::vector<std::string> argv);

}  // namespace schemagate::testing
