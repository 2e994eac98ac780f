#include "registry/search_index.hpp"

#include "registry/vector_index.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
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
      w.resize(w.size() - r.suffix.size());
      w.append(r.replacement);
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
// How many neighbours a ranked search may fetch to bound the similarity of the cards it has not
// seen (see search()), and below which share of the best lexical score the bar for further
// lexical matches must be for that to be worth it (at a million cards, a bar under 40% of the
// best score lets tens of thousands of matches through; one at half of it, a few hundred).
// Beyond this pool, it reads the lexical matches over the bar instead.
constexpr std::size_t kWidestDensePool = 512;
constexpr double kWidenBelow = 0.4;
// A card that shares no word with the query needs at least this cosine to be a result at all, so
// that a query about nothing in the registry finds nothing (0.3 costs 0.1 nDCG on MetaTool).
constexpr float kDenseOnlyFloor = 0.3f;
constexpr std::size_t kCompactAfterDead = 1024;
// How far (relative) the live documents' average field lengths may move from those that impacts
// were normalised by before every impact is computed again: 2% moves a normalised count by at
// most 1% (b = 0.5), and at a million documents the averages hardly move.
constexpr double kAverageDrift = 0.02;
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

  // The term's counts in this document, null when it does not hold it.
  const FieldCounts* counts_of(std::uint32_t term) const {
    const auto it =
        std::lower_bound(terms.begin(), terms.end(), term,
                         [](const TermCount& c, std::uint32_t t) { return c.term < t; });
    return it != terms.end() && it->term == term ? &it->tf : nullptr;
  }
  bool has_term(std::uint32_t term) const { return counts_of(term) != nullptr; }
};

// A document holding a term, and what the term's occurrences there are worth before the term's
// idf: the BM25F saturated count, weighted by field and normalised by the field lengths against
// the index's averages (Impl::impact). Scoring reads these, not the documents.
struct Posting {
  std::uint32_t slot;
  float impact;
};

constexpr std::size_t kEvery = std::numeric_limits<std::size_t>::max();
// A term held by at least one document in kDenseShare (and by kDenseMin or more) keeps its
// documents as a bitmap too: counting a query's matches then ORs a word per 64 documents
// instead of visiting each posting (at a million agents, a 30-word query's common words hold
// millions of postings; their bitmaps are 128 KB each).
constexpr std::size_t kDenseShare = 32;
constexpr std::size_t kDenseMin = 256;
// Documents scored up front to estimate a ranked search's k-th best score (see top_matches).
constexpr std::size_t kEstimateDocuments = 1024;
constexpr std::uint32_t kSparse = std::numeric_limits<std::uint32_t>::max();
using Bits = std::vector<std::uint64_t>;

