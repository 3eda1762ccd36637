// Data pipeline: corpus reading (bundled Multi30k, errors), synthetic tasks, token-budget batching and
// the cached SentencePiece vocabulary.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "autodiff/rng.hpp"
#include "experiments/data/batching.hpp"
#include "experiments/eval/bleu.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/tasks/multi30k.hpp"
#include "experiments/data/subword.hpp"
#include "experiments/tasks/synthetic.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

const std::string kMulti30k = std::string(RELPOS_SOURCE_DIR) + "/data/multi30k";

// A fresh directory per test (ctest may run test cases in parallel processes).
std::string fresh_dir(const std::string& name) {
    const fs::path p = fs::path(RELPOS_BINARY_DIR) / "test-tmp" / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p.string();
}

void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f << bytes;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::vector<Example> random_examples(std::size_t n, std::size_t max_len, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<Example> ex(n);
    for (auto& e : ex) {
        e.src.assign(1 + rng.below(max_len), 7);
        e.tgt.assign(1 + rng.below(max_len), 9);
    }
    return ex;
}

}  // namespace

// ---------------------------------------------------------------- corpus

TEST_CASE("data/load_multi30k") {
    const auto train = load_multi30k(kMulti30k, "train");
    REQUIRE(train.src.size() == 29000);
    REQUIRE(train.tgt.size() == 29000);
    REQUIRE(load_multi30k(kMulti30k, "val").size() == 1014);
    REQUIRE(load_multi30k(kMulti30k, "test2016").size() == 1000);
    REQUIRE(load_multi30k(kMulti30k, "test2017").size() == 1000);
    // de -> en by default: the source side is the German file.
    REQUIRE(train.src_path == kMulti30k + "/train.de.gz");
    REQUIRE(train.tgt_path == kMulti30k + "/train.en.gz");
    for (std::size_t i = 0; i < 29000; i += 997) {
        REQUIRE(!train.src[i].empty());
        REQUIRE(train.src[i].find('\n') == std::string::npos);
    }
    // en -> de swaps the sides.
    const auto rev = load_multi30k(kMulti30k, "test2016", "en", "de");
    const auto fwd = load_multi30k(kMulti30k, "test2016", "de", "en");
    REQUIRE(rev.src == fwd.tgt);
    REQUIRE(rev.tgt == fwd.src);
}

