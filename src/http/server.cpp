#include "http/server.hpp"

#include "http/outbound.hpp"

#include "util/clock.hpp"
#include "util/contract_error.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

namespace schemagate::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// One accepted connection, as seen by shutdown: it may be closed at once only while it waits
// for the first byte of its next request.
struct Connection {
  asio::any_io_executor executor;
  std::size_t context = 0;       // which of the server's io_contexts runs it
  bool idle = false;             // touched only on executor
  bool alive = true;             // touched only on executor
  std::function<void()> cancel;  // closes the socket; valid while alive
};

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view q) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    const auto amp = q.find('&');
    const auto part = q.substr(0, amp);
    if (!part.empty()) {
      const auto eq = part.find('=');
      out.emplace_back(
          percent_decode(part.substr(0, eq), true),
          eq == std::string_view::npos ? std::string() : percent_decode(part.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

// The strand of the connection whose fast path is running on this thread, if any: an outbound
// call made from there runs on the same strand, so the whole exchange stays on one thread
// instead of waking another for each step.
thread_local const asio::any_io_executor* current_connection_executor = nullptr;

// A connection's time limit. Beast's tcp_stream arms and cancels a timer around every read and
// write; here one timer per connection fires when the limit it was armed for passes, and
// re-arms itself when the limit has moved on since, so moving the limit is a store. Expiry
// cancels the socket's operations, which then end with operation_aborted.
class Deadline : public std::enable_shared_from_this<Deadline> {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline(const asio::any_io_executor& executor, tcp::socket& socket)
      : timer_(executor), socket_(&socket) {}

  void expires_after(Clock::duration limit) { expires_at(Clock::now() + limit); }
  void expires_at(Clock::time_point at) {
    at_ = at;
    paused_ = false;
    expired_ = false;  // an expiry that fell between operations cancelled nothing
    if (!armed_ || at_ < armed_at_) arm(at_);
  }
  // No limit until the next expires_*: while a handler runs, or a pooled connection waits.
  void pause() { paused_ = true; }
  bool expired() const { return expired_; }
  // The socket is going away: the timer must not touch it any more.
  void detach() {
    socket_ = nullptr;
    timer_.cancel();
  }

 private:
  void arm(Clock::time_point at) {
    armed_ = true;
    armed_at_ = at;
    const auto generation = ++generation_;
    timer_.expires_at(at);
    timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
      if (ec || generation != self->generation_ || !self->socket_) return;
      self->armed_ = false;
      if (self->paused_) return;  // the next expires_* arms it again
      if (Clock::now() < self->at_) {
        self->arm(self->at_);
        return;
      }
      self->expired_ = true;
      boost::system::error_code ignored;
      self->socket_->cancel(ignored);
    });
  }

  asio::steady_timer timer_;
  tcp::socket* socket_;
  Clock::time_point at_{}, armed_at_{};
  std::uint64_t generation_ = 0;
  bool armed_ = false, paused_ = false, expired_ = false;
};

// Reads into `buffer` and feeds `parser` until the header (or the whole message) is in: what
// Beast's read operations do, without their layers of composed operations per read.
template <class Parser>
asio::awaitable<boost::system::error_code> read_message(tcp::socket& socket,
                                                        beast::flat_buffer& buffer, Parser& parser,
                                                        bool header_only) {
  boost::system::error_code ec;
  for (;;) {
    if (header_only ? parser.is_header_done() : parser.is_done()) co_return ec;
    if (buffer.size() > 0) {
      const auto used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (!ec && used > 0) continue;
      if (ec && ec != bhttp::error::need_more) co_return ec;
      ec = {};
    }
    const auto size = beast::read_size(buffer, 65536);
    if (size == 0) co_return bhttp::error::buffer_overflow;
    auto [rec, n] = co_await socket.async_read_some(buffer.prepare(size), kTuple);
    if (rec == asio::error::eof) {
      if (!parser.got_some()) co_return bhttp::error::end_of_stream;
      parser.put_eof(ec);  // a body that runs to the end of the connection ends here
      if (ec) co_return ec;
      continue;
    }
    if (rec) co_return rec;
    buffer.commit(n);
  }
}

// Sends what fits into the socket's buffer at once (the usual case: then the caller goes on
// without a round through the scheduler) and the rest asynchronously.
asio::awaitable<boost::system::error_code> send_all(
    tcp::socket& socket, const std::array<asio::const_buffer, 2>& buffers) {
  boost::system::error_code ec;
  if (!socket.non_blocking()) socket.non_blocking(true, ec);
  const std::size_t sent = ec ? 0 : socket.send(buffers, 0, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) ec = {};
  if (ec || sent == asio::buffer_size(buffers)) co_return ec;
  beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(buffers);
  rest.consume(sent);
  auto [wec, n] = co_await asio::async_write(socket, rest, kTuple);
  co_return wec;
}

// How a session reads and writes. In the clear: straight on the socket, with a Deadline.
class PlainTransport {
 public:
  explicit PlainTransport(tcp::socket& socket)
      : socket_(socket), deadline_(std::make_shared<Deadline>(socket.get_executor(), socket)) {}
  ~PlainTransport() { deadline_->detach(); }
  PlainTransport(const PlainTransport&) = delete;
  PlainTransport& operator=(const PlainTransport&) = delete;

  tcp::socket& stream() { return socket_; }
  void limit(std::chrono::milliseconds d) { deadline_->expires_after(d); }
  void unlimit() { deadline_->pause(); }
  void cancel() {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  }
  // Hand back the read's and the send's own coroutines: no frame of a forwarding one per call.
  template <class Parser>
  asio::awaitable<boost::system::error_code> read(beast::flat_buffer& buffer, Parser& parser,
                                                  bool header_only) {
    return read_message(socket_, buffer, parser, header_only);
  }
  asio::awaitable<boost::system::error_code> write(
      const std::array<asio::const_buffer, 2>& buffers) {
    return send_all(socket_, buffers);
  }

 private:
  tcp::socket& socket_;
  std::shared_ptr<Deadline> deadline_;
};

// Over TLS: through Beast's streams, which keep their own timers.
class TlsTransport {
 public:
  using Stream = beast::ssl_stream<beast::tcp_stream>;
  explicit TlsTransport(Stream& stream) : stream_(stream) {}

  Stream& stream() { return stream_; }
  void limit(std::chrono::milliseconds d) { beast::get_lowest_layer(stream_).expires_after(d); }
  void unlimit() {}
  void cancel() { beast::get_lowest_layer(stream_).cancel(); }
  template <class Parser>
  asio::awaitable<boost::system::error_code> read(beast::flat_buffer& buffer, Parser& parser,
                                                  bool header_only) {
    auto [ec, n] = header_only ? co_await bhttp::async_read_header(stream_, buffer, parser, kTuple)
                               : co_await bhttp::async_read(stream_, buffer, parser, kTuple);
    co_return ec;
  }
  asio::awaitable<boost::system::error_code> write(
      const std::array<asio::const_buffer, 2>& buffers) {
    auto [ec, n] = co_await asio::async_write(stream_, buffers, kTuple);
    co_return ec;
  }

 private:
  Stream& stream_;
};

// Keep-alive connections to other servers. Each of the server's io_contexts keeps its own: a
// socket is watched by the context it was opened on, so a connection handed to a request on
// another context would wake that other thread at every step.
class AsyncClientImpl final : public AsyncClient {
 public:
  explicit AsyncClientImpl(const std::vector<std::unique_ptr<asio::io_context>>& contexts)
      : ioc_(*contexts.front()) {
    for (const auto& c : contexts)
      per_context_.push_back(std::make_unique<PerContext>(*c));
  }

  void request(std::string method, std::string url, std::string body, std::vector<Header> headers,
               std::chrono::milliseconds timeout, Callback done) override {
    const auto executor = current_connection_executor
                              ? *current_connection_executor
                              : asio::any_io_executor(asio::make_strand(ioc_));
    PerContext& own = context_of(executor);
    outbound::Target target;
    try {
      target = own.target_of(url);
    } catch (...) {
      done(ClientResponse{}, std::current_exception());
      return;
    }
    // The request head is written by hand (as for responses); the body goes out as it is.
    std::string head;
    head.reserve(256);
    head.append(method).append(" ").append(target.path).append(" HTTP/1.1\r\n");
    outbound::append_header(head, "Host", target.host);
    head += "User-Agent: schemagate\r\n";
    for (const auto& h : headers)
      outbound::append_header(head, h.name, h.value);
    outbound::append_trace(head, headers);
    head += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    auto req =
        std::make_shared<std::pair<std::string, std::string>>(std::move(head), std::move(body));
    asio::co_spawn(executor, exchange(own, std::move(target), req, timeout),
                   [done = std::move(done)](std::exception_ptr e, ClientResponse r) {
                     done(std::move(r), e);
                   });
  }

  // At shutdown: pooled connections are closed (each on its own context's thread) and no more
  // are kept, so that no connection's timer holds a context running.
  void close_idle(const std::vector<std::unique_ptr<asio::io_context>>& contexts) {
    closing_ = true;
    for (std::size_t i = 0; i < contexts.size() && i < per_context_.size(); ++i) {
      asio::post(*contexts[i], [own = per_context_[i].get()] { own->idle.clear(); });
    }
  }

 private:
  // An open connection to an agent, kept between exchanges with its read buffer.
  struct Outbound {
    explicit Outbound(const asio::any_io_executor& ex)
        : socket(ex), deadline(std::make_shared<Deadline>(ex, socket)) {}
    ~Outbound() { deadline->detach(); }
    Outbound(const Outbound&) = delete;
    Outbound& operator=(const Outbound&) = delete;
    tcp::socket socket;
    beast::flat_buffer buffer;
    std::shared_ptr<Deadline> deadline;
  };

  static constexpr std::size_t kMaxCachedTargets = 4096;
  static constexpr std::size_t kMaxIdlePerHost = 64;
  static constexpr std::size_t kMaxResponseBytes = 8 << 20;

  struct PerContext {
    explicit PerContext(asio::io_context& c) : context(&c) {}
    const asio::execution_context* context;
    outbound::IdlePool<Outbound> idle{kMaxIdlePerHost};
    std::mutex targets_mu;  // taken by this context's thread, and by callers from outside
    std::unordered_map<std::string, outbound::Target> targets;

    // Agents are called at the same few endpoints over and over: their URLs are parsed once.
    outbound::Target target_of(const std::string& url) {
      {
        std::lock_guard lock(targets_mu);
        if (const auto it = targets.find(url); it != targets.end()) return it->second;
      }
      auto t = outbound::parse_target(url);
      std::lock_guard lock(targets_mu);
      if (targets.size() >= kMaxCachedTargets) targets.clear();
      targets.emplace(url, t);
      return t;
    }
  };

  PerContext& context_of(const asio::any_io_executor& executor) {
    const auto* context = &asio::query(executor, asio::execution::context);
    for (auto& c : per_context_) {
      if (c->context == context) return *c;
    }
    return *per_context_.front();
  }

  asio::awaitable<ClientResponse> exchange(
      PerContext& own, outbound::Target t,
      std::shared_ptr<const std::pair<std::string, std::string>> req,
      std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // A pooled connection may have been closed by the peer: one retry on a fresh one (not on
    // another pooled one: a peer's idle timeout closes them all at once).
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto conn = attempt == 0 ? own.idle.take(t.key) : nullptr;
      const bool reused = conn != nullptr;
      auto late = [&](const boost::system::error_code& ec) {
        return conn->deadline->expired() || ec == asio::error::operation_aborted;
      };
      if (!conn) {
        conn = std::make_unique<Outbound>(co_await asio::this_coro::executor);
        tcp::resolver resolver(co_await asio::this_coro::executor);
        auto [rec, endpoints] = co_await resolver.async_resolve(t.host, t.port, kTuple);
        if (rec) {
          throw ClientError(ClientError::Kind::connect,
                            "cannot resolve " + t.host + ": " + rec.message());
        }
        conn->deadline->expires_at(deadline);
        auto [cec, ep] = co_await asio::async_connect(conn->socket, endpoints, kTuple);
        if (late(cec)) {
          throw ClientError(ClientError::Kind::timeout, "connecting to " + t.key + " timed out");
        }
        if (cec) {
          throw ClientError(ClientError::Kind::connect,
                            "cannot connect to " + t.key + ": " + cec.message());
        }
      }
      conn->deadline->expires_at(deadline);
      auto ec =
          co_await send_all(conn->socket, {asio::buffer(req->first), asio::buffer(req->second)});
      conn->buffer.clear();
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(kMaxResponseBytes);
      if (!ec) ec = co_await read_message(conn->socket, conn->buffer, parser, false);
      if (ec) {
        if (late(ec)) {
          throw ClientError(ClientError::Kind::timeout, "no reply from " + t.key + " in time");
        }
        if (reused && attempt == 0 &&
            (ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset ||
             ec == asio::error::broken_pipe || ec == asio::error::eof)) {
          continue;  // a pooled connection the peer had closed
        }
        if (ec == bhttp::error::body_limit) {
          throw ClientError(ClientError::Kind::protocol,
                            "reply from " + t.key + " is larger than " +
                                std::to_string(kMaxResponseBytes) + " bytes");
        }
        throw ClientError(ClientError::Kind::connect,
                          "exchange with " + t.key + " failed: " + ec.message());
      }
      auto& res = parser.get();
      const bool keep_alive = res.keep_alive();
      auto out = outbound::take_response(res);
      // Bytes past the reply would be read as the next exchange's reply: such a connection
      // is not reused.
      if (keep_alive && conn->buffer.size() == 0 && !closing_) {
        conn->deadline->pause();
        own.idle.give_back(t.key, std::move(conn));
      }
      co_return out;
    }
    throw ClientError(ClientError::Kind::connect, "exchange with " + t.key + " failed");
  }

  asio::io_context& ioc_;
  std::vector<std::unique_ptr<PerContext>> per_context_;
  std::atomic<bool> closing_{false};
};