void set_bit(Bits& bits, std::uint32_t slot) {
  if (bits.size() <= slot / 64) bits.resize(slot / 64 + 1, 0);
  bits[slot / 64] |= std::uint64_t{1} << (slot % 64);
}
void clear_bit(Bits& bits, std::uint32_t slot) {
  if (slot / 64 < bits.size()) bits[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
}
bool test_bit(const Bits& bits, std::uint32_t slot) {
  return slot / 64 < bits.size() && (bits[slot / 64] >> (slot % 64) & 1) != 0;
}
constexpr std::uint8_t kAlive = 1;
constexpr std::uint8_t kPublic = 2;

double saturate(double tf) {
  return tf * (kK1 + 1.0) / (tf + kK1);
}

// One term of a ranked query: its postings, weight and the most it can add to a score.
struct QueryTerm {
  const std::vector<Posting>* postings;
  std::uint32_t number;
  double idf;
  double bound;
};

struct Scored {
  std::uint32_t slot;
  double score;
};

// The best `k` scores offered so far (a min-heap: the lowest of them at the front).
class BestScores {
 public:
  explicit BestScores(std::size_t k) : k_(k) {}
  void offer(double score) {
    if (heap_.size() < k_) {
      heap_.push_back(score);
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    } else if (k_ > 0 && score > heap_.front()) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.back() = score;
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  }
  bool full() const { return heap_.size() == k_; }
  double lowest() const { return heap_.front(); }  // once something was offered

 private:
  std::size_t k_;
  std::vector<double> heap_;
};

// The first posting at or after `slot`, galloping from `at` (postings are in slot order).
const Posting* skip_to(const Posting* at, const Posting* end, std::uint32_t slot) {
  if (at == end || at->slot >= slot) return at;
  std::size_t step = 1;
  const Posting* low = at;
  while (static_cast<std::size_t>(end - low) > step && low[step].slot < slot) {
    low += step;
    step *= 2;
  }
  const Posting* high = static_cast<std::size_t>(end - low) > step ? low + step + 1 : end;
  return std::lower_bound(low, high, slot,
                          [](const Posting& p, std::uint32_t s) { return p.slot < s; });
}

// Words -> term numbers, numbered in the order they arrive. Open addressing over (hash, number)
// pairs, the words themselves one after another in one string: at a million agents every card
// id adds a word, and a node-based map's lookups (two or three cache misses each, thirty a card)
// were most of the time a restart spends filing cards.
class Dictionary {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  std::uint32_t find(std::string_view word) const {
    if (slots_.empty()) return kNone;
    const std::uint64_t h = hash(word);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.number == kNone) return kNone;
      if (s.tag == static_cast<std::uint32_t>(h >> 32) && this->word(s.number) == word) {
        return s.number;
      }
    }
  }
  // The word's number, a new one (size() before the call) when it was not there.
  std::uint32_t insert(std::string_view word) {
    if (const auto n = find(word); n != kNone) return n;
    if ((size() + 1) * 2 > slots_.size()) grow();
    const auto number = static_cast<std::uint32_t>(size());
    chars_.append(word);
    ends_.push_back(chars_.size());
    place(hash(word), number);
    return number;
  }
  std::size_t size() const { return ends_.size(); }
  std::string_view word(std::uint32_t number) const {
    const std::size_t begin = number ? ends_[number - 1] : 0;
    return std::string_view(chars_).substr(begin, ends_[number] - begin);
  }
  void reserve(std::size_t words) {
    ends_.reserve(words);
    while (words * 2 > slots_.size())
      grow();
  }

 private:
  struct Slot {
    std::uint32_t tag = 0;  // the hash's high half: most mismatches end here
    std::uint32_t number = kNone;
  };
  static std::uint64_t hash(std::string_view word) { return std::hash<std::string_view>{}(word); }
  std::size_t mask() const { return slots_.size() - 1; }
  void place(std::uint64_t h, std::uint32_t number) {
    std::size_t i = h & mask();
    while (slots_[i].number != kNone)
      i = (i + 1) & mask();
    slots_[i] = {static_cast<std::uint32_t>(h >> 32), number};
  }
  void grow() {
    slots_.assign(std::max<std::size_t>(slots_.size() * 2, 64), Slot{});
    for (std::uint32_t n = 0; n < size(); ++n)
      place(hash(word(n)), n);
  }

  std::vector<Slot> slots_;        // a power of two, at most half full
  std::string chars_;              // every word, one after another
  std::vector<std::size_t> ends_;  // number -> where its word ends in chars_
};

}  // namespace

