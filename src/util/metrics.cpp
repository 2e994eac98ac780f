#include "util/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace schemagate::util {

void Counter::inc(double by) {
  double cur = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(cur, cur + by, std::memory_order_relaxed)) {
  }
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  const auto idx = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                                            bounds_.begin());
  std::lock_guard lock(mu_);
  ++counts_[idx];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  std::lock_guard lock(mu_);
  Snapshot s;
  s.cumulative.resize(counts_.size());
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    running += counts_[i];
    s.cumulative[i] = running;
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

namespace {

void check_labels(const std::vector<std::string>& names, const LabelValues& values,
                  const std::string& family) {
  if (names.size() != values.size()) {
    throw std::logic_error("metric " + family + " expects " + std::to_string(names.size()) +
                           " label values, got " + std::to_string(values.size()));
  }
}

std::string escape_label(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  return std::string(buf, res.ptr);
}

std::string label_block(const std::vector<std::string>& names, const LabelValues& values,
                        const std::string& extra = {}) {
  if (names.empty() && extra.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i] + "=\"" + escape_label(values[i]) + "\"";
  }
  if (!extra.empty()) {
    if (!names.empty()) out += ',';
    out += extra;
  }
  out += '}';
  return out;
}

}  // namespace

Counter& MetricsRegistry::CounterFamily::with(const LabelValues& values) {
  check_labels(label_names_, values, name_);
  std::lock_guard lock(mu_);
  auto& slot = children_[values];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Histogram& MetricsRegistry::HistogramFamily::with(const LabelValues& values) {
  check_labels(label_names_, values, name_);
  std::lock_guard lock(mu_);
  auto& slot = children_[values];
  if (!slot) slot = std::make_unique<Histogram>(bounds_);
  return *slot;
}

MetricsRegistry::CounterFamily& MetricsRegistry::counter(const std::string& name,
                                                         const std::string& help,
                                                         std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  if (histograms_.count(name)) throw std::logic_error("metric " + name + " is a histogram");
  auto& slot = counters_[name];
  if (!slot) {
    slot = std::make_unique<CounterFamily>();
    slot->name_ = name;
    slot->help_ = help;
    slot->label_names_ = std::move(label_names);
  } else if (slot->label_names_ != label_names) {
    throw std::logic_error("metric " + name + " registered with other labels");
  }
  return *slot;
}

MetricsRegistry::HistogramFamily& MetricsRegistry::histogram(const std::string& name,
                                                             const std::string& help,
                                                             std::vector<std::string> label_names,
                                                             std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  if (counters_.count(name)) throw std::logic_error("metric " + name + " is a counter");
  std::sort(bounds.begin(), bounds.end());
  auto& slot = histograms_[name];
  if (!slot) {
    slot = std::make_unique<HistogramFamily>();
    slot->name_ = name;
    slot->help_ = help;
    slot->label_names_ = std::move(label_names);
    slot->bounds_ = std::move(bounds);
  } else if (slot->label_names_ != label_names || slot->bounds_ != bounds) {
    throw std::logic_error("metric " + name + " registered with other labels or buckets");
  }
  return *slot;
}

std::string MetricsRegistry::render_prometheus() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, fam] : counters_) {
    out += "# HELP " + name + ' ' + fam->help_ + "\n# TYPE " + name + " counter\n";
    std::lock_guard fl(fam->mu_);
    for (const auto& [labels, c] : fam->children_) {
      out += name + label_block(fam->label_names_, labels) + ' ' + format_value(c->value()) + '\n';
    }
  }
  for (const auto& [name, fam] : histograms_) {
    out += "# HELP " + name + ' ' + fam->help_ + "\n# TYPE " + name + " histogram\n";
    std::lock_guard fl(fam->mu_);
    for (const auto& [labels, h] : fam->children_) {
      const auto snap = h->snapshot();
      const auto& bounds = h->upper_bounds();
      for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
        const std::string le = i < bounds.size() ? format_value(bounds[i]) : "+Inf";
        out += name + "_bucket" + label_block(fam->label_names_, labels, "le=\"" + le + "\"") +
               ' ' + std::to_string(snap.cumulative[i]) + '\n';
      }
      out += name + "_sum" + label_block(fam->label_names_, labels) + ' ' + format_value(snap.sum) +
             '\n';
      out += name + "_count" + label_block(fam->label_names_, labels) + ' ' +
             std::to_string(snap.count) + '\n';
    }
  }
  return out;
}

}  // namespace schemagate::util