// What a handler's exception becomes: its own status for an Error, a logged 500 otherwise.
Response failure_response(const Request& req, std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return error_response(e);
  } catch (const util::ContractError& e) {
    // A domain room's failure as the contract names it (util::ContractError).
    Error err(
        e.status(), e.code(), e.what(),
        e.details().is_null() ? std::nullopt : std::optional<boost::json::value>(e.details()));
    if (e.retry_after_seconds() > 0) {
      err.extra_headers.push_back({"Retry-After", std::to_string(e.retry_after_seconds())});
    }
    return error_response(err);
  } catch (const std::exception& e) {
    spdlog::error("{} {} failed: {}", req.method, req.target, e.what());
  } catch (...) {
    spdlog::error("{} {} failed", req.method, req.target);
  }
  return error_response(Error(500, "Internal", "internal error; see the server log"));
}

// Runs a route's fast path and resumes the session when it answers (or declines).
template <class Token>
auto try_fast_path(const FastPath& fast, Request& req, Token&& token) {
  return asio::async_initiate<Token, void(std::optional<Response>)>(
      [&fast, &req](auto handler) {
        using H = std::decay_t<decltype(handler)>;
        auto shared = std::make_shared<H>(std::move(handler));
        auto ex = asio::get_associated_executor(*shared);
        auto once = std::make_shared<std::atomic<bool>>(false);
        auto finish = [shared, ex, once](std::optional<Response> r) {
          if (once->exchange(true)) return;
          asio::dispatch(
              ex, [shared, r = std::move(r)]() mutable { std::move (*shared)(std::move(r)); });
        };
        const Responder respond = [finish](Response r) { finish(std::move(r)); };
        const asio::any_io_executor connection = ex;
        current_connection_executor = &connection;
        struct Reset {
          ~Reset() { current_connection_executor = nullptr; }
        } reset;
        const util::TraceScope trace(&req.trace);
        try {
          if (!fast(req, respond)) finish(std::nullopt);
        } catch (...) {
          finish(failure_response(req, std::current_exception()));
        }
      },
      token);
}

}  // namespace