TEST_CASE("data/load_multi30k_tokenized") {
    const auto tok = load_multi30k(kMulti30k, "train", "de", "en", true);
    REQUIRE(tok.size() == 29000);
    REQUIRE(tok.src_path == kMulti30k + "/tok/train.lc.norm.tok.de.gz");
    // Lowercased, and Moses splits the final period off: no ASCII capitals, lines end in " ." mostly.
    std::size_t upper = 0, space_period = 0;
    for (const auto& l : tok.tgt) {
        upper += std::count_if(l.begin(), l.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
        space_period += l.size() >= 2 && l.compare(l.size() - 2, 2, " .") == 0;
    }
    REQUIRE(upper == 0);
    REQUIRE(space_period > 20000);
    REQUIRE(load_multi30k(kMulti30k, "test2017", "en", "de", true).size() == 1000);
}

TEST_CASE("data/multi30k_paths_and_errors") {
    REQUIRE(multi30k_path("d", "val", "en", false) == "d/val.en.gz");
    REQUIRE(multi30k_path("d", "test2016", "de", true) == "d/tok/test2016.lc.norm.tok.de.gz");
    REQUIRE_THROWS_WITH(multi30k_path("d", "test", "en", false),
                        Catch::Contains("'test'") && Catch::Contains("train, val, test2016, test2017"));
    REQUIRE_THROWS_WITH(multi30k_path("d", "val", "fr", false), Catch::Contains("allowed: de, en"));
    REQUIRE_THROWS_AS(load_multi30k(kMulti30k, "val", "en", "en"), DataError);
    const std::string dir = fresh_dir("m30k-missing");
    REQUIRE_THROWS_WITH(load_multi30k(dir, "val", "de", "en", false, "key data.dir = " + dir),
                        Catch::Equals("data file " + dir + "/val.de.gz does not exist (key data.dir = " + dir + ")."));
}

TEST_CASE("data/read_lines_plain_gzip_and_endings") {
    const std::string dir = fresh_dir("read-lines");
    // plain text, CRLF line ends, empty middle line, no final newline
    write_raw(dir + "/a.txt", "eins\r\n\r\ndrei – ü\r\nvier");
    REQUIRE(read_lines(dir + "/a.txt") == std::vector<std::string>{"eins", "", "drei – ü", "vier"});
    // write_lines to .gz is really gzip (magic bytes) and reads back the same
    const std::vector<std::string> lines{"a b", "", "Grüße"};
    write_lines(dir + "/b.gz", lines);
    REQUIRE(slurp(dir + "/b.gz").substr(0, 2) == "\x1f\x8b");
    REQUIRE(read_lines(dir + "/b.gz") == lines);
    write_lines(dir + "/c.txt", lines);
    REQUIRE(slurp(dir + "/c.txt") == "a b\n\nGrüße\n");
    REQUIRE(read_lines(dir + "/c.txt") == lines);
}

TEST_CASE("data/mismatched_line_counts") {
    const std::string dir = fresh_dir("mismatch");
    write_lines(dir + "/x.de", {"a", "b", "c"});
    write_lines(dir + "/x.en", {"a", "b"});
    REQUIRE_THROWS_AS(load_parallel(dir + "/x.de", dir + "/x.en"), DataError);
    REQUIRE_THROWS_WITH(load_parallel(dir + "/x.de", dir + "/x.en"),
                        Catch::Contains(dir + "/x.de has 3") && Catch::Contains(dir + "/x.en has 2"));
    write_lines(dir + "/y.en", {"a", "b", "c"});
    REQUIRE(load_parallel(dir + "/x.de", dir + "/y.en").size() == 3);
}

TEST_CASE("data/invalid_utf8_and_empty_files") {
    const std::string dir = fresh_dir("utf8");
    write_raw(dir + "/bad.txt", "fine\nLatin-1 \xFC" "ber\nfine\n");
    REQUIRE_THROWS_WITH(read_lines(dir + "/bad.txt"), Catch::Equals(dir + "/bad.txt line 2 is not valid UTF-8."));
    // the same inside a gzip file
    gzFile g = gzopen((dir + "/bad.gz").c_str(), "wb");
    const std::string content = "ok\nok\nok\n\xC0\x80\n";  // overlong NUL on line 4
    gzwrite(g, content.data(), static_cast<unsigned>(content.size()));
    gzclose(g);
    REQUIRE_THROWS_WITH(read_lines(dir + "/bad.gz"), Catch::Contains("bad.gz line 4 is not valid UTF-8"));
    write_raw(dir + "/empty.txt", "");
    REQUIRE_THROWS_WITH(read_lines(dir + "/empty.txt"), Catch::Contains("is empty"));
    // a truncated gzip stream is reported, not silently cut short
    write_lines(dir + "/t.gz", std::vector<std::string>(2000, "some words to compress here 12345"));
    const std::string whole = slurp(dir + "/t.gz");
    write_raw(dir + "/t.gz", whole.substr(0, whole.size() / 2));
    REQUIRE_THROWS_AS(read_lines(dir + "/t.gz"), DataError);

    REQUIRE(is_valid_utf8("ascii ü € 😀"));
    REQUIRE(!is_valid_utf8("\xED\xA0\x80"));          // UTF-16 surrogate
    REQUIRE(!is_valid_utf8("\xF4\x90\x80\x80"));      // above U+10FFFF
    REQUIRE(!is_valid_utf8("\xE2\x82"));              // truncated sequence
    REQUIRE(!is_valid_utf8("\x80"));                  // lone continuation byte
}

// ---------------------------------------------------------------- synthetic

TEST_CASE("synthetic/tasks_are_correct") {
    const std::size_t n = 7;
    for (const auto& task : synthetic_task_names()) {
        const auto data = generate(task, 200, 1, 12, n, 42);
        REQUIRE(data.size() == 200);
        for (const auto& ex : data) {
            const auto& x = ex.src;
            const auto& y = ex.tgt;
            REQUIRE(y.size() == x.size());
            for (auto id : x) REQUIRE((id >= FIRST_FREE_ID && id < FIRST_FREE_ID + std::int32_t(n)));
            for (std::size_t i = 0; i < x.size(); ++i) {
                if (task == "copy") REQUIRE(y[i] == x[i]);
                if (task == "reverse") REQUIRE(y[i] == x[x.size() - 1 - i]);
                if (task == "local_sum") {
                    const int prev = i ? x[i - 1] - FIRST_FREE_ID : 0;
                    REQUIRE(y[i] - FIRST_FREE_ID == (x[i] - FIRST_FREE_ID + prev) % int(n));
                }
                if (task == "swap_pairs") {
                    const std::size_t j = (i % 2 == 0) ? (i + 1 < x.size() ? i + 1 : i) : i - 1;
                    REQUIRE(y[i] == x[j]);
                }
            }
        }
    }
    REQUIRE(synthetic_target("local_sum", {4 + 3, 4 + 5, 4 + 6}, 7) == std::vector<std::int32_t>{4 + 3, 4 + 1, 4 + 4});
    REQUIRE(synthetic_vocab_size(20) == 24);
    REQUIRE(format_ids({5, 9, 4}) == "5 9 4");
}

TEST_CASE("synthetic/length_ranges_and_seeds") {
    const auto train = generate("copy", 2000, 3, 10, 20, 1);
    const auto test = generate("copy", 500, 20, 40, 20, 2);
    std::set<std::size_t> train_lens, test_lens;
    for (const auto& ex : train) train_lens.insert(ex.src.size());
    for (const auto& ex : test) test_lens.insert(ex.src.size());
    REQUIRE(*train_lens.begin() == 3);  // both ends of the range occur
    REQUIRE(*train_lens.rbegin() == 10);
    REQUIRE(train_lens.size() == 8);
    REQUIRE(*test_lens.begin() >= 20);
    REQUIRE(*test_lens.rbegin() <= 40);
    // all symbols occur
    std::set<std::int32_t> symbols;
    for (const auto& ex : train) symbols.insert(ex.src.begin(), ex.src.end());
    REQUIRE(symbols.size() == 20);

    auto same = [](const std::vector<Example>& a, const std::vector<Example>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i].src != b[i].src || a[i].tgt != b[i].tgt) return false;
        return true;
    };
    REQUIRE(same(generate("reverse", 100, 1, 30, 20, 7), generate("reverse", 100, 1, 30, 20, 7)));
    REQUIRE(!same(generate("reverse", 100, 1, 30, 20, 7), generate("reverse", 100, 1, 30, 20, 8)));
}

