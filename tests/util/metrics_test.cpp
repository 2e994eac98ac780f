#include "util/metrics.hpp"

#include <gtest/gtest.h>

#include <thread>

using schemagate::util::MetricsRegistry;

namespace {

TEST(Metrics, RendersCountersWithLabels) {
  MetricsRegistry m;
  auto& fam = m.counter("jobs_total", "Jobs done", {"kind"});
  fam.with({"a"}).inc();
  fam.with({"a"}).inc(2);
  fam.with({"b\"q"}).inc();
  const auto text = m.render_prometheus();
  EXPECT_NE(text.find("# HELP jobs_total Jobs done\n# TYPE jobs_total counter\n"),
            std::string::npos);
  EXPECT_NE(text.find("jobs_total{kind=\"a\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("jobs_total{kind=\"b\\\"q\"} 1\n"), std::string::npos) << text;
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  MetricsRegistry m;
  auto& h = m.histogram("latency_seconds", "Latency", {}, {0.1, 1}).with({});
  h.observe(0.05);
  h.observe(0.1);  // upper bounds are inclusive
  h.observe(0.5);
  h.observe(3);
  const auto text = m.render_prometheus();
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"0.1\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_sum 3.65\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_count 4\n"), std::string::npos) << text;
}

TEST(Metrics, CountsExactlyUnderContention) {
  MetricsRegistry m;
  auto& fam = m.counter("hits_total", "Hits", {"route"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i)
        fam.with({"/x"}).inc();
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(fam.with({"/x"}).value(), 40000);
}

TEST(Metrics, RejectsConflictingRegistrations) {
  MetricsRegistry m;
  m.counter("x_total", "X", {"a"});
  EXPECT_NO_THROW(m.counter("x_total", "X", {"a"}));
  EXPECT_THROW(m.counter("x_total", "X", {"b"}), std::logic_error);
  EXPECT_THROW(m.histogram("x_total", "X", {"a"}, {1}), std::logic_error);
  EXPECT_THROW(m.counter("x_total", "X", {"a"}).with({}), std::logic_error);
}

}  // namespace
