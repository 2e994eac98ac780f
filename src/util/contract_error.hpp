#pragma once

#include <boost/json/value.hpp>

#include <stdexcept>
#include <string>

namespace schemagate::util {

// A failure as the external contract reports it: an HTTP status, a contract code (InvalidInput,
// AgentTimeout, ...), a message and optional details. Rooms that pass failures to each other
// without knowing each other (the gateway to the A2A face, say) share this one type.
class ContractError : public std::runtime_error {
 public:
  ContractError(int status, std::string code, std::string message,
                boost::json::value details = nullptr, int retry_after_seconds = 0)
      : std::runtime_error(std::move(message)),
        status_(status),
        code_(std::move(code)),
        details_(std::move(details)),
        retry_after_(retry_after_seconds) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }
  const boost::json::value& details() const { return details_; }
  int retry_after_seconds() const { return retry_after_; }

 private:
  int status_;
  std::string code_;
  boost::json::value details_;
  int retry_after_;
};

}  // namespace schemagate::util