TEST_CASE("synthetic/errors_and_listing") {
    REQUIRE_THROWS_WITH(generate("sort", 1, 1, 2, 20, 0),
                        Catch::Contains("'sort'") && Catch::Contains("copy, reverse, local_sum, swap_pairs"));
    REQUIRE_THROWS_AS(generate("copy", 1, 5, 4, 20, 0), DataError);
    REQUIRE_THROWS_AS(generate("copy", 1, 0, 4, 20, 0), DataError);
    REQUIRE_THROWS_AS(generate("copy", 1, 1, 4, 1, 0), DataError);
    const auto tasks = synthetic_tasks();
    REQUIRE(tasks.size() == 4);
    for (const auto& t : tasks) {
        REQUIRE(!t.summary.empty());
        REQUIRE(!t.options.empty());
    }
}

// ---------------------------------------------------------------- batching

TEST_CASE("batch/token_budget_and_coverage") {
    const auto ex = random_examples(3000, 60, 5);
    BatchOptions opt;
    opt.max_tokens = 500;
    opt.seed = 11;
    const auto plan = plan_train_batches(ex, opt, 0);
    std::vector<std::size_t> seen;
    for (const auto& b : plan) {
        std::size_t ls = 0, lt = 0;
        for (auto i : b) {
            ls = std::max(ls, ex[i].src.size());
            lt = std::max(lt, ex[i].tgt.size() + 1);
        }
        REQUIRE(!b.empty());
        REQUIRE(b.size() * std::max(ls, lt) <= opt.max_tokens);
        seen.insert(seen.end(), b.begin(), b.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::size_t> all(ex.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    REQUIRE(seen == all);  // every example exactly once
    // bucketing keeps batches reasonably full: padding is a small part of the cost
    std::size_t real = 0, cost = 0;
    for (const auto& b : train_batches(ex, opt, 0)) {
        real += std::accumulate(b.src_len.begin(), b.src_len.end(), std::size_t{0});
        cost += b.B * b.Ls;
    }
    REQUIRE(double(real) / double(cost) > 0.6);
}

TEST_CASE("batch/reproducible_per_epoch") {
    const auto ex = random_examples(500, 30, 6);
    BatchOptions opt;
    opt.max_tokens = 200;
    opt.seed = 3;
    const auto e2 = plan_train_batches(ex, opt, 2);
    REQUIRE(plan_train_batches(ex, opt, 2) == e2);      // same seed and epoch: same batches, same order
    REQUIRE(plan_train_batches(ex, opt, 1) != e2);      // another epoch reshuffles
    BatchOptions other = opt;
    other.seed = 4;
    REQUIRE(plan_train_batches(ex, other, 2) != e2);    // another seed too
    // the batch order is shuffled, not left in length order (which would bias training within an epoch)
    std::vector<std::size_t> first_len;
    for (const auto& b : e2) first_len.push_back(ex[b.front()].src.size());
    REQUIRE(!std::is_sorted(first_len.begin(), first_len.end()));
    // chunked sorting also covers everything once
    opt.sort_chunk = 64;
    std::size_t total = 0;
    for (const auto& b : plan_train_batches(ex, opt, 0)) total += b.size();
    REQUIRE(total == ex.size());
}

TEST_CASE("batch/padding_bos_eos") {
    std::vector<Example> ex{{{10, 11, 12}, {20, 21}}, {{13}, {22, 23, 24, 25}}, {{14, 15}, {}}};
    const Batch b = make_batch(ex, {0, 1, 2});
    REQUIRE(b.B == 3);
    REQUIRE(b.Ls == 3);
    REQUIRE(b.Lt == 5);  // longest target 4 + 1
    REQUIRE(b.src == std::vector<std::int32_t>{10, 11, 12, 13, PAD_ID, PAD_ID, 14, 15, PAD_ID});
    REQUIRE(b.tgt_in == std::vector<std::int32_t>{BOS_ID, 20, 21, PAD_ID, PAD_ID,  //
                                                  BOS_ID, 22, 23, 24, 25,          //
                                                  BOS_ID, PAD_ID, PAD_ID, PAD_ID, PAD_ID});
    REQUIRE(b.tgt_out == std::vector<std::int32_t>{20, 21, EOS_ID, PAD_ID, PAD_ID,  //
                                                   22, 23, 24, 25, EOS_ID,          //
                                                   EOS_ID, PAD_ID, PAD_ID, PAD_ID, PAD_ID});
    REQUIRE(b.src_len == std::vector<std::size_t>{3, 1, 2});
    REQUIRE(b.tgt_len == std::vector<std::size_t>{3, 5, 1});
    REQUIRE(b.n_tgt_tokens == 9);
    std::size_t non_pad = std::count_if(b.tgt_out.begin(), b.tgt_out.end(), [](auto v) { return v != PAD_ID; });
    REQUIRE(b.n_tgt_tokens == non_pad);
    REQUIRE(b.index == std::vector<std::size_t>{0, 1, 2});

    // every training batch: positions past each row's length are PAD, tgt_in is tgt_out shifted right
    const auto data = generate("reverse", 300, 1, 25, 20, 9);
    BatchOptions opt;
    opt.max_tokens = 300;
    for (const Batch& t : train_batches(data, opt, 0)) {
        for (std::size_t r = 0; r < t.B; ++r) {
            for (std::size_t j = t.src_len[r]; j < t.Ls; ++j) REQUIRE(t.src[r * t.Ls + j] == PAD_ID);
            for (std::size_t j = t.tgt_len[r]; j < t.Lt; ++j) {
                REQUIRE(t.tgt_in[r * t.Lt + j] == PAD_ID);
                REQUIRE(t.tgt_out[r * t.Lt + j] == PAD_ID);
            }
            REQUIRE(t.tgt_in[r * t.Lt] == BOS_ID);
            REQUIRE(t.tgt_out[r * t.Lt + t.tgt_len[r] - 1] == EOS_ID);
            for (std::size_t j = 1; j < t.tgt_len[r]; ++j) REQUIRE(t.tgt_in[r * t.Lt + j] == t.tgt_out[r * t.Lt + j - 1]);
            const auto& y = data[t.index[r]].tgt;
            REQUIRE(std::equal(y.begin(), y.end(), t.tgt_out.begin() + r * t.Lt));
        }
    }
}

TEST_CASE("batch/one_length evaluation batches never mix lengths and still cover every example once") {
    const auto ex = random_examples(700, 40, 8);
    for (const Layout layout : {Layout::Seq2Seq, Layout::EncoderOnly, Layout::DecoderOnly}) {
        BatchOptions opt;
        opt.max_tokens = 2048;
        opt.layout = layout;
        // the lengths a row of this layout is padded by: both sides for the encoder-decoder, the one sequence
        // (context and answer) for decoder-only, the input for encoder-only
        auto lengths = [&](std::size_t i) {
            const std::size_t s = ex[i].src.size(), t = ex[i].tgt.size();
            return layout == Layout::Seq2Seq ? std::make_pair(s, t) : std::make_pair(std::size_t{0}, layout == Layout::DecoderOnly ? s + t : s);
        };
        auto mixed = [&](const std::vector<std::vector<std::size_t>>& plan) {
            std::size_t n = 0;
            for (const auto& b : plan)
                for (std::size_t i : b)
                    if (lengths(i) != lengths(b[0])) ++n;
            return n;
        };
        CHECK(mixed(plan_eval_batches(ex, opt)) > 0);  // these sizes mix lengths unless told not to
        opt.one_length = true;
        const auto plan = plan_eval_batches(ex, opt);
        CHECK(mixed(plan) == 0);
        std::vector<int> seen(ex.size(), 0);
        for (const auto& b : plan)
            for (std::size_t i : b) ++seen[i];
        CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
    }
}

TEST_CASE("batch/eval_order_and_greedy_cut") {
    const auto ex = random_examples(700, 40, 8);
    BatchOptions opt;
    opt.max_tokens = 256;
    opt.max_batch_size = 16;
    const auto batches = eval_batches(ex, opt);
    // sorted by length across the whole plan; `index` restores corpus order exactly
    std::vector<std::int64_t> restored(ex.size(), -1);
    std::size_t prev_len = 0;
    for (const auto& b : batches) {
        REQUIRE(b.B <= opt.max_batch_size);
        for (std::size_t r = 0; r < b.B; ++r) {
            REQUIRE(b.src_len[r] >= prev_len);
            prev_len = b.src_len[r];
            REQUIRE(restored[b.index[r]] == -1);
            restored[b.index[r]] = std::int64_t(b.index[r]);
        }
    }
    for (std::size_t i = 0; i < ex.size(); ++i) REQUIRE(restored[i] == std::int64_t(i));
    REQUIRE(eval_batches(ex, opt).size() == batches.size());
    // greedy: the next batch's first example would not have fitted into the previous batch
    const auto plan = plan_eval_batches(ex, opt);
    for (std::size_t k = 0; k + 1 < plan.size(); ++k) {
        auto grown = plan[k];
        grown.push_back(plan[k + 1].front());
        const Batch g = make_batch(ex, grown);
        REQUIRE((batch_cost(g.B, g.Ls, g.Lt) > opt.max_tokens || g.B > opt.max_batch_size));
    }
}

TEST_CASE("batch/overlong_example_and_filter") {
    std::vector<Example> ex{{std::vector<std::int32_t>(50, 5), {6}}, {{5}, {6}}, {{5, 5}, {6}}};
    BatchOptions opt;
    opt.max_tokens = 20;
    const auto plan = plan_train_batches(ex, opt, 0);
    REQUIRE(plan.size() == 2);
    bool alone = false;
    for (const auto& b : plan) alone = alone || (b == std::vector<std::size_t>{0});
    REQUIRE(alone);  // the 50-token example forms its own batch

    std::size_t dropped = 0;
    std::vector<Example> mixed{{{5, 5}, {6}}, {std::vector<std::int32_t>(9, 5), {6}}, {{5}, std::vector<std::int32_t>(8, 6)},
                               {{5}, {}}, {{5, 5, 5}, {6, 6}}};
    const auto kept = filter_by_length(mixed, 8, &dropped);
    REQUIRE(dropped == 2);  // source of 9, empty target
    REQUIRE(kept.size() == 3);
    REQUIRE(kept[0].src.size() == 2);
    REQUIRE(kept[1].tgt.size() == 8);
    REQUIRE(kept[2].src.size() == 3);
}

// ---------------------------------------------------------------- subword

namespace {
std::vector<std::string> small_training_text() {
    const auto c = load_multi30k(kMulti30k, "train", "de", "en", true);
    std::vector<std::string> s(c.src.begin(), c.src.begin() + 2000);
    s.insert(s.end(), c.tgt.begin(), c.tgt.begin() + 2000);
    return s;
}
}  // namespace

TEST_CASE("subword/deterministic_training") {
    const auto text = small_training_text();
    SubwordOptions opt;
    opt.vocab_size = 500;
    const auto a = Subword::train_or_load(text, opt, fresh_dir("spm-a"));
    const auto b = Subword::train_or_load(text, opt, fresh_dir("spm-b"));
    REQUIRE(a.trained());
    REQUIRE(b.trained());
    REQUIRE(fs::path(a.model_path()).filename() == fs::path(b.model_path()).filename());
    REQUIRE(slurp(a.model_path()) == slurp(b.model_path()));
    REQUIRE(a.vocab_size() == 500);
    REQUIRE(a.piece(PAD_ID) == "<pad>");
    REQUIRE(a.piece(UNK_ID) == "<unk>");
    REQUIRE(a.piece(BOS_ID) == "<s>");
    REQUIRE(a.piece(EOS_ID) == "</s>");

    opt.model_type = "bpe";
    const auto c = Subword::train_or_load(text, opt, fresh_dir("spm-c"));
    const auto d = Subword::train_or_load(text, opt, fresh_dir("spm-d"));
    REQUIRE(slurp(c.model_path()) == slurp(d.model_path()));
    REQUIRE(c.model_path().find("spm-bpe-500-") != std::string::npos);
}

TEST_CASE("subword/round_trip") {
    const auto sw = Subword::train_or_load(small_training_text(), SubwordOptions{500}, fresh_dir("spm-rt"));
    const auto val = load_multi30k(kMulti30k, "val", "de", "en", true);
    std::size_t pieces = 0, words = 0;
    for (std::size_t i = 0; i < 300; ++i) {
        for (const auto* s : {&val.src[i], &val.tgt[i]}) {
            const auto ids = sw.encode(*s);
            REQUIRE(!ids.empty());
            for (auto id : ids) REQUIRE((id != PAD_ID && id != BOS_ID && id != EOS_ID && id < 500));
            REQUIRE(sw.decode(ids) == *s);
            pieces += ids.size();
            words += split_whitespace(*s).size();
        }
    }
    REQUIRE(pieces > words);  // a 500-piece vocabulary must split some words
    // BOS/EOS/PAD in decoder output are ignored by decode
    auto ids = sw.encode(val.tgt[0]);
    ids.insert(ids.begin(), BOS_ID);
    ids.push_back(EOS_ID);
    ids.push_back(PAD_ID);
    REQUIRE(sw.decode(ids) == val.tgt[0]);
    // encode_corpus pairs sides like the corpus
    ParallelCorpus tiny;
    tiny.src = {val.src[0], val.src[1]};
    tiny.tgt = {val.tgt[0], val.tgt[1]};
    const auto ex = encode_corpus(sw, tiny);
    REQUIRE(ex.size() == 2);
    REQUIRE(ex[1].tgt == sw.encode(val.tgt[1]));
}

TEST_CASE("subword/cache_reused") {
    const auto text = small_training_text();
    const std::string dir = fresh_dir("spm-cache");
    SubwordOptions opt;
    opt.vocab_size = 400;
    const auto first = Subword::train_or_load(text, opt, dir + "/nested");
    REQUIRE(first.trained());
    const auto mtime = fs::last_write_time(first.model_path());
    const auto second = Subword::train_or_load(text, opt, dir + "/nested");
    REQUIRE(!second.trained());
    REQUIRE(second.model_path() == first.model_path());
    REQUIRE(fs::last_write_time(second.model_path()) == mtime);
    REQUIRE(second.encode(text[5]) == first.encode(text[5]));
    // other text or options give another file; no temporary files are left behind
    auto changed = text;
    changed.back() += " x";
    REQUIRE(Subword::train_or_load(changed, opt, dir + "/nested").model_path() != first.model_path());
    opt.vocab_size = 401;
    REQUIRE(Subword::train_or_load(text, opt, dir + "/nested").model_path() != first.model_path());
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir + "/nested")) {
        REQUIRE(e.path().extension() == ".model");
        ++files;
    }
    REQUIRE(files == 3);
    REQUIRE(Subword::load(first.model_path()).encode(text[0]) == first.encode(text[0]));
}

TEST_CASE("subword/errors") {
    const std::string dir = fresh_dir("spm-err");
    SubwordOptions bad;
    bad.model_type = "wordpiece";
    REQUIRE_THROWS_WITH(Subword::train_or_load({"a b"}, bad, dir), Catch::Contains("allowed: unigram, bpe"));
    SubwordOptions huge;
    huge.vocab_size = 50000;
    REQUIRE_THROWS_WITH(Subword::train_or_load({"ein kleiner satz", "a small sentence"}, huge, dir),
                        Catch::Contains("vocab_size 50000"));
    REQUIRE_THROWS_WITH(Subword::load(dir + "/none.model"), Catch::Contains("does not exist"));
    write_raw(dir + "/junk.model", "not a model");
    REQUIRE_THROWS_AS(Subword::load(dir + "/junk.model"), DataError);
    Subword placeholder;
    REQUIRE(!placeholder.loaded());
    REQUIRE_THROWS_AS(placeholder.encode("a"), std::logic_error);
}

TEST_CASE("subword/sha256_vectors") {
    // FIPS 180-2 test vectors.
    REQUIRE(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    REQUIRE(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    REQUIRE(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    REQUIRE(sha256_hex(std::string(1000000, 'a')) ==
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
