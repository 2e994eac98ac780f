#include "registry/search_index.hpp"

#include "registry/vector_index.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <unordered_set>

namespace schemagate::registry {

namespace {

const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words = {
      "a",     "an",    "the",  "and",   "or",    "of",     "to",   "in",    "on",   "for",
      "with",  "by",    "at",   "from",  "is",    "are",    "was",  "be",    "this", "that",
      "these", "those", "it",   "its",   "as",    "i",      "me",   "my",    "we",   "our",
      "you",   "your",  "can",  "could", "would", "should", "will", "do",    "does", "please",
      "want",  "need",  "some", "any",   "about", "into",   "what", "which", "how",  "there",
      "help",  "find",  "get",  "tell",  "give",  "show",   "use",  "using", "also", "so",
      "if",    "then",  "than", "like",  "just",  "all",    "up",   "out",   "have", "has",
      "had",   "been",  "am",   "not"};
  return words;
}

// A light suffix stripper (Porter-like, much smaller): enough to meet "translate",
// "translates", "translation" and "translator" on one stem.
std::string stem(std::string w) {
  struct Rule {
    std::string_view suffix;
    std::string_view replacement;
    std::size_t min_stem;  // letters that must remain
  };
  static constexpr Rule kRules[] = {
      {"izations", "iz", 3}, {"ization", "iz", 3}, {"ations", "at", 3}, {"ation", "at", 3},
      {"ators", "at", 3},    {"ator", "at", 3},    {"ities", "", 4},    {"ity", "", 4},
      {"ments", "", 4},      {"ment", "", 4},      {"ings", "", 3},     {"ing", "", 3},
      {"ions", "", 4},       {"ion", "", 4},       {"ies", "y", 3},     {"ers", "", 4},
      {"er", "", 4},         {"ed", "", 4},        {"es", "", 4},       {"s", "", 3},
  };
  if (w.size() <= 3) return w;
  for (const auto& r : kRules) {
    if (w.size() >= r.suffix.size() + r.min_stem && w.ends_with(r.suffix) &&
        !(r.suffix == "s" && (w.ends_with("ss") || w.ends_with("us")))) {
      w = w.substr(0, w.size() - r.suffix.size()) + std::string(r.replacement);
      // "planning" -> "plann" -> "plan", "shipped" -> "shipp" -> "ship".
      const bool verb_ending = r.suffix == "ing" || r.suffix == "ed" || r.suffix == "er";
      if (verb_ending && w.size() > 3 && w[w.size() - 1] == w[w.size() - 2] &&
          std::string_view("lsz").find(w.back()) == std::string_view::npos &&
          std::string_view("aeiou").find(w.back()) == std::string_view::npos) {
        w.pop_back();
      }
      break;
    }
  }
  if (w.size() > 4 && w.back() == 'e') w.pop_back();
  return w;
}

enum Field : std::size_t {
  kName,
  kCapabilities,
  kTags,
  kDescription,
  kOperations,
  kExtra,
  kFields
};
constexpr std::array<double, kFields> kWeights = {3.0, 2.0, 2.0, 1.0, 1.0, 0.5};
constexpr double kK1 = 1.2;
// Hybrid ranking: the lexical signal's share of the fused score, and how many nearest cards by
// embedding join the lexical matches as candidates. 0.5 sits in the middle of the plateau
// measured on MetaTool and ToolLens (0.35 .. 0.6 within 1.5 nDCG points on both); the pool size
// made no difference from 30 to 300.
constexpr double kLexicalShare = 0.5;
constexpr std::size_t kDensePool = 32;
// A card that shares no word with the query needs at least this cosine to be a result at all, so
// that a query about nothing in the registry finds nothing (0.3 costs 0.1 nDCG on MetaTool).
constexpr float kDenseOnlyFloor = 0.3f;
constexpr std::size_t kCompactAfterDead = 1024;
constexpr double kB = 0.5;

// A term's occurrences in one document, field by field.
using FieldCounts = std::array<std::uint16_t, kFields>;

// One term of a document, by its number in the index's dictionary.
struct TermCount {
  std::uint32_t term;
  FieldCounts tf;
};

struct Doc {
  std::shared_ptr<const AgentCard> card;  // shared with callers: never copied per request
  bool is_public = true;  // inline: ranking tests visibility without touching the card
  // Sorted by term: a dozen bytes a term, where maps of strings took a hundred (at a million
  // agents, the difference between gigabytes).
  std::vector<TermCount> terms;
  std::array<std::uint32_t, kFields> length{};
  bool alive = true;