// A document's words as they are counted, before they are numbered.
struct SearchIndex::DocText {
  // Each distinct word once, with its counts by field (a sorted list: at a few dozen words a
  // card, cheaper to build than a hash map's nodes).
  std::vector<std::pair<std::string, FieldCounts>> counts;
  std::array<std::uint32_t, kFields> length{};
  // Words the dictionary knew when the text was looked up (Impl::look_up), taken out of counts.
  std::vector<TermCount> known;
};

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
  std::vector<Doc> docs;                                    // slot -> doc
  std::map<std::string, std::uint32_t, std::less<>> by_id;  // id -> slot (sorted for listing)
  Dictionary term_numbers;
  std::vector<std::vector<Posting>> postings;  // term number -> documents
  // Term number -> live documents holding it (idf), and the highest impact any of its postings
  // has had (times idf, the term's score bound, which lets a ranked search skip documents: see
  // top_matches).
  std::vector<std::uint32_t> live_df;
  std::vector<float> max_impact;
  // Slot -> kAlive | kPublic: ranking reads this, not the (much larger) documents.
  std::vector<std::uint8_t> state;
  // The same as bits, live public slots and live private ones: what counting matches reads.
  Bits public_live, private_live;
  // Term number -> its bitmap in `bitmaps` (all its postings, dead slots too), or kSparse.
  std::vector<std::uint32_t> bitmap_of;
  std::vector<Bits> bitmaps;
  std::array<double, kFields> total_length{};
  // The average field lengths that impacts are normalised by: those of the live documents when
  // impacts were last computed again, which happens once the true averages move more than
  // kAverageDrift from them (every score uses the same averages, so equal documents score
  // equally, and a posting's impact is computed once, not per query).
  std::array<double, kFields> scored_avg{};
  bool deferring_impacts = false;  // a bulk load: computed again once, at its end
  std::size_t alive = 0;
  VectorIndex vectors;

  explicit Impl(std::size_t exact_below) : vectors(exact_below) {}

  // Files a built document under a new slot: postings, lengths, id and vector.
  void insert(Doc d, const std::string& id, const embed::Vector& vector);

  using Admit = std::function<bool(std::uint32_t)>;

  // The query's known terms, each once, by increasing bound.
  std::vector<QueryTerm> query_terms(const std::vector<std::string>& words) const;
  float impact(const FieldCounts& tf, const Doc& d) const {
    double normalised = 0;
    for (std::size_t f = 0; f < kFields; ++f) {
      if (tf[f] == 0) continue;
      normalised += kWeights[f] * tf[f] / (1.0 - kB + kB * d.length[f] / scored_avg[f]);
    }
    return static_cast<float>(saturate(normalised));
  }
  // The averages of the live documents now.
  std::array<double, kFields> live_averages() const {
    std::array<double, kFields> avg{};
    for (std::size_t f = 0; f < kFields; ++f)
      avg[f] =
          std::max(1.0, total_length[f] / static_cast<double>(std::max<std::size_t>(alive, 1)));
    return avg;
  }
  // Computes every live posting's impact again, when the averages have drifted (or `always`).
  void follow_averages(bool always = false);
  // One document's lexical score, 0 when it holds none of the terms.
  double lexical_score(std::uint32_t slot, const std::vector<QueryTerm>& terms) const;
  // Admitted documents holding at least one of the terms.
  std::size_t count_matches(const std::vector<QueryTerm>& terms, bool no_filters,
                            const Admit& admit) const;
  // A lower bound of the k-th best admitted score: the k-th best of a few documents of the
  // strongest terms (0 when there are too few, or k is large).
  double estimate_kth_score(const std::vector<QueryTerm>& terms, std::size_t k,
                            const Admit& admit) const;
  // The `k` best admitted documents by lexical score that score at least `floor`, best first;
  // `complete` when there are no more such matches than those.
  std::vector<Scored> top_matches(const std::vector<QueryTerm>& terms, std::size_t k, double floor,
                                  const Admit& admit, bool& complete) const;
  // Every admitted match, term at a time, the best first and the rest in no order: what
  // top_matches must agree with (prune_postings(false)).
  std::vector<Scored> all_matches(const std::vector<QueryTerm>& terms, const Admit& admit) const;
  // The fused page from the nearest cards and the best lexical matches. 0 when the page is
  // final, else the lexical score a match beyond `lexical` needs to reach it.
  // The best lexical score among the candidates: the first of `lexical` when it holds the best
  // matches (neighbours match no better), or one of the neighbours'.
  static double best_lexical_score(const std::vector<Scored>& lexical,
                                   const std::vector<double>& neighbour_lexical) {
    double best = lexical.empty() ? 0.0 : lexical.front().score;
    for (const double l : neighbour_lexical)
      best = std::max(best, l);
    return best;
  }
  // `asked`: how many neighbours were asked for (fewer came: every card with a vector is there).
  double fuse(const embed::Vector& query_vector,
              const std::vector<VectorIndex::Neighbour>& neighbours, std::size_t asked,
              const std::vector<double>& neighbour_lexical, const std::vector<Scored>& lexical,
              bool complete, std::size_t wanted, std::vector<SearchIndex::Hit>& hits) const;
  bool ranks_before(const Scored& a, const Scored& b) const {
    return a.score != b.score ? a.score > b.score : docs[a.slot].card->id < docs[b.slot].card->id;
  }

  using Tokens = std::vector<std::pair<std::string, Field>>;

  static DocText words_of(const AgentCard& card, const std::vector<std::string>& extra) {
    DocText d;
    Tokens tokens;
    tokens.reserve(64);
    add_text(tokens, d, kName, card.name);
    add_text(tokens, d, kName, card.id);
    for (const auto& c : card.capabilities)
      add_text(tokens, d, kCapabilities, c);
    for (const auto& t : card.tags)
      add_text(tokens, d, kTags, t);
    add_text(tokens, d, kDescription, card.description);
    for (const auto& op : card.operations) {
      add_text(tokens, d, kOperations, op.name);
      add_text(tokens, d, kOperations, op.description);
    }
    for (const auto& e : extra)
      add_text(tokens, d, kExtra, e);
    std::sort(tokens.begin(), tokens.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < tokens.size();) {
      FieldCounts tf{};
      std::size_t j = i;
      for (; j < tokens.size() && tokens[j].first == tokens[i].first; ++j) {
        auto& n = tf[tokens[j].second];
        if (n < 65535) ++n;
      }
      d.counts.emplace_back(std::move(tokens[i].first), tf);
      i = j;
    }
    return d;
  }

  static void add_text(Tokens& tokens, DocText& d, Field f, std::string_view text) {
    for (auto& t : tokenize(text)) {
      tokens.emplace_back(std::move(t), f);
      ++d.length[f];
    }
  }

  // Numbers the words the dictionary already holds, and leaves only the others to number():
  // reads the dictionary only, so many texts may be looked up at once between two changes.
  void look_up(DocText& text) const {
    std::size_t unknown = 0;
    for (std::size_t i = 0; i < text.counts.size(); ++i) {
      auto& c = text.counts[i];
      if (const auto known = term_numbers.find(c.first); known != Dictionary::kNone) {
        text.known.push_back({known, c.second});
      } else {
        if (i != unknown) text.counts[unknown] = std::move(c);
        ++unknown;
      }
    }
    text.counts.resize(unknown);
  }

  // The document's words numbered (new words join the dictionary).
  Doc number(DocText text) {
    Doc d;
    d.length = text.length;
    d.terms = std::move(text.known);
    d.terms.reserve(d.terms.size() + text.counts.size());
    for (auto& [word, tf] : text.counts) {
      const auto number = term_numbers.insert(word);
      if (number == postings.size()) {
        postings.emplace_back();
        bitmap_of.push_back(kSparse);
        live_df.push_back(0);
        max_impact.push_back(0.0f);
      }
      d.terms.push_back({number, tf});
    }
    std::sort(d.terms.begin(), d.terms.end(),
              [](const TermCount& a, const TermCount& b) { return a.term < b.term; });
    return d;
  }

  std::optional<std::uint32_t> term_number(const std::string& word) const {
    const auto number = term_numbers.find(word);
    if (number == Dictionary::kNone) return std::nullopt;
    return number;
  }
};

