#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace schemagate::testing {

struct Process::Impl {
  mutable std::mutex mu;
  std::string out, err;
  std::thread out_reader, err_reader;
  std::optional<int> status;
};

namespace {
void drain(int fd, std::string& into, std::mutex& mu) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    std::lock_guard lock(mu);
    into.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
}

int decode_status(int raw) {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return -1;
}
}  // namespace

Process::Process(std::vector<std::string> argv, std::map<std::string, std::string> extra_env)
    : impl_(new Impl) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (extra_env.count(kv.substr(0, eq)) == 0) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : extra_env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  impl_->out_reader = std::thread(drain, out_pipe[0], std::ref(impl_->out), std::ref(impl_->mu));
  impl_->err_reader = std::thread(drain, err_pipe[0], std::ref(impl_->err), std::ref(impl_->mu));
}

Process::~Process() {
  if (!impl_->status) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
  if (impl_->out_reader.joinable()) impl_->out_reader.join();
  if (impl_->err_reader.joinable()) impl_->err_reader.join();
  delete impl_;
}

void Process::signal(int sig) {
  ::kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  if (impl_->status) return impl_->status;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
    if (r == pid_) {
      impl_->status = decode_status(raw);
      if (impl_->out_reader.joinable()) impl_->out_reader.join();
      if (impl_->err_reader.joinable()) impl_->err_reader.join();
      return impl_->status;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string Process::stdout_text() const {
  std::lock_guard lock(impl_->mu);
  return impl_->out;
}

std::string Process::stderr_text() const {
  std::lock_guard lock(impl_->mu);
  return impl_->err;
}

bool Process::wait_for_stderr(const std::string& needle, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stderr_text().find(needle) != std::string::npos) return true;
    int raw = 0;
    if (::waitpid(pid_, &raw, WNOHANG) == pid_) {
      impl_->status = decode_status(raw);
      return stderr_text().find(needle) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool Process::wait_for_stdout(const std::string& needle, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stdout_text().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return stdout_text().find(needle) != std::string::npos;
}

Completed run_command(std::vector<std::string> argv) {
  Process p(std::move(argv));
  const auto status = p.wait(std::chrono::seconds(120));
  if (!status) throw std::runtime_error("command timed out");
  return Completed{*status, p.stdout_text(), p.stderr_text()};
}

}  // namespace schemagate::testing