  bool has_term(std::uint32_t term) const {
    const auto it =
        std::lower_bound(terms.begin(), terms.end(), term,
                         [](const TermCount& c, std::uint32_t t) { return c.term < t; });
    return it != terms.end() && it->term == term;
  }
};

// A term's occurrences in one document, field by field: scoring reads these.
struct Posting {
  std::uint32_t slot;
  FieldCounts tf;
};

// A document's words as they are counted, before they are numbered.
struct DocText {
  std::unordered_map<std::string, FieldCounts> counts;
  std::array<std::uint32_t, kFields> length{};
};

}  // namespace

bool Filters::matches(const AgentCard& card) const {
  for (const auto& c : capabilities) {
    if (!card.has_capability(c)) return false;
  }
  for (const auto& t : tags) {
    if (!card.has_tag(t)) return false;
  }
  if (!language.empty() && !card.supports_language(language)) return false;
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  if (!provider.empty() && !same(card.provider, provider)) return false;
  if (!authentication.empty() && !same(card.authentication, authentication)) return false;
  return true;
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  for (auto& w : util::split_words(text)) {
    if (!stop_words().count(w)) out.push_back(stem(std::move(w)));
  }
  return out;
}

std::string embedding_text(const AgentCard& card, const std::vector<std::string>& extra) {
  std::string text = card.name;
  for (const auto* list : {&card.capabilities, &card.tags}) {
    for (const auto& c : *list)
      text += ". " + c;
  }
  text += ". " + card.description;
  for (const auto& op : card.operations)
    text += ". " + op.name + ": " + op.description;
  for (const auto& e : extra)
    text += ". " + e;
  return text;
}

struct SearchIndex::Impl {
  std::vector<Doc> docs;                                        // slot -> doc
  std::map<std::string, std::uint32_t, std::less<>> by_id;      // id -> slot (sorted for listing)
  std::unordered_map<std::string, std::uint32_t> term_numbers;  // the dictionary
  std::vector<std::vector<Posting>> postings;                   // term number -> documents
  std::array<double, kFields> total_length{};
  std::size_t alive = 0;
  VectorIndex vectors;

  explicit Impl(std::size_t exact_below) : vectors(exact_below) {}

  // Files a built document under a new slot: postings, lengths, id and vector.
  void insert(Doc d, const std::string& id, const embed::Vector& vector);

  void fuse(const embed::Vector& query_vector, const std::vector<float>& lexical,
            std::vector<std::uint32_t> candidates, const std::function<bool(std::uint32_t)>& admit,
            std::size_t wanted, std::vector<SearchIndex::Hit>& hits) const;

  static void add_text(DocText& d, Field f, std::string_view text) {
    for (auto& t : tokenize(text)) {
      auto& n = d.counts[std::move(t)][f];
      if (n < 65535) ++n;
      ++d.length[f];
    }
  }

  // The document's words numbered (new words join the dictionary).
  Doc number(DocText text) {
    Doc d;
    d.length = text.length;
    d.terms.reserve(text.counts.size());
    for (auto& [word, tf] : text.counts) {
      const auto [it, added] =
          term_numbers.emplace(word, static_cast<std::uint32_t>(term_numbers.size()));
      if (added) postings.emplace_back();
      d.terms.push_back({it->second, tf});
    }
    std::sort(d.terms.begin(), d.terms.end(),
              [](const TermCount& a, const TermCount& b) { return a.term < b.term; });
    return d;
  }

  std::optional<std::uint32_t> term_number(const std::string& word) const {
    const auto it = term_numbers.find(word);
    if (it == term_numbers.end()) return std::nullopt;
    return it->second;
  }
};

