#pragma once

#include "a2a/agent_card.hpp"
#include "a2a/task_store.hpp"
#include "a2a/wire.hpp"

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace schemagate::registry {
class RegistryService;
struct Caller;
}  // namespace schemagate::registry
namespace schemagate::jsonschema {
class Schema;
}

namespace schemagate::a2a {

// One StreamResponse after another ({"task"}, {"statusUpdate"}, {"artifactUpdate"},
// {"message"}); next() may block on the agent. False once the stream is over.
class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual bool next(boost::json::object& stream_response) = 0;
};

// How tasks reach agents: through the gateway, which the server wires in. Failures are thrown
// as util::ContractError (the gateway's errors, with their status and contract code).
struct Invoker {
  // A registry operation with a JSON input (validation, defaults, `other`, forwarding, output
  // validation): the agent's validated output.
  std::function<boost::json::value(const std::string& agent, const std::string& operation,
                                   const boost::json::value& input, const registry::Caller& caller)>
      invoke;
  // A v1.0 SendMessageRequest forwarded to an agent that speaks A2A: its v1.0
  // SendMessageResponse ({"task"} or {"message"}).
  std::function<boost::json::object(const std::string& agent, const boost::json::object& request,
                                    const registry::Caller& caller)>
      forward;
  // The same, as SendStreamingMessage: the agent's StreamResponses (v1.0 shapes) as they come;
  // next() throws util::ContractError when the agent fails midway.
  std::function<std::unique_ptr<EventSource>(
      const std::string& agent, const boost::json::object& request, const registry::Caller& caller)>
      stream;
};

struct A2AOptions {
  std::chrono::milliseconds task_retention{std::chrono::hours(24 * 7)};
  std::size_t max_history = 100;    // messages kept in a task's history
  unsigned background_workers = 4;  // run tasks sent with returnImmediately
  // Open SubscribeToTask streams: each holds a handler thread while it waits for changes.
  unsigned max_subscriptions = 8;
};

// The A2A face of every registered agent (seeds 001, 002; A2A v1.0 §3): SendMessage runs the
// seed 001 request flow and the seed 002 named fields, then invokes through the gateway; tasks
// are stored. Every method takes and returns v1.0 shapes; throws A2AError, and
// registry::RegistryError when the agent is unknown or not visible to the caller.
class A2AService {
 public:
  A2AService(registry::RegistryService& registry, store::Store& store, const util::Clock& clock,
             Invoker invoker, std::function<boost::json::value(const std::string&)> scenario_schema,
             A2AOptions options = {});
  ~A2AService();

  struct Card {
    boost::json::object body;
    std::int64_t updated_at_ms = 0;
    bool is_public = true;
  };
  Card card(std::string_view agent, const registry::Caller& caller, const CardContext& context,
            WireVersion version);

  // SendMessage: {"task": ...}, once the task has ended (or at once, still running, when the
  // configuration says returnImmediately; 0.3: blocking false).
  boost::json::object send_message(std::string_view agent, const boost::json::value& params,
                                   const registry::Caller& caller);
  // SendStreamingMessage: request errors are thrown here, before any event.
  std::unique_ptr<EventSource> stream_message(std::string_view agent,
                                              const boost::json::value& params,
                                              const registry::Caller& caller);
  boost::json::object get_task(std::string_view agent, const boost::json::value& params,
                               const registry::Caller& caller);
  boost::json::object list_tasks(std::string_view agent, const boost::json::value& params,
                                 const registry::Caller& caller);
  boost::json::object cancel_task(std::string_view agent, const boost::json::value& params,
                                  const registry::Caller& caller);
  std::unique_ptr<EventSource> subscribe(std::string_view agent, const boost::json::value& params,
                                         const registry::Caller& caller);

  struct Prepared;

 private:
  std::shared_ptr<Prepared> prepare(std::string_view agent, const boost::json::value& params,
                                    const registry::Caller& caller);
  void start(Prepared& p);
  // Runs the prepared task to its end; `emit` sees every event after the first Task.
  void execute(Prepared& p, const std::function<void(boost::json::object)>& emit);
  // One event of a fronted agent's stream, checked and re-addressed to our task; false once
  // the task has ended (and is stored).
  bool relay(Prepared& p, EventSource& upstream, boost::json::array& artifacts,
             const std::function<void(boost::json::object)>& emit);
  static boost::json::object upstream_request(const Prepared& p);
  // Stores the task's final state (a cancel that came meanwhile stands) and emits it.
  void finish(Prepared& p, boost::json::array artifacts, boost::json::object status,
              const std::function<void(boost::json::object)>& emit);
  StoredTask owned_task(std::string_view agent, const boost::json::value& params,
                        const registry::Caller& caller, const char* method);
  std::shared_ptr<const jsonschema::Schema> compiled(const std::string& key,
                                                     const boost::json::value& schema);
  void check_output(const AgentProfile& profile, const Skill* skill,
                    const boost::json::object& task, const std::string& cache_key);

  registry::RegistryService& registry_;
  const util::Clock& clock_;
  Invoker invoker_;
  std::function<boost::json::value(const std::string&)> scenario_schema_;
  A2AOptions options_;
  TaskStore tasks_;
  std::mutex schemas_mu_;
  std::map<std::string, std::shared_ptr<const jsonschema::Schema>> schemas_;
  // Tasks sent with returnImmediately run here; the destructor lets the queue drain.
  void run_in_background(std::function<void()> job);
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  std::shared_ptr<std::atomic<unsigned>> subscriptions_ =
      std::make_shared<std::atomic<unsigned>>(0);
};

}  // namespace schemagate::a2a