// Hybrid ranking. Candidates: every lexical match plus the nearest cards by embedding. Each
// signal is scaled by its best value among the candidates, so the two are comparable whatever
// the corpus, and mixed convexly. A lexical match outside the nearest cards has a similarity of
// at most the last neighbour's: when even that bound cannot lift it onto the requested page, its
// similarity is not computed; and when it cannot lift the best lexical match not taken, the
// page is final.
double SearchIndex::Impl::fuse(const embed::Vector& query_vector,
                               const std::vector<VectorIndex::Neighbour>& neighbours,
                               std::size_t asked, const std::vector<double>& neighbour_lexical,
                               const std::vector<Scored>& lexical, bool complete,
                               std::size_t wanted, std::vector<SearchIndex::Hit>& hits) const {
  // The nearest `pool` cards are candidates whatever their words; further neighbours (when more
  // were asked for, to bound the similarity of the cards not seen) only as lexical matches.
  const std::size_t pool = std::max(kDensePool, wanted);
  const double best_lexical = best_lexical_score(lexical, neighbour_lexical);
  const float best_sim = neighbours.empty() ? 1.0f : std::max(neighbours.front().similarity, 1e-6f);
  // Fewer neighbours than asked for means every card with a vector was seen.
  const float sim_bound =
      neighbours.size() < asked ? 0.0f : std::max(0.0f, neighbours.back().similarity);
  auto fused = [&](double lex, float sim) {
    const double l = best_lexical > 0 ? lex / best_lexical : 0.0;
    const double d = std::min(1.0f, std::max(0.0f, sim) / best_sim);
    return kLexicalShare * l + (1.0 - kLexicalShare) * d;
  };
  BestScores page(wanted);  // the page's scores so far
  std::unordered_set<std::uint32_t> seen;
  for (std::size_t i = 0; i < neighbours.size(); ++i) {
    const auto& n = neighbours[i];
    seen.insert(n.slot);
    if (neighbour_lexical[i] == 0.0 && (i >= pool || n.similarity < kDenseOnlyFloor)) continue;
    const double score = fused(neighbour_lexical[i], n.similarity);
    page.offer(score);
    hits.push_back({docs[n.slot].card.get(), score});
  }
  for (const auto& m : lexical) {
    if (seen.count(m.slot)) continue;
    const double bound = fused(m.score, sim_bound);
    double score = fused(m.score, 0.0f);
    if (!page.full() || bound > page.lowest()) {
      score = fused(m.score, vectors.similarity(m.slot, query_vector));
      page.offer(score);
    }
    hits.push_back({docs[m.slot].card.get(), score});
  }
  if (complete || lexical.empty()) return 0.0;
  // Every match not taken scores at most the last one taken.
  if (page.full() && fused(lexical.back().score, sim_bound) < page.lowest()) return 0.0;
  if (!page.full()) return std::numeric_limits<double>::min();
  const double d_bound = std::min(1.0f, sim_bound / best_sim);
  const double needed =
      best_lexical * (page.lowest() - (1.0 - kLexicalShare) * d_bound) / kLexicalShare;
  return std::max(needed, std::numeric_limits<double>::min());
}

std::vector<QueryTerm> SearchIndex::Impl::query_terms(const std::vector<std::string>& words) const {
  const double n = static_cast<double>(std::max<std::size_t>(alive, 1));
  std::vector<QueryTerm> terms;
  for (const auto& w : words) {
    const auto number = term_number(w);
    if (!number || live_df[*number] == 0) continue;
    if (std::any_of(terms.begin(), terms.end(),
                    [&](const QueryTerm& t) { return t.number == *number; })) {
      continue;
    }
    const double df = live_df[*number];
    const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    terms.push_back({&postings[*number], *number, idf, idf * max_impact[*number]});
  }
  std::sort(terms.begin(), terms.end(),
            [](const QueryTerm& a, const QueryTerm& b) { return a.bound < b.bound; });
  return terms;
}