// Hybrid ranking. Candidates: every lexical match plus the nearest cards by embedding. Each
// signal is scaled by its best value among the candidates, so the two are comparable whatever
// the corpus, and mixed convexly. A lexical match outside the nearest cards has a similarity of
// at most the last neighbour's: when even that bound cannot lift it onto the requested page, its
// similarity is not computed and it is ranked by its lexical part alone (it is still counted).
void SearchIndex::Impl::fuse(const embed::Vector& query_vector, const std::vector<float>& lexical,
                             std::vector<std::uint32_t> candidates,
                             const std::function<bool(std::uint32_t)>& admit, std::size_t wanted,
                             std::vector<SearchIndex::Hit>& hits) const {
  const std::size_t pool = std::max(kDensePool, wanted);
  const auto neighbours = vectors.nearest(query_vector, pool, admit);
  float best_lexical = 0.0f;
  for (const auto slot : candidates)
    best_lexical = std::max(best_lexical, lexical[slot]);
  const float best_sim = neighbours.empty() ? 1.0f : std::max(neighbours.front().similarity, 1e-6f);
  // Fewer neighbours than asked for means every card with a vector was seen.
  const float sim_bound =
      neighbours.size() < pool ? 0.0f : std::max(0.0f, neighbours.back().similarity);
  auto fused = [&](float lex, float sim) {
    const double l = best_lexical > 0 ? lex / best_lexical : 0.0;
    const double d = std::min(1.0f, std::max(0.0f, sim) / best_sim);
    return kLexicalShare * l + (1.0 - kLexicalShare) * d;
  };
  // The page's lowest score so far (a min-heap of the best `wanted`).
  std::vector<double> page;
  auto offer = [&](double score) {
    if (page.size() < wanted) {
      page.push_back(score);
      std::push_heap(page.begin(), page.end(), std::greater<>());
    } else if (score > page.front()) {
      std::pop_heap(page.begin(), page.end(), std::greater<>());
      page.back() = score;
      std::push_heap(page.begin(), page.end(), std::greater<>());
    }
  };
  for (const auto& n : neighbours) {
    const float lex = lexical[n.slot];
    if (lex == 0.0f && n.similarity < kDenseOnlyFloor) continue;
    const double score = fused(lex, n.similarity);
    offer(score);
    hits.push_back({docs[n.slot].card.get(), score});
  }
  std::unordered_set<std::uint32_t> seen;
  for (const auto& n : neighbours)
    seen.insert(n.slot);
  for (const auto slot : candidates) {
    if (seen.count(slot)) continue;
    const float lex = lexical[slot];
    const double bound = fused(lex, sim_bound);
    double score = fused(lex, 0.0f);
    if (page.size() < wanted || bound > page.front()) {
      score = fused(lex, vectors.similarity(slot, query_vector));
      offer(score);
    }
    hits.push_back({docs[slot].card.get(), score});
  }
}

SearchIndex::SearchIndex(std::size_t exact_vector_search_below)
    : impl_(std::make_unique<Impl>(exact_vector_search_below)) {}
SearchIndex::~SearchIndex() = default;

void SearchIndex::upsert(const AgentCard& card, const std::vector<std::string>& extra,
                         const embed::Vector& vector) {
  remove(card.id);
  DocText d;
  impl_->add_text(d, kName, card.name);
  impl_->add_text(d, kName, card.id);
  for (const auto& c : card.capabilities)
    impl_->add_text(d, kCapabilities, c);
  for (const auto& t : card.tags)
    impl_->add_text(d, kTags, t);
  impl_->add_text(d, kDescription, card.description);
  for (const auto& op : card.operations) {
    impl_->add_text(d, kOperations, op.name);
    impl_->add_text(d, kOperations, op.description);
  }
  for (const auto& e : extra)
    impl_->add_text(d, kExtra, e);
  Doc doc = impl_->number(std::move(d));
  doc.card = std::make_shared<const AgentCard>(card);
  doc.is_public = card.is_public;
  impl_->insert(std::move(doc), card.id, vector);
  compact_if_worn();
}

