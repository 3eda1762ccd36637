#include "experiments/data/batching.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <stdexcept>

#include "autodiff/rng.hpp"

namespace relpos {

namespace {

// A seed for epoch e that does not depend on any earlier epoch's draws (splitmix64-style mixing, so
// neighbouring (seed, epoch) pairs give unrelated streams).
std::uint64_t epoch_seed(std::uint64_t seed, std::uint64_t epoch) {
    std::uint64_t z = seed ^ (0x9e3779b97f4a7c15ULL * (epoch + 1));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {  // Fisher-Yates with our own Rng (std::shuffle is not portable)
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rng.below(i))]);
}

// The padded (source, target) lengths one example needs: (|x|, |y| + 1) for the encoder-decoder,
// (0, |src| + |tgt| - 1) for a decoder-only sequence, (0, |src|) for an encoder-only input.
std::pair<std::size_t, std::size_t> row_lengths(const Example& e, Layout layout) {
    if (layout == Layout::DecoderOnly) return {0, e.src.size() + e.tgt.size() - 1};
    if (layout == Layout::EncoderOnly) return {0, e.src.size()};
    return {e.src.size(), e.tgt.size() + 1};
}

// Cuts `order` (already in the wanted sequence) greedily into batches within the budget.
std::vector<std::vector<std::size_t>> cut(const std::vector<Example>& ex, const std::vector<std::size_t>& order,
                                          const BatchOptions& opt) {
    std::vector<std::vector<std::size_t>> batches;
    std::vector<std::size_t> cur;
    std::size_t ls = 0, lt = 0;
    std::pair<std::size_t, std::size_t> first{0, 0};  // the lengths of cur's first example
    for (std::size_t i : order) {
        const auto [els, elt] = row_lengths(ex[i], opt.layout);
        const std::size_t nls = std::max(ls, els);
        const std::size_t nlt = std::max(lt, elt);
        const bool over_budget = batch_cost(cur.size() + 1, nls, nlt) > opt.max_tokens;
        const bool over_rows = opt.max_batch_size && cur.size() + 1 > opt.max_batch_size;
        const bool other_length = opt.one_length && std::make_pair(els, elt) != first;
        if (cur.empty()) first = {els, elt};
        if (!cur.empty() && (over_budget || over_rows || other_length)) {
            first = {els, elt};
            batches.push_back(std::move(cur));
            cur.clear();
            ls = els;
            lt = elt;
        } else {
            ls = nls;
            lt = nlt;
        }
        cur.push_back(i);
    }
    if (!cur.empty()) batches.push_back(std::move(cur));
    return batches;
}

bool shorter(const std::vector<Example>& ex, std::size_t a, std::size_t b) {
    if (ex[a].src.size() != ex[b].src.size()) return ex[a].src.size() < ex[b].src.size();
    return ex[a].tgt.size() < ex[b].tgt.size();
}

}  // namespace

std::vector<std::vector<std::size_t>> plan_train_batches(const std::vector<Example>& examples,
                                                         const BatchOptions& opt, std::uint64_t epoch) {
    Rng rng(epoch_seed(opt.seed, epoch));
    std::vector<std::size_t> order(examples.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    shuffle(order, rng);
    // Sorting within a chunk groups similar lengths (little padding); the stable sort keeps the
    // shuffled order among equal lengths, so batch composition still changes every epoch.
    const std::size_t chunk = opt.sort_chunk ? opt.sort_chunk : std::max<std::size_t>(order.size(), 1);
    std::vector<std::vector<std::size_t>> batches;
    for (std::size_t begin = 0; begin < order.size(); begin += chunk) {
        const std::size_t end = std::min(order.size(), begin + chunk);
        std::vector<std::size_t> part(order.begin() + begin, order.begin() + end);
        std::stable_sort(part.begin(), part.end(),
                         [&](std::size_t a, std::size_t b) { return shorter(examples, a, b); });
        for (auto& b : cut(examples, part, opt)) batches.push_back(std::move(b));
    }
    shuffle(batches, rng);
    return batches;
}

std::vector<std::vector<std::size_t>> plan_eval_batches(const std::vector<Example>& examples,
                                                        const BatchOptions& opt) {
    std::vector<std::size_t> order(examples.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return shorter(examples, a, b); });
    return cut(examples, order, opt);
}

namespace {
Batch make_decoder_only_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices) {
    Batch b;
    b.B = indices.size();
    for (std::size_t i : indices) {
        if (examples[i].src.empty() || examples[i].tgt.empty())
            throw std::invalid_argument("decoder-only example with an empty context or target part");
        b.Lt = std::max(b.Lt, examples[i].src.size() + examples[i].tgt.size() - 1);
    }
    b.tgt_in.assign(b.B * b.Lt, PAD_ID);
    b.tgt_out.assign(b.B * b.Lt, PAD_ID);
    b.index = indices;
    for (std::size_t r = 0; r < b.B; ++r) {
        const Example& ex = examples[indices[r]];
        std::int32_t* in = b.tgt_in.data() + r * b.Lt;
        std::int32_t* out = b.tgt_out.data() + r * b.Lt;
        const std::size_t n = ex.src.size() + ex.tgt.size() - 1;  // inputs: S[0 .. n-1]
        std::copy(ex.src.begin(), ex.src.end(), in);
        std::copy(ex.tgt.begin(), ex.tgt.end() - 1, in + ex.src.size());
        std::copy(ex.tgt.begin(), ex.tgt.end(), out + ex.src.size() - 1);  // predicted from the last context token on
        b.src_len.push_back(0);
        b.tgt_len.push_back(n);
        b.n_tgt_tokens += ex.tgt.size();
    }
    return b;
}

