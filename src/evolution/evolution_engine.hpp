#pragma once

#include "evolution/inducer.hpp"

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace schemagate::store {
class Store;
}
namespace schemagate::util {
class Clock;
}
namespace schemagate::embed {
class Embedder;
}
namespace schemagate::exchange {
class ExchangeService;
}
namespace schemagate::llm {
class ChatModel;
}

namespace schemagate::evolution {

// Every default is a number seed 000 §6.2 names.
struct EvolutionOptions {
  // Cosine similarity to join a cluster. Unset: 0.85 (the seed's figure, for sentence
  // embeddings), or the calibrated 0.70 for the offline word-vector embedder (bench/evolution_
  // clusters.sh measures it on MetaTool).
  std::optional<double> similarity_threshold;
  double heat_increment = 10;
  double heat_threshold = 50;
  std::chrono::hours heat_half_life{24};
  std::size_t min_distinct_clients = 5;
  std::size_t min_occurrences = 10;
  std::chrono::hours occurrence_window{24 * 7};
  std::size_t max_experimental_keys = 10;  // the convergence guard, per scenario
  // A cluster whose occurrences come this much from one client (and that has fewer distinct
  // clients than min_distinct_clients) becomes a patch for that client only.
  double personal_share = 0.8;
  std::size_t samples_kept = 20;  // fragments kept per cluster for induction and display
  // Cohort pools (§6.2.1): with a separator, a client "acme:bot-7" belongs to cohort "acme";
  // each cohort's fragments cluster apart and its triggers patch that cohort only. Empty: one
  // pool per scenario.
  std::string cohort_separator;
  // Intent induction by a chat model; null (or a failing model) uses the offline inducer.
  llm::ChatModel* chat_model = nullptr;

  // §6.2.3 long-term evaluation.
  std::chrono::hours trial{24 * 7};
  std::chrono::hours observation_window{24 * 30};
  std::chrono::hours deprecation_grace{24 * 14};
  std::chrono::hours withdrawn_acceptance{24 * 30};
  double promote_usage = 0.15, promote_alignment = 0.80, promote_type = 0.90;
  double deprecate_usage = 0.05, deprecate_alignment = 0.60, deprecate_type = 0.70;
};

// Every threshold by name, from a JSON object (--evolution-settings FILE): similarity_threshold,
// heat_increment, heat_threshold, heat_half_life_hours, min_distinct_clients, min_occurrences,
// occurrence_window_days, max_experimental_keys, personal_share, trial_days,
// observation_window_days, deprecation_grace_days, withdrawn_acceptance_days, promote_usage,
// promote_alignment, promote_type, deprecate_usage, deprecate_alignment, deprecate_type.
// Throws std::invalid_argument naming an unknown setting or a bad value.
EvolutionOptions with_settings(EvolutionOptions options, const boost::json::value& settings);

// The similarity threshold an embedder's vectors are calibrated to (EvolutionOptions).
double default_threshold(const std::string& model);

// Seed 000 §6.2.1-6.2.2: the differential semantic pool of each scenario (the `other` fragments
// the exchange records, embedded and clustered, with decaying heat) and the triggers that turn a
// mature cluster into an experimental key. State lives in the store; step() runs off the request
// path (a background thread in the server, or a simulation's loop on the injected clock).
class EvolutionEngine {
 public:
  EvolutionEngine(store::Store& store, const util::Clock& clock,
                  exchange::ExchangeService& exchange, embed::Embedder& embedder,
                  EvolutionOptions options = {});
  ~EvolutionEngine();

  // What happened, in order: {"at", "scenario", "event", ...} with event one of cluster_started,
  // triggered, patched, refined, queued, awaiting_approval, unresolved.
  using Timeline = std::vector<boost::json::object>;
  // Reads every scenario's new fragments, clusters them, fires triggers. Returns the events.
  Timeline step();

  // GET /scenarios/{s}/evolution: pools (clusters with heat now), candidates awaiting approval
  // and queued triggers.
  boost::json::object state(const std::string& scenario);

  // The audit API (§6.2.3 semantic_alignment_accuracy): a person's verdict on whether values
  // sent for an experimental key matched what the client meant.
  boost::json::object record_verdict(const std::string& scenario, const std::string& key_name,
                                     bool correct);

  // An admin's decision on a candidate waiting for approval (security-relevant keys, §7).
  boost::json::object decide(const std::string& scenario, const std::string& cluster_id,
                             bool approve);

  // Runs step() every `period` on a thread of its own until stop() (or destruction).
  void start(std::chrono::milliseconds period);
  void stop();

 private:
  struct Cluster;
  std::vector<Cluster>& pool(const std::string& scenario);
  void ingest(const std::string& scenario, Timeline& out);
  void fire(const std::string& scenario, Cluster& c, std::int64_t at_ms, Timeline& out);
  // Packages a candidate key (its new_keys entry) as a patch, or merges it into the key it
  // collides with, or queues it behind the convergence guard.
  void publish(const std::string& scenario, Cluster& c, const boost::json::object& key,
               std::int64_t at_ms, Timeline& out);
  std::size_t experimental_keys(const std::string& scenario);
  void save(const std::string& scenario, const Cluster& c);
  void record_usage();
  void evaluate(const std::string& scenario, Timeline& out);
  boost::json::object metrics(const std::string& scenario, const boost::json::object& key,
                              std::int64_t now_ms);
  double heat_at(const Cluster& c, std::int64_t at_ms) const;

  store::Store& store_;
  const util::Clock& clock_;
  exchange::ExchangeService& exchange_;
  embed::Embedder& embedder_;
  EvolutionOptions options_;
  double threshold_;
  std::mutex mu_;  // one step at a time; state() reads under it too
  std::map<std::string, std::vector<Cluster>> pools_;
  std::thread worker_;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace schemagate::evolution