void SearchIndex::Impl::insert(Doc d, const std::string& id, const embed::Vector& vector) {
  const auto slot = static_cast<std::uint32_t>(docs.size());
  for (std::size_t f = 0; f < kFields; ++f)
    total_length[f] += d.length[f];
  for (const auto& c : d.terms)
    postings[c.term].push_back({slot, c.tf});
  d.alive = true;
  docs.push_back(std::move(d));
  by_id[id] = slot;
  // A vector of other dimensions than the index's (an embedding server that changed its model
  // under the same name) is left out rather than failing a registration already stored.
  if (!vector.empty() && (vectors.dimensions() == 0 || vector.size() == vectors.dimensions())) {
    vectors.add(slot, vector);
  }
  ++alive;
}

// Replaced and removed cards leave dead slots behind (in postings, documents and the vector
// graph). Once they outnumber the live ones, the index is rebuilt from the live documents:
// their term counts and vectors are reused, nothing is tokenized or embedded again.
void SearchIndex::compact_if_worn() {
  const std::size_t dead = impl_->docs.size() - impl_->alive;
  if (dead < kCompactAfterDead || dead <= impl_->alive) return;
  auto fresh = std::make_unique<Impl>(impl_->vectors.exact_below());
  // The documents keep their term numbers: the dictionary comes along.
  fresh->term_numbers = impl_->term_numbers;
  fresh->postings.resize(impl_->postings.size());
  fresh->vectors.begin_bulk_load();
  for (const auto& [id, slot] : impl_->by_id) {
    const auto vector = impl_->vectors.vector_of(slot);
    fresh->insert(std::move(impl_->docs[slot]), id, vector);
  }
  // Under the caller's lock: the graph is built in the background, searches scan meanwhile.
  fresh->vectors.end_bulk_load(true);
  impl_ = std::move(fresh);
}

std::size_t SearchIndex::slots() const {
  return impl_->docs.size();
}

void SearchIndex::begin_bulk_load() {
  impl_->vectors.begin_bulk_load();
}

void SearchIndex::end_bulk_load() {
  impl_->vectors.end_bulk_load();
}

bool SearchIndex::vector_graph_ready() const {
  return impl_->vectors.approximate();
}

bool SearchIndex::save_vector_graph(const std::string& path) const {
  return impl_->vectors.save_graph(path, [this](std::uint32_t slot) {
    const Doc& d = impl_->docs[slot];
    return d.alive ? d.card->id : std::string();
  });
}

bool SearchIndex::load_vector_graph(const std::string& path) {
  return impl_->vectors.load_graph(path,
                                   [this](std::string_view id) -> std::optional<std::uint32_t> {
                                     const auto it = impl_->by_id.find(id);
                                     if (it == impl_->by_id.end()) return std::nullopt;
                                     return it->second;
                                   });
}

void SearchIndex::remove(std::string_view id) {
  const auto it = impl_->by_id.find(id);
  if (it == impl_->by_id.end()) return;
  Doc& d = impl_->docs[it->second];
  d.alive = false;
  impl_->vectors.erase(it->second);
  for (std::size_t f = 0; f < kFields; ++f)
    impl_->total_length[f] -= d.length[f];
  // The slot stays until compaction; what it held goes now.
  d.card.reset();
  d.terms = {};
  impl_->by_id.erase(it);
  --impl_->alive;
  compact_if_worn();
}

const AgentCard* SearchIndex::find(std::string_view id) const {
  const auto it = impl_->by_id.find(id);
  return it == impl_->by_id.end() ? nullptr : impl_->docs[it->second].card.get();
}

std::size_t SearchIndex::vector_dimensions() const {
  return impl_->vectors.dimensions();
}

std::shared_ptr<const AgentCard> SearchIndex::share(std::string_view id) const {
  const auto it = impl_->by_id.find(id);
  return it == impl_->by_id.end() ? nullptr : impl_->docs[it->second].card;
}

std::size_t SearchIndex::size() const {
  return impl_->alive;
}