double SearchIndex::Impl::lexical_score(std::uint32_t slot,
                                        const std::vector<QueryTerm>& terms) const {
  const Doc& d = docs[slot];
  double score = 0;
  for (const auto& t : terms) {
    if (const auto* tf = d.counts_of(t.number)) score += t.idf * impact(*tf, d);
  }
  return score;
}

std::size_t SearchIndex::Impl::count_matches(const std::vector<QueryTerm>& terms, bool no_filters,
                                             const Admit& admit) const {
  // The union of the terms' documents as a bitmap, then the live ones counted a word at a time:
  // public ones by popcount when nothing filters, the rest by asking `admit`.
  Bits seen(public_live.size(), 0);
  for (const auto& t : terms) {
    if (const auto b = bitmap_of[t.number]; b != kSparse) {
      const Bits& bits = bitmaps[b];
      for (std::size_t w = 0; w < bits.size(); ++w)
        seen[w] |= bits[w];
    } else {
      for (const auto& p : *t.postings)
        set_bit(seen, p.slot);
    }
  }
  std::size_t count = 0;
  for (std::size_t w = 0; w < seen.size(); ++w) {
    if (seen[w] == 0) continue;
    const std::uint64_t shown = seen[w] & public_live[w];
    std::uint64_t ask = seen[w] & private_live[w];
    if (no_filters) {
      count += static_cast<std::size_t>(std::popcount(shown));
    } else {
      ask |= shown;
    }
    for (; ask != 0; ask &= ask - 1)
      count += admit(static_cast<std::uint32_t>(w * 64 + std::countr_zero(ask)));
  }
  return count;
}

std::vector<Scored> SearchIndex::Impl::all_matches(const std::vector<QueryTerm>& terms,
                                                   const Admit& admit) const {
  std::vector<double> sum(docs.size(), 0.0);
  std::vector<std::uint32_t> touched;
  for (const auto& t : terms) {
    for (const auto& p : *t.postings) {
      if (state[p.slot] == 0) continue;
      if (sum[p.slot] == 0.0) touched.push_back(p.slot);
      sum[p.slot] += t.idf * p.impact;
    }
  }
  std::vector<Scored> out;
  for (const auto slot : touched) {
    if (admit(slot)) out.push_back({slot, sum[slot]});
  }
  const auto best =
      std::min_element(out.begin(), out.end(),
                       [this](const Scored& a, const Scored& b) { return ranks_before(a, b); });
  if (best != out.end()) std::iter_swap(out.begin(), best);
  return out;
}

