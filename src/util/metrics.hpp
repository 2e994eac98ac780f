#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace schemagate::util {

// Label values in the order the family declared its label names.
using LabelValues = std::vector<std::string>;

class Counter {
 public:
  void inc(double by = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  // Cumulative counts per bucket (the last one is +Inf), the sum and the count.
  struct Snapshot {
    std::vector<std::uint64_t> cumulative;
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;
  const std::vector<double>& upper_bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// Process-wide metrics rendered in the Prometheus text exposition format (version 0.0.4).
class MetricsRegistry {
 public:
  // Registering the same family twice returns the same one; a family name is a promise about
  // its type and labels, so a conflicting re-registration throws std::logic_error.
  class CounterFamily;
  class HistogramFamily;

  CounterFamily& counter(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names);
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             std::vector<std::string> label_names, std::vector<double> bounds);

  std::string render_prometheus() const;

  class CounterFamily {
   public:
    Counter& with(const LabelValues& values);

   private:
    friend class MetricsRegistry;
    std::string name_, help_;
    std::vector<std::string> label_names_;
    mutable std::mutex mu_;
    std::map<LabelValues, std::unique_ptr<Counter>> children_;
  };

  class HistogramFamily {
   public:
    Histogram& with(const LabelValues& values);

   private:
    friend class MetricsRegistry;
    std::string name_, help_;
    std::vector<std::string> label_names_;
    std::vector<double> bounds_;
    mutable std::mutex mu_;
    std::map<LabelValues, std::unique_ptr<Histogram>> children_;
  };

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<CounterFamily>> counters_;
  std::map<std::string, std::unique_ptr<HistogramFamily>> histograms_;
};

}  // namespace schemagate::util