SearchIndex::Result SearchIndex::search(std::string_view query, const embed::Vector& query_vector,
                                        const Filters& filters, std::size_t top, std::size_t skip,
                                        bool ranked, const Visible& visible) const {
  Result result;
  std::vector<Hit> hits;
  const auto terms = tokenize(query);
  const double n = static_cast<double>(std::max<std::size_t>(impl_->alive, 1));
  if (terms.empty() || !ranked) {
    for (const auto& [id, slot] : impl_->by_id) {
      const auto& card = *impl_->docs[slot].card;
      if (filters.matches(card) && visible(card)) hits.push_back({&card, 0.0});
    }
    if (!terms.empty()) {  // unranked but still only matching cards
      std::erase_if(hits, [&](const Hit& h) {
        const auto& d = impl_->docs[impl_->by_id.find(h.card->id)->second];
        return std::none_of(terms.begin(), terms.end(), [&](const std::string& t) {
          const auto number = impl_->term_number(t);
          return number && d.has_term(*number);
        });
      });
    }
    std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
      return a.card->name != b.card->name ? a.card->name < b.card->name : a.card->id < b.card->id;
    });
  } else {
    std::array<double, kFields> avg{};
    for (std::size_t f = 0; f < kFields; ++f)
      avg[f] = std::max(1.0, impl_->total_length[f] / n);
    // Term-at-a-time into a dense accumulator; `touched` remembers which slots to read back.
    std::vector<float> acc(impl_->docs.size(), 0.0f);
    std::vector<std::uint32_t> touched;
    std::unordered_set<std::string> seen_terms;
    for (const auto& t : terms) {
      if (!seen_terms.insert(t).second) continue;
      const auto number = impl_->term_number(t);
      if (!number) continue;
      const auto& list = impl_->postings[*number];
      std::size_t df = 0;
      for (const auto& post : list)
        df += impl_->docs[post.slot].alive;
      if (df == 0) continue;
      const double idf =
          std::log(1.0 + (n - static_cast<double>(df) + 0.5) / (static_cast<double>(df) + 0.5));
      for (const auto& post : list) {
        const Doc& d = impl_->docs[post.slot];
        if (!d.alive) continue;
        double tf = 0;
        for (std::size_t f = 0; f < kFields; ++f) {
          if (post.tf[f] == 0) continue;
          tf += kWeights[f] * post.tf[f] / (1.0 - kB + kB * d.length[f] / avg[f]);
        }
        if (acc[post.slot] == 0.0f) touched.push_back(post.slot);
        acc[post.slot] += static_cast<float>(idf * tf * (kK1 + 1.0) / (tf + kK1));
      }
    }
    const bool no_filters = filters.empty();
    const auto admit = [&](std::uint32_t slot) {
      const Doc& d = impl_->docs[slot];
      return d.alive && (no_filters || filters.matches(*d.card)) &&
             (d.is_public || visible(*d.card));
    };
    std::vector<std::uint32_t> candidates;
    for (const auto slot : touched) {
      if (admit(slot)) candidates.push_back(slot);
    }
    const bool dense = !query_vector.empty() && impl_->vectors.size() > 0;
    if (!dense) {
      // Scores in [0, 1]: saturating in the raw BM25F score.
      for (const auto slot : candidates) {
        const double s = acc[slot];
        hits.push_back({impl_->docs[slot].card.get(), s / (s + 5.0)});
      }
    } else {
      impl_->fuse(query_vector, acc, candidates, admit, skip + top, hits);
    }
    // Ties broken by id for stable pages; only the requested page needs ordering.
    const auto better = [](const Hit& a, const Hit& b) {
      return a.score != b.score ? a.score > b.score : a.card->id < b.card->id;
    };
    const std::size_t page_end = std::min(hits.size(), skip + top);
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(page_end),
                      hits.end(), better);
  }
  result.count = hits.size();
  const std::size_t begin = std::min(skip, hits.size());
  const std::size_t end = std::min(hits.size(), begin + top);
  result.hits.assign(hits.begin() + static_cast<std::ptrdiff_t>(begin),
                     hits.begin() + static_cast<std::ptrdiff_t>(end));
  return result;
}

std::vector<const AgentCard*> SearchIndex::list(const Filters& filters, std::string_view after_id,
                                                std::size_t limit, const Visible& visible,
                                                bool& more) const {
  std::vector<const AgentCard*> out;
  more = false;
  for (auto it = impl_->by_id.upper_bound(after_id); it != impl_->by_id.end(); ++it) {
    const auto& card = *impl_->docs[it->second].card;
    if (!filters.matches(card) || !visible(card)) continue;
    if (out.size() == limit) {
      more = true;
      break;
    }
    out.push_back(&card);
  }
  return out;
}

}  // namespace schemagate::registry