double SearchIndex::Impl::estimate_kth_score(const std::vector<QueryTerm>& terms, std::size_t k,
                                             const Admit& admit) const {
  if (k == 0 || k > kEstimateDocuments / 4) return 0.0;
  std::vector<std::uint32_t> scored;
  for (std::size_t i = terms.size(); i-- > 0 && scored.size() < kEstimateDocuments;) {
    for (const auto& p : *terms[i].postings) {
      if (scored.size() == kEstimateDocuments) break;
      if (state[p.slot] != 0) scored.push_back(p.slot);
    }
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  BestScores best(k);
  for (const auto slot : scored) {
    if (admit(slot)) best.offer(lexical_score(slot, terms));
  }
  return best.full() ? best.lowest() : 0.0;
}

// MaxScore (Turtle and Fogg, 1995), term at a time: terms are taken by increasing bound; with a
// lower bound of the k-th best score known first (estimate_kth_score), the weakest terms whose
// bounds together stay under it cannot bring a document onto the page, so their postings are
// not read in full: they are looked up (galloping) only for the candidates that the stronger
// terms bring. At a million agents the common words of a long query hold hundreds of
// thousands of postings each; most are never read.
std::vector<Scored> SearchIndex::Impl::top_matches(const std::vector<QueryTerm>& terms,
                                                   std::size_t k, double floor, const Admit& admit,
                                                   bool& complete) const {
  const std::size_t m = terms.size();
  std::vector<double> reach(m);  // reach[i]: the most terms 0..i can add together
  for (std::size_t i = 0; i < m; ++i)
    reach[i] = (i ? reach[i - 1] : 0.0) + terms[i].bound;
  // A little slack so that rounding never drops a document that ties: in the bounds, and in the
  // partial sums kept as floats (sixty terms summed lose less than 1e-5 of their value).
  auto below = [](double value, double threshold) { return value * (1.0 + 1e-9) < threshold; };
  auto below_partial = [](double value, double threshold) {
    return value * (1.0 + 1e-5) < threshold;
  };
  double threshold = std::max(floor, estimate_kth_score(terms, k, admit));
  // Terms [essential, m) are read in full; a document holding only weaker ones scores at most
  // reach[essential - 1], under the threshold, and is never a candidate.
  std::size_t essential = 0;
  while (essential < m && below(reach[essential], threshold))
    ++essential;
  const double weak = essential ? reach[essential - 1] : 0.0;
  // 1. The strong terms' scores summed term at a time into a slot-indexed array (floats: the
  // array is read at random, and half the size stays in cache).
  thread_local std::vector<float> sums;
  if (sums.size() < docs.size()) sums.resize(docs.size(), 0.0f);
  std::vector<std::uint32_t> touched;
  for (std::size_t i = essential; i < m; ++i) {
    const auto idf = static_cast<float>(terms[i].idf);
    for (const auto& p : *terms[i].postings) {
      if (state[p.slot] == 0) continue;
      float& sum = sums[p.slot];
      if (sum == 0.0f) touched.push_back(p.slot);
      sum += idf * p.impact;  // every term adds more than 0
    }
  }
  // 2. Candidates: documents that the weak terms they hold (by those terms' bitmaps, a bit
  // each, where a document's own term list is a cache miss away) could lift over the bar.
  std::vector<const Bits*> weak_bits(essential, nullptr);
  for (std::size_t i = 0; i < essential; ++i) {
    if (const auto b = bitmap_of[terms[i].number]; b != kSparse) weak_bits[i] = &bitmaps[b];
  }
  struct Candidate {
    std::uint32_t slot;
    double partial;
  };
  std::vector<Candidate> candidates;
  for (const auto slot : touched) {
    const double partial = sums[slot];
    sums[slot] = 0.0f;
    if (below_partial(partial + weak, threshold)) continue;
    double held_bound = partial;
    for (std::size_t i = 0; i < essential; ++i) {
      const Bits* bits = weak_bits[i];
      if (!bits || test_bit(*bits, slot)) held_bound += terms[i].bound;
    }
    if (!below_partial(held_bound, threshold)) candidates.push_back({slot, partial});
  }
  // 3. The weak terms, strongest first, looked up in their postings (in slot order, galloping)
  // for the candidates still able to reach the bar.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.slot < b.slot; });
  for (std::size_t i = essential; i-- > 0 && !candidates.empty();) {
    const auto& list = *terms[i].postings;
    const Posting* at = list.data();
    const Posting* end = at + list.size();
    std::size_t kept = 0;
    for (const auto& c : candidates) {
      if (below_partial(c.partial + reach[i], threshold)) continue;
      Candidate next = c;
      at = skip_to(at, end, c.slot);
      if (at != end && at->slot == c.slot) next.partial += terms[i].idf * at->impact;
      candidates[kept++] = next;
    }
    candidates.resize(kept);
  }
  // 4. The survivors' exact scores, summed in term order as every reading of the index sums
  // them, so that equal documents score equally.
  const auto worse_first = [this](const Scored& a, const Scored& b) { return ranks_before(a, b); };
  std::vector<Scored> heap;  // the best k so far, the worst at the front
  for (const auto& c : candidates) {
    if (below_partial(c.partial, threshold) || !admit(c.slot)) continue;
    const double score = lexical_score(c.slot, terms);
    if (below(score, threshold)) continue;
    const Scored s{c.slot, score};
    if (heap.size() < k) {
      heap.push_back(s);
      std::push_heap(heap.begin(), heap.end(), worse_first);
    } else if (ranks_before(s, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), worse_first);
      heap.back() = s;
      std::push_heap(heap.begin(), heap.end(), worse_first);
    } else {
      continue;
    }
    if (heap.size() == k) threshold = std::max(threshold, heap.front().score);
  }
  complete = heap.size() < k;
  std::sort_heap(heap.begin(), heap.end(), worse_first);
  return heap;
}

SearchIndex::SearchIndex(std::size_t exact_vector_search_below)
    : impl_(std::make_unique<Impl>(exact_vector_search_below)) {}
SearchIndex::~SearchIndex() = default;

void SearchIndex::upsert(const AgentCard& card, const std::vector<std::string>& extra,
                         const embed::Vector& vector) {
  file(Impl::words_of(card, extra), std::make_shared<const AgentCard>(card), vector);
}

void SearchIndex::file(DocText words, std::shared_ptr<const AgentCard> card,
                       const embed::Vector& vector) {
  remove(card->id);
  Doc doc = impl_->number(std::move(words));
  doc.is_public = card->is_public;
  const std::string id = card->id;
  doc.card = std::move(card);
  impl_->insert(std::move(doc), id, vector);
  compact_if_worn();
}

void SearchIndex::upsert_many(std::vector<Entry> entries) {
  // Counting words is most of the work and touches nothing shared; numbering them does.
  std::vector<DocText> words(entries.size());
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  const std::size_t share = (entries.size() + workers - 1) / workers;
  auto count = [&](std::size_t begin) {
    for (std::size_t i = begin; i < std::min(entries.size(), begin + share); ++i) {
      words[i] = Impl::words_of(entries[i].card, entries[i].extra);
      impl_->look_up(words[i]);  // the dictionary changes only once every thread is done
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers && w * share < entries.size(); ++w)
    threads.emplace_back(count, w * share);
  count(0);
  for (auto& t : threads)
    t.join();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    file(std::move(words[i]), std::make_shared<const AgentCard>(std::move(entries[i].card)),
         entries[i].vector);
  }
}