struct Server::Impl {
  Impl(const Router& r, util::MetricsRegistry& m, ServerOptions o)
      : router(r),
        options(std::move(o)),
        contexts(make_contexts(thread_count())),
        ioc(*contexts.front()),
        acceptor(ioc),
        signals(ioc),
        grace_timer(ioc),
        client(contexts),
        requests(m.counter("schemagate_http_requests_total", "HTTP requests served",
                           {"method", "route", "status"})),
        latency(m.histogram(
            "schemagate_http_request_duration_seconds",
            "Time from a request's last byte read to its response queued", {"route"},
            {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})) {
    // Handlers that may block (the database, agents, streamed bodies) run here, not on the I/O
    // threads; 0 keeps them on the I/O threads.
    if (options.handler_threads > 0) {
      handler_pool = std::make_unique<asio::thread_pool>(options.handler_threads);
    }
  }

  unsigned thread_count() const {
    if (options.threads) return options.threads;
    const unsigned hc = std::thread::hardware_concurrency();
    return hc ? hc : 1;
  }

  // One io_context per I/O thread, each run by that thread alone (concurrency hint 1): a
  // connection lives on one of them for its whole life, so its handlers never contend for a
  // lock with another thread and an event for it wakes no other thread.
  static std::vector<std::unique_ptr<asio::io_context>> make_contexts(unsigned n) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (unsigned i = 0; i < n; ++i)
      out.push_back(std::make_unique<asio::io_context>(1));
    return out;
  }

  const Router& router;
  ServerOptions options;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  asio::io_context& ioc;  // contexts[0]: also accepts, and runs signals and shutdown
  // Keeps the other contexts running while they have no connection, until shutdown ends.
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::size_t next_context = 0;  // touched only by the accept loop

  // Each context's own handles on the request metrics, found once per route, method and
  // status: a request then updates two metrics without building label lists or taking the
  // families' locks. Touched only by the context's thread.
  struct MetricHandles {
    struct Key {
      const std::string* route;
      std::string method;
      int status;
      bool operator==(const Key&) const = default;
    };
    struct KeyHash {
      std::size_t operator()(const Key& k) const {
        return std::hash<const void*>()(k.route) ^ (std::hash<std::string>()(k.method) * 31) ^
               (static_cast<std::size_t>(k.status) << 20);
      }
    };
    std::unordered_map<Key, util::Counter*, KeyHash> counters;
    std::unordered_map<const std::string*, util::Histogram*> latencies;
  };
  std::vector<MetricHandles> metric_handles = std::vector<MetricHandles>(contexts.size());
  std::unique_ptr<asio::thread_pool> handler_pool;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer grace_timer;
  AsyncClientImpl client;
  std::optional<asio::ssl::context> tls;
  util::MetricsRegistry::CounterFamily& requests;
  util::MetricsRegistry::HistogramFamily& latency;

  std::atomic<bool> stopping{false};
  std::mutex conns_mu;
  std::set<std::shared_ptr<Connection>> conns;

  void load_tls() {
    if (!options.tls) return;
    tls.emplace(asio::ssl::context::tls_server);
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    tls->use_certificate_chain_file(options.tls->certificate_chain, ec);
    if (ec) {
      throw std::runtime_error("cannot load TLS certificate chain " +
                               options.tls->certificate_chain + ": " + ec.message());
    }
    tls->use_private_key_file(options.tls->private_key, asio::ssl::context::pem, ec);
    if (ec) {
      throw std::runtime_error("cannot load TLS private key " + options.tls->private_key + ": " +
                               ec.message());
    }
  }

  unsigned short listen() {
    load_tls();
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options.host, ec);
    if (ec) throw std::runtime_error("invalid listen address '" + options.host + "'");
    const tcp::endpoint ep(address, options.port);
    auto fail = [&](const char* what) {
      throw std::runtime_error(std::string("cannot ") + what + " " + options.host + ":" +
                               std::to_string(options.port) + ": " + ec.message());
    };
    acceptor.open(ep.protocol(), ec);
    if (ec) fail("open");
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    acceptor.bind(ep, ec);
    if (ec) fail("bind");
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) fail("listen on");
    const auto port = acceptor.local_endpoint().port();
    spdlog::info("{} listening on {}://{}:{}", options.name, tls ? "https" : "http",
                 address.is_v6() ? "[" + options.host + "]" : options.host, port);
    return port;
  }

  void run() {
    if (options.handle_signals) {
      signals.add(SIGINT);
      signals.add(SIGTERM);
      signals.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("received signal {}, shutting down", sig);
        begin_shutdown();
      });
    }
    asio::co_spawn(ioc, accept_loop(), asio::detached);
    std::vector<std::thread> workers;
    for (std::size_t i = 1; i < contexts.size(); ++i) {
      keep_running.push_back(asio::make_work_guard(*contexts[i]));
      workers.emplace_back([this, i] { run_context(*contexts[i]); });
    }
    run_context(ioc);
    release_contexts();
    for (auto& w : workers)
      w.join();
    if (handler_pool) handler_pool->join();
    spdlog::info("server stopped");
  }

  void run_context(asio::io_context& context) {
    if (options.busy_poll.count() <= 0) {
      context.run();
      return;
    }
    using clock = std::chrono::steady_clock;
    while (!context.stopped()) {
      std::size_t ran = 0;
      const auto until = clock::now() + options.busy_poll;
      while (ran == 0 && !context.stopped() && clock::now() < until)
        ran = context.poll();
      if (ran == 0 && !context.stopped()) context.run_one();
    }
  }

  void begin_shutdown() {
    asio::post(ioc, [this] {
      if (stopping.exchange(true)) return;
      if (options.on_shutdown) options.on_shutdown();
      client.close_idle(contexts);
      boost::system::error_code ignored;
      acceptor.close(ignored);
      signals.cancel(ignored);
      std::set<std::shared_ptr<Connection>> snapshot;
      {
        std::lock_guard lock(conns_mu);
        snapshot = conns;
      }
      for (const auto& c : snapshot) {
        asio::post(c->executor, [c] {
          if (c->alive && c->idle && c->cancel) c->cancel();
        });
      }
      grace_timer.expires_after(options.shutdown_grace);
      grace_timer.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        spdlog::warn("shutdown grace period over; closing remaining connections");
        for (auto& c : contexts)
          c->stop();
      });
      maybe_finish();
    });
  }

  void maybe_finish() {
    std::lock_guard lock(conns_mu);
    if (stopping && conns.empty()) {
      grace_timer.cancel();
      release_contexts();
    }
  }

  // On contexts[0]: the other contexts end once their last connection has.
  void release_contexts() {
    for (auto& guard : keep_running)
      guard.reset();
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      // Connections are dealt to the contexts in turn.
      const std::size_t index = next_context++ % contexts.size();
      auto& context = *contexts[index];
      auto [ec, socket] = co_await acceptor.async_accept(context.get_executor(), kTuple);
      if (ec) {
        if (ec == asio::error::operation_aborted || stopping) co_return;
        spdlog::warn("accept failed: {}", ec.message());
        continue;
      }
      auto conn = std::make_shared<Connection>();
      conn->executor = socket.get_executor();
      conn->context = index;
      {
        std::lock_guard lock(conns_mu);
        conns.insert(conn);
      }
      asio::co_spawn(conn->executor, serve_connection(std::move(socket), conn), asio::detached);
    }
  }

  asio::awaitable<void> serve_connection(tcp::socket socket, std::shared_ptr<Connection> conn) {
    std::string remote;
    {
      boost::system::error_code ec;
      const auto ep = socket.remote_endpoint(ec);
      if (!ec) remote = ep.address().to_string() + ":" + std::to_string(ep.port());
    }
    try {
      if (tls) {
        TlsTransport::Stream stream(std::move(socket), *tls);
        beast::get_lowest_layer(stream).expires_after(options.idle_timeout);
        auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, kTuple);
        if (!ec) {
          TlsTransport transport(stream);
          co_await session(transport, *conn, remote);
          beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
          co_await stream.async_shutdown(kTuple);
        }
      } else {
        {
          PlainTransport transport(socket);
          co_await session(transport, *conn, remote);
        }
        boost::system::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_send, ignored);
      }
    } catch (const std::exception& e) {
      spdlog::error("connection {} failed: {}", remote, e.what());
    }
    conn->alive = false;
    conn->cancel = nullptr;
    {
      std::lock_guard lock(conns_mu);
      conns.erase(conn);
    }
    if (stopping) asio::post(ioc, [this] { maybe_finish(); });
  }

  template <class Transport>
  asio::awaitable<void> session(Transport& transport, Connection& conn, const std::string& remote) {
    conn.cancel = [&transport] { transport.cancel(); };
    beast::flat_buffer buffer;
    for (;;) {
      if (stopping) co_return;
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(options.max_body_bytes);
      parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
      transport.limit(options.idle_timeout);
      // Idle until a request's header is in; from then on the request is in flight and a
      // shutdown lets it finish.
      conn.idle = true;
      auto ec = co_await transport.read(buffer, parser, true);
      conn.idle = false;
      if (!ec && beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
        bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};
        std::tie(ec, std::ignore) = co_await bhttp::async_write(transport.stream(), go_on, kTuple);
      }
      if (!ec) ec = co_await transport.read(buffer, parser, false);
      transport.unlimit();  // the handler takes the time it takes
      const auto started = std::chrono::steady_clock::now();
      if (ec) {
        std::optional<Error> reply;
        if (ec == bhttp::error::body_limit) {
          reply.emplace(413, "PayloadTooLarge",
                        "request body is larger than the limit of " +
                            std::to_string(options.max_body_bytes) + " bytes");
        } else if (ec == bhttp::error::header_limit) {
          reply.emplace(431, "InvalidInput",
                        "request headers are larger than the limit of " +
                            std::to_string(options.max_header_bytes) + " bytes");
        } else if (ec.category() ==
                       bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
                   ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
          reply.emplace(400, "InvalidInput", "malformed HTTP request: " + ec.message());
        }
        if (reply) {
          // The connection cannot be trusted to be in sync any more: answer, then close.
          Response res = error_response(*reply);
          const auto& req = parser.get();
          record(conn.context, std::string(req.method_string()), std::string(req.target()), nullptr,
                 res, remote, 0, started, util::trace_from_headers(std::nullopt, std::nullopt));
          co_await write(transport, res, false, false);
        }
        co_return;
      }
      auto& raw = parser.get();
      Request req;
      req.method = std::string(raw.method_string());
      req.target = std::string(raw.target());
      const auto qmark = req.target.find('?');
      req.path = req.target.substr(0, qmark);
      req.headers.reserve(16);
      for (const auto& field : raw) {
        req.headers.push_back({std::string(field.name_string()), std::string(field.value())});
      }
      req.body = std::move(raw.body());
      req.remote_address = remote;
      req.trace = util::trace_from_headers(req.header("traceparent"), req.header("tracestate"));
      const bool keep_alive = raw.keep_alive();
      const std::size_t bytes_in = req.body.size();

      const std::string* route = nullptr;
      const std::string_view query = qmark == std::string::npos
                                         ? std::string_view{}
                                         : std::string_view(req.target).substr(qmark + 1);
      std::optional<Response> res;
      Router::Match match;
      try {
        // Origin form only (RFC 9112 §3.2.1): "healthz", "*" or "http://host/x" are refused
        // rather than guessed at, so no proxy in front can read them as another path.
        if (req.target.empty() || req.target.front() != '/') {
          throw Error(400, "InvalidInput",
                      "the request target must be a path starting with '/' (origin form)");
        }
        req.query = parse_query(query);
        match = router.route(req);
        route = match.pattern;
      } catch (const Error& e) {
        res = error_response(e);
      }
      if (!res && match.fast_path) {
        res = co_await try_fast_path(*match.fast_path, req, asio::use_awaitable);
      }
      if (!res && handler_pool) {
        // Off the I/O thread: the handler may block; this coroutine resumes on its strand.
        res = co_await asio::co_spawn(
            handler_pool->get_executor(),
            [&]() -> asio::awaitable<Response> { co_return dispatch(req, *match.handler); },
            asio::use_awaitable);
      } else if (!res) {
        res = dispatch(req, *match.handler);
      }
      record(conn.context, req.method, req.target, route, *res, remote, bytes_in, started,
             req.trace);
      const bool again = keep_alive && !stopping;
      if (res->stream) {
        if (!co_await write_stream(transport, *res, again) || !again) co_return;
        continue;
      }
      co_await write(transport, *res, again, req.method == "HEAD");
      if (!again) co_return;
    }
  }

  Response dispatch(Request& req, const Handler& handler) {
    const util::TraceScope trace(&req.trace);  // outgoing calls carry the request's trace
    try {
      return handler(req);
    } catch (...) {
      return failure_response(req, std::current_exception());
    }
  }

  // Relays a streamed body as chunks. Pieces are pulled on the handler pool (the source may
  // block on an upstream agent) and written from this connection's strand. A source that fails
  // midway leaves the response without its last chunk, which tells the client it was cut.
  template <class Transport>
  asio::awaitable<bool> write_stream(Transport& transport, const Response& res, bool keep_alive) {
    bhttp::response<bhttp::empty_body> out;
    out.version(11);
    out.result(static_cast<unsigned>(res.status));
    out.set(bhttp::field::server, "schemagate");
    for (const auto& h : res.headers)
      out.set(h.name, h.value);
    out.keep_alive(keep_alive);
    out.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr(out);
    auto& stream = transport.stream();
    transport.limit(options.idle_timeout);
    auto [ec, n] = co_await bhttp::async_write_header(stream, sr, kTuple);
    if (ec) co_return false;
    for (;;) {
      std::string piece;
      bool more = false;
      try {
        auto pull = [&]() -> asio::awaitable<bool> { co_return res.stream->next(piece); };
        more = handler_pool ? co_await asio::co_spawn(handler_pool->get_executor(), pull(),
                                                      asio::use_awaitable)
                            : res.stream->next(piece);
      } catch (const std::exception& e) {
        spdlog::warn("streamed response ended early: {}", e.what());
        co_return false;
      }
      if (!piece.empty()) {
        transport.limit(options.idle_timeout);
        std::tie(ec, n) =
            co_await asio::async_write(stream, bhttp::make_chunk(asio::buffer(piece)), kTuple);
        if (ec) co_return false;  // the client went away; dropping the source ends the upstream
      }
      if (!more) break;
    }
    std::tie(ec, n) = co_await asio::async_write(stream, bhttp::make_chunk_last(), kTuple);
    co_return !ec;
  }

  template <class Transport>
  asio::awaitable<void> write(Transport& transport, const Response& res, bool keep_alive,
                              bool head) {
    // The head is written by hand and the body sent from where it is, in one gather write:
    // Beast's serializer costs more than the rest of a small response.
    std::string header;
    header.reserve(256);
    header += outbound::status_line(res.status);
    header += "Server: schemagate\r\n";
    for (const auto& h : res.headers)
      outbound::append_header(header, h.name, h.value);
    if (!keep_alive) header += "Connection: close\r\n";
    header += "Content-Length: " + std::to_string(res.body.size()) + "\r\n\r\n";
    transport.limit(options.idle_timeout);
    co_await transport.write(
        {asio::buffer(header), head ? asio::const_buffer() : asio::buffer(res.body)});
  }

  void record(std::size_t context, const std::string& method, const std::string& target,
              const std::string* route, const Response& res, const std::string& remote,
              std::size_t bytes_in, std::chrono::steady_clock::time_point started,
              const util::TraceContext& trace) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    static const std::string unmatched = "unmatched";
    const std::string& route_label = route ? *route : unmatched;
    auto& handles = metric_handles[context];
    MetricHandles::Key key{&route_label, method, res.status};
    auto counter = handles.counters.find(key);
    if (counter == handles.counters.end()) {
      counter = handles.counters
                    .emplace(std::move(key),
                             &requests.with({method, route_label, std::to_string(res.status)}))
                    .first;
    }
    counter->second->inc();
    auto histogram = handles.latencies.find(&route_label);
    if (histogram == handles.latencies.end()) {
      histogram = handles.latencies.emplace(&route_label, &latency.with({route_label})).first;
    }
    histogram->second->observe(seconds);
    if (!options.access_log) return;
    boost::json::object line{{"ts", util::format_rfc3339(std::chrono::system_clock::now())},
                             {"remote", remote},
                             {"method", method},
                             {"target", target},
                             {"route", route_label},
                             {"status", res.status},
                             {"bytes_in", bytes_in},
                             {"bytes_out", res.body.size()},
                             {"duration_us", static_cast<std::int64_t>(seconds * 1e6)},
                             {"trace_id", trace.trace_id},
                             {"span_id", trace.span_id}};
    if (!trace.parent_id.empty()) line["parent_id"] = trace.parent_id;
    util::access_log()->info(boost::json::serialize(line));
  }
};

Server::Server(const Router& router, util::MetricsRegistry& metrics, ServerOptions options)
    : impl_(std::make_unique<Impl>(router, metrics, std::move(options))) {}

Server::~Server() = default;

unsigned short Server::listen() {
  return impl_->listen();
}
void Server::run() {
  impl_->run();
}
void Server::stop() {
  impl_->begin_shutdown();
}
AsyncClient& Server::async_client() {
  return impl_->client;
}

}  // namespace schemagate::http