Batch make_encoder_only_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices) {
    Batch b;
    b.B = indices.size();
    for (std::size_t i : indices) {
        if (examples[i].tgt.empty() || examples[i].tgt.size() > examples[i].src.size())
            throw std::invalid_argument("encoder-only example whose labels are empty or longer than its input");
        b.Lt = std::max(b.Lt, examples[i].src.size());
    }
    b.tgt_in.assign(b.B * b.Lt, PAD_ID);
    b.tgt_out.assign(b.B * b.Lt, PAD_ID);
    b.index = indices;
    for (std::size_t r = 0; r < b.B; ++r) {
        const Example& ex = examples[indices[r]];
        std::copy(ex.src.begin(), ex.src.end(), b.tgt_in.data() + r * b.Lt);
        std::copy(ex.tgt.begin(), ex.tgt.end(), b.tgt_out.data() + r * b.Lt + (ex.src.size() - ex.tgt.size()));
        b.src_len.push_back(0);
        b.tgt_len.push_back(ex.src.size());
        b.n_tgt_tokens += ex.tgt.size();
    }
    return b;
}
}  // namespace

Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, Layout layout) {
    if (layout == Layout::DecoderOnly) return make_decoder_only_batch(examples, indices);
    if (layout == Layout::EncoderOnly) return make_encoder_only_batch(examples, indices);
    Batch b;
    b.B = indices.size();
    for (std::size_t i : indices) {
        b.Ls = std::max(b.Ls, examples[i].src.size());
        b.Lt = std::max(b.Lt, examples[i].tgt.size() + 1);
    }
    b.src.assign(b.B * b.Ls, PAD_ID);
    b.tgt_in.assign(b.B * b.Lt, PAD_ID);
    b.tgt_out.assign(b.B * b.Lt, PAD_ID);
    b.index = indices;
    for (std::size_t r = 0; r < b.B; ++r) {
        const Example& ex = examples[indices[r]];
        std::copy(ex.src.begin(), ex.src.end(), b.src.begin() + r * b.Ls);
        std::int32_t* in = b.tgt_in.data() + r * b.Lt;
        std::int32_t* out = b.tgt_out.data() + r * b.Lt;
        in[0] = BOS_ID;
        std::copy(ex.tgt.begin(), ex.tgt.end(), in + 1);
        std::copy(ex.tgt.begin(), ex.tgt.end(), out);
        out[ex.tgt.size()] = EOS_ID;
        b.src_len.push_back(ex.src.size());
        b.tgt_len.push_back(ex.tgt.size() + 1);
        b.n_tgt_tokens += ex.tgt.size() + 1;
    }
    return b;
}

std::vector<Batch> train_batches(const std::vector<Example>& examples, const BatchOptions& opt, std::uint64_t epoch) {
    std::vector<Batch> out;
    for (const auto& idx : plan_train_batches(examples, opt, epoch)) out.push_back(make_batch(examples, idx, opt.layout));
    return out;
}

std::vector<Batch> eval_batches(const std::vector<Example>& examples, const BatchOptions& opt) {
    std::vector<Batch> out;
    for (const auto& idx : plan_eval_batches(examples, opt)) out.push_back(make_batch(examples, idx, opt.layout));
    return out;
}

std::vector<Example> filter_by_length(const std::vector<Example>& examples, std::size_t max_len, std::size_t* dropped) {
    std::vector<Example> kept;
    kept.reserve(examples.size());
    for (const auto& ex : examples)
        if (!ex.src.empty() && !ex.tgt.empty() && ex.src.size() <= max_len && ex.tgt.size() <= max_len)
            kept.push_back(ex);
    if (dropped) *dropped = examples.size() - kept.size();
    return kept;
}

std::vector<std::size_t> batch_share(const std::vector<std::size_t>& batch, std::size_t rank, std::size_t ranks) {
    const std::size_t base = batch.size() / ranks, extra = batch.size() % ranks;
    const std::size_t first = rank * base + std::min(rank, extra);
    const std::size_t n = base + (rank < extra ? 1 : 0);
    return std::vector<std::size_t>(batch.begin() + static_cast<std::ptrdiff_t>(first),
                                    batch.begin() + static_cast<std::ptrdiff_t>(first + n));
}

std::size_t target_tokens(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, Layout layout) {
    std::size_t n = 0;
    for (std::size_t i : indices) n += examples[i].tgt.size() + (layout == Layout::Seq2Seq ? 1 : 0);  // + EOS
    return n;
}

}  // namespace relpos