void SearchIndex::Impl::follow_averages(bool always) {
  const auto now = live_averages();
  bool drifted = always;
  for (std::size_t f = 0; f < kFields; ++f) {
    drifted = drifted || scored_avg[f] == 0.0 ||
              std::abs(now[f] - scored_avg[f]) > kAverageDrift * scored_avg[f];
  }
  if (!drifted) return;
  scored_avg = now;
  if (deferring_impacts) return;
  std::fill(max_impact.begin(), max_impact.end(), 0.0f);
  // Postings are in slot order and each document's terms in term order: one pass over the live
  // documents finds each of their postings by moving its term's cursor past dead slots.
  std::vector<std::size_t> at(postings.size(), 0);
  for (std::uint32_t slot = 0; slot < docs.size(); ++slot) {
    if (state[slot] == 0) continue;
    const Doc& d = docs[slot];
    for (const auto& c : d.terms) {
      auto& list = postings[c.term];
      auto& i = at[c.term];
      while (list[i].slot < slot)
        ++i;
      list[i].impact = impact(c.tf, d);
      max_impact[c.term] = std::max(max_impact[c.term], list[i].impact);
    }
  }
}

void SearchIndex::Impl::insert(Doc d, const std::string& id, const embed::Vector& vector) {
  const auto slot = static_cast<std::uint32_t>(docs.size());
  for (std::size_t f = 0; f < kFields; ++f)
    total_length[f] += d.length[f];
  ++alive;
  follow_averages();
  for (const auto& c : d.terms) {
    auto& list = postings[c.term];
    const float worth = impact(c.tf, d);
    list.push_back({slot, worth});
    ++live_df[c.term];
    max_impact[c.term] = std::max(max_impact[c.term], worth);
    if (const auto b = bitmap_of[c.term]; b != kSparse) {
      set_bit(bitmaps[b], slot);
    } else if (list.size() >= kDenseMin && list.size() * kDenseShare > slot) {
      bitmap_of[c.term] = static_cast<std::uint32_t>(bitmaps.size());
      Bits& bits = bitmaps.emplace_back();
      for (const auto& p : list)
        set_bit(bits, p.slot);
    }
  }
  state.push_back(static_cast<std::uint8_t>(kAlive | (d.is_public ? kPublic : 0)));
  set_bit(d.is_public ? public_live : private_live, slot);
  // Both as long as the slots, so that counting reads them side by side.
  public_live.resize(slot / 64 + 1, 0);
  private_live.resize(slot / 64 + 1, 0);
  d.alive = true;
  docs.push_back(std::move(d));
  by_id[id] = slot;
  // A vector of other dimensions than the index's (an embedding server that changed its model
  // under the same name) is left out rather than failing a registration already stored.
  if (!vector.empty() && (vectors.dimensions() == 0 || vector.size() == vectors.dimensions())) {
    vectors.add(slot, vector);
  }
}

// Replaced and removed cards leave dead slots behind (in postings, documents and the vector
// graph), and words that only they held. Once dead slots outnumber the live ones, the index is
// rebuilt from the live documents: their term counts and vectors are reused, nothing is
// tokenized or embedded again, and the dictionary keeps only the words of live documents (a
// registry whose cards come and go with fresh names would otherwise grow for ever).
void SearchIndex::compact_if_worn() {
  const std::size_t dead = impl_->docs.size() - impl_->alive;
  if (dead < kCompactAfterDead || dead <= impl_->alive) return;
  auto fresh = std::make_unique<Impl>(impl_->vectors.exact_below());
  // Kept words are numbered in their old order, so each document's terms stay sorted.
  constexpr auto kDropped = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> renumbered(impl_->postings.size(), kDropped);
  std::uint32_t kept = 0;
  for (std::size_t t = 0; t < renumbered.size(); ++t) {
    if (impl_->live_df[t] > 0) renumbered[t] = kept++;
  }
  fresh->term_numbers.reserve(kept);
  for (std::uint32_t t = 0; t < renumbered.size(); ++t) {
    if (renumbered[t] != kDropped) fresh->term_numbers.insert(impl_->term_numbers.word(t));
  }
  fresh->postings.resize(kept);
  fresh->bitmap_of.resize(kept, kSparse);
  fresh->live_df.resize(kept);
  fresh->max_impact.resize(kept);
  fresh->deferring_impacts = true;
  fresh->vectors.begin_bulk_load();
  for (const auto& [id, slot] : impl_->by_id) {
    const auto vector = impl_->vectors.vector_of(slot);
    Doc& doc = impl_->docs[slot];
    for (auto& c : doc.terms)
      c.term = renumbered[c.term];
    fresh->insert(std::move(doc), id, vector);
  }
  fresh->deferring_impacts = false;
  fresh->follow_averages(true);
  // Under the caller's lock: the graph is built in the background, searches scan meanwhile.
  fresh->vectors.end_bulk_load(true);
  impl_ = std::move(fresh);
}

