#pragma once

// The real `schemagate serve` in a child process, on a free loopback port.

#include "support/http_client.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace schemagate::testing {

inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("schemagate-e2e-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// SCHEMAGATE_TEST_E2E_POSTGRES_URL (a server URL, without a database) runs the end-to-end suite
// on PostgreSQL: each test directory gets a database of its own, created on first use and kept
// for the restarts that test does.
inline std::string database_for(const std::filesystem::path& dir) {
  const char* server = std::getenv("SCHEMAGATE_TEST_E2E_POSTGRES_URL");
  if (!server) return (dir / "schemagate.db").string();
  const std::string name =
      "e2e_" + std::to_string(std::hash<std::string>{}(dir.string()) % 1000000007);
  if (!std::filesystem::exists(dir / ".postgres")) {
    run_command({"/usr/bin/psql", std::string(server) + "/postgres", "-q", "-c",
                 "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "-c",
                 "CREATE DATABASE " + name});
    std::ofstream(dir / ".postgres") << name;
  }
  return std::string(server) + "/" + name;
}

inline bool on_postgres() {
  return std::getenv("SCHEMAGATE_TEST_E2E_POSTGRES_URL") != nullptr;
}

// A running server and the port it bound.
struct Server {
  std::unique_ptr<Process> process;
  unsigned short port = 0;

  explicit Server(const std::filesystem::path& dir, std::vector<std::string> extra_args = {},
                  std::map<std::string, std::string> env = {}) {
    using namespace std::chrono_literals;
    std::vector<std::string> argv{SCHEMAGATE_BINARY, "serve",     "--listen", "127.0.0.1:0", "--db",
                                  database_for(dir), "--threads", "2"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process = std::make_unique<Process>(argv, env);
    if (!process->wait_for_stderr("schemagate listening on", 20s)) {
      ADD_FAILURE() << "server did not start:\n" << process->stderr_text();
      return;
    }
    std::smatch m;
    const std::string err = process->stderr_text();
    if (std::regex_search(err, m, std::regex(R"(schemagate listening on https?://[^:]+:(\d+))"))) {
      port = static_cast<unsigned short>(std::stoi(m[1]));
    }
  }
};

inline boost::json::value body_json(const HttpResponse& r) {
  return boost::json::parse(r.body);
}

inline std::string error_code(const HttpResponse& r) {
  return std::string(body_json(r).at("error").at("code").as_string());
}

inline std::string error_message(const HttpResponse& r) {
  return std::string(body_json(r).at("error").at("message").as_string());
}

}  // namespace schemagate::testing