std::size_t SearchIndex::slots() const {
  return impl_->docs.size();
}

std::size_t SearchIndex::words() const {
  return impl_->term_numbers.size();
}

void SearchIndex::begin_bulk_load() {
  impl_->deferring_impacts = true;
  impl_->vectors.begin_bulk_load();
}

void SearchIndex::end_bulk_load(bool in_background) {
  impl_->deferring_impacts = false;
  impl_->follow_averages(true);
  impl_->vectors.end_bulk_load(in_background);
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
  for (const auto& c : d.terms)
    --impl_->live_df[c.term];
  --impl_->alive;
  impl_->state[it->second] = 0;
  clear_bit(impl_->public_live, it->second);
  clear_bit(impl_->private_live, it->second);
  // The slot stays until compaction; what it held goes now.
  d.card.reset();
  d.terms = {};
  impl_->by_id.erase(it);
  impl_->follow_averages();
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
  std::size_t count = 0;
  const auto terms = tokenize(query);
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
    count = hits.size();
  } else {
    const bool no_filters = filters.empty();
    const Impl::Admit admit = [&](std::uint32_t slot) {
      const Doc& d = impl_->docs[slot];
      return d.alive && (no_filters || filters.matches(*d.card)) &&
             (d.is_public || visible(*d.card));
    };
    const auto query_terms = impl_->query_terms(terms);
    count = impl_->count_matches(query_terms, no_filters, admit);
    const std::size_t wanted = skip + top;
    const bool dense = !query_vector.empty() && impl_->vectors.size() > 0;
    if (!dense) {
      bool complete = false;
      const auto best = wanted == 0 ? std::vector<Scored>{}
                        : prune_    ? impl_->top_matches(query_terms, wanted, 0.0, admit, complete)
                                    : impl_->all_matches(query_terms, admit);
      // Scores in [0, 1]: saturating in the raw BM25F score.
      for (const auto& m : best)
        hits.push_back({impl_->docs[m.slot].card.get(), m.score / (m.score + 5.0)});
    } else {
      const auto accept = [&](std::uint32_t slot) {
        return (no_filters && impl_->state[slot] == (kAlive | kPublic)) || admit(slot);
      };
      const std::size_t pool = std::max(kDensePool, wanted);
      std::size_t asked = pool;
      const auto lexical_scores = [&](const std::vector<VectorIndex::Neighbour>& found) {
        std::vector<double> scores;
        for (const auto& nb : found)
          scores.push_back(impl_->lexical_score(nb.slot, query_terms));
        return scores;
      };
      auto neighbours = impl_->vectors.nearest(query_vector, asked, accept);
      auto neighbour_lexical = lexical_scores(neighbours);
      for (std::size_t i = 0; i < neighbours.size() && i < pool; ++i)
        count += neighbour_lexical[i] == 0.0 && neighbours[i].similarity >= kDenseOnlyFloor;
      if (wanted > 0 && !prune_) {
        impl_->fuse(query_vector, neighbours, asked, neighbour_lexical,
                    impl_->all_matches(query_terms, admit), true, wanted, hits);
      } else if (wanted > 0) {
        // The lexical matches that can reach the page are among the best few, unless a card
        // further down could be similar enough to make up for its words: then the fusion names
        // the lexical score a match needs, and every match above it is taken. When that bar is
        // low, more neighbours first lower the similarity such a card can have (a wider graph
        // search), and with it the bar.
        bool complete = false;
        const auto first = impl_->top_matches(query_terms, std::max<std::size_t>(wanted, 64), 0.0,
                                              admit, complete);
        double needed = impl_->fuse(query_vector, neighbours, asked, neighbour_lexical, first,
                                    complete, wanted, hits);
        while (needed > 0 &&
               needed < kWidenBelow * Impl::best_lexical_score(first, neighbour_lexical) &&
               neighbours.size() == asked && asked < kWidestDensePool) {
          asked *= 4;
          // A wider search may order the first ones differently: all are scored again.
          neighbours = impl_->vectors.nearest(query_vector, asked, accept);
          neighbour_lexical = lexical_scores(neighbours);
          hits.clear();
          needed = impl_->fuse(query_vector, neighbours, asked, neighbour_lexical, first, complete,
                               wanted, hits);
        }
        if (needed > 0) {
          hits.clear();
          impl_->fuse(query_vector, neighbours, asked, neighbour_lexical,
                      impl_->top_matches(query_terms, kEvery, needed, admit, complete), true,
                      wanted, hits);
        }
      }
    }
    // Ties broken by id for stable pages; only the requested page needs ordering.
    const auto better = [](const Hit& a, const Hit& b) {
      return a.score != b.score ? a.score > b.score : a.card->id < b.card->id;
    };
    const std::size_t page_end = std::min(hits.size(), skip + top);
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(page_end),
                      hits.end(), better);
  }
  result.count = count;
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
