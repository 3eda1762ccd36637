// Corpus BLEU against hand-computed values (n-gram counts worked out by hand in the comments) and the
// 13a tokenizer against the mteval-v13a rules. The port was also checked against a transcription of
// sacreBLEU's Python source (re module) on all Multi30k lines and 20k random strings: identical output.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "experiments/eval/bleu.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/eval/significance.hpp"

using namespace relpos;

namespace {
// Geometric mean of four precisions in percent, times bp: BLEU's definition, written independently.
double bleu_of(double bp, double p1, double p2, double p3, double p4) {
    return bp * std::pow(p1 * p2 * p3 * p4, 0.25);
}
}  // namespace

TEST_CASE("bleu/perfect_match") {
    const std::vector<std::string> refs{"A man is riding a horse on the beach.", "Two dogs play in the snow, happily!",
                                        "The year 1,000.5 was long-ago; it's true."};
    const auto r = corpus_bleu(refs, refs);
    REQUIRE(r.score == Approx(100.0).margin(1e-9));
    for (double p : r.precisions) REQUIRE(p == Approx(100.0));
    REQUIRE(r.bp == 1.0);
    REQUIRE(r.ratio == 1.0);
    REQUIRE(r.hyp_len == r.ref_len);
    // 13a: "A man is riding a horse on the beach ." = 10 tokens; "Two dogs play in the snow , happily !" = 9;
    // "The year 1,000.5 was long-ago ; it's true ." = 9.
    REQUIRE(r.ref_len == 28);
}

TEST_CASE("bleu/no_match_is_zero") {
    const auto r = corpus_bleu({"alpha beta gamma delta"}, {"one two three four five"});
    REQUIRE(r.score == 0.0);
    for (double p : r.precisions) REQUIRE(p == 0.0);
    REQUIRE(r.totals[0] == 4);
    REQUIRE(r.counts[0] == 0);
}

TEST_CASE("bleu/no_4gram_match") {
    // hyp1 "the cat sat on a mat"      ref1 "the cat was on the mat"
    // hyp2 "hello there general kenobi" ref2 "hello there general grievous"
    // 1-grams: 4/6 + 3/4 = 7/10; 2-grams: 1/5 ("the cat") + 2/3 = 3/8; 3-grams: 0/4 + 1/2 = 1/6;
    // 4-grams: 0/3 + 0/1 = 0/4. Lengths 10 and 10: BP = 1.
    const std::vector<std::string> hyps{"the cat sat on a mat", "hello there general kenobi"};
    const std::vector<std::string> refs{"the cat was on the mat", "hello there general grievous"};

    BleuOptions none;
    none.smooth = "none";
    const auto r0 = corpus_bleu(hyps, refs, none);
    REQUIRE(r0.score == 0.0);  // a zero precision without smoothing gives 0 (multi-bleu.perl's behaviour)
    REQUIRE(r0.precisions[0] == Approx(70.0));
    REQUIRE(r0.precisions[1] == Approx(37.5));
    REQUIRE(r0.precisions[2] == Approx(100.0 / 6));
    REQUIRE(r0.precisions[3] == 0.0);
    REQUIRE(r0.signature == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:none|version:2.x-relpos");

    // sacreBLEU's default 'exp' smoothing: the first order with zero matches gets 100 / (2 * total).
    const auto r = corpus_bleu(hyps, refs);
    REQUIRE(r.precisions[3] == Approx(100.0 / (2 * 4)));
    REQUIRE(r.score == Approx(bleu_of(1.0, 70.0, 37.5, 100.0 / 6, 12.5)).epsilon(1e-12));
    REQUIRE(r.counts[0] == 7);
    REQUIRE(r.totals[3] == 4);
    REQUIRE(r.signature == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-relpos");

    // floor: 100 * 0.1 / total for the zero order.
    BleuOptions floor;
    floor.smooth = "floor";
    REQUIRE(corpus_bleu(hyps, refs, floor).score == Approx(bleu_of(1.0, 70.0, 37.5, 100.0 / 6, 2.5)).epsilon(1e-12));
    // add-k (k = 1) for orders 2..4: 4/9, 2/7, 1/5.
    BleuOptions addk;
    addk.smooth = "add-k";
    REQUIRE(corpus_bleu(hyps, refs, addk).score ==
            Approx(bleu_of(1.0, 70.0, 400.0 / 9, 200.0 / 7, 20.0)).epsilon(1e-12));
    REQUIRE(corpus_bleu(hyps, refs, addk).signature.find("smooth:add-k[1.00]") != std::string::npos);
}

TEST_CASE("bleu/brevity_penalty") {
    // c = 5 hypothesis tokens, r = 7 reference tokens; every hypothesis n-gram matches.
    const auto r = corpus_bleu({"the cat sat on the"}, {"the cat sat on the mat today"});
    REQUIRE(r.hyp_len == 5);
    REQUIRE(r.ref_len == 7);
    REQUIRE(r.bp == Approx(std::exp(1.0 - 7.0 / 5.0)).epsilon(1e-14));
    REQUIRE(r.ratio == Approx(5.0 / 7.0));
    REQUIRE(r.score == Approx(100.0 * std::exp(-0.4)).epsilon(1e-12));
    // A longer hypothesis is not penalised (BP = 1), only its precisions drop.
    const auto longer = corpus_bleu({"the cat sat on the mat today again"}, {"the cat sat on the mat today"});
    REQUIRE(longer.bp == 1.0);
}

TEST_CASE("bleu/clipping_and_exp_smoothing") {
    // Papineni's example: "the" appears 4 times but at most 2 times in the reference: p1 = 2/4.
    // 2-, 3-, 4-grams ("the the", ...) never match: exp smoothing gives 100/(2*3), 100/(4*2), 100/(8*1).
    // c = 4 < r = 6: BP = exp(1 - 6/4).
    const auto r = corpus_bleu({"the the the the"}, {"the cat is on the mat"});
    REQUIRE(r.counts[0] == 2);
    REQUIRE(r.totals[0] == 4);
    REQUIRE(r.precisions[0] == Approx(50.0));
    REQUIRE(r.precisions[1] == Approx(100.0 / 6));
    REQUIRE(r.precisions[2] == Approx(12.5));
    REQUIRE(r.precisions[3] == Approx(12.5));
    REQUIRE(r.score == Approx(bleu_of(std::exp(-0.5), 50.0, 100.0 / 6, 12.5, 12.5)).epsilon(1e-12));
}

TEST_CASE("bleu/corpus_level_not_sentence_average") {
    // Statistics are summed over the corpus before dividing: sentence 1 matches fully (4 tokens),
    // sentence 2 (4 tokens) shares only "x" with its reference. 1-grams (4+1)/8, 2-grams 3/6, 3-grams 2/4,
    // 4-grams 1/2.
    const auto r = corpus_bleu({"a b c d", "x q r s"}, {"a b c d", "x y z w"});
    REQUIRE(r.precisions[0] == Approx(62.5));
    REQUIRE(r.precisions[1] == Approx(50.0));
    REQUIRE(r.precisions[2] == Approx(50.0));
    REQUIRE(r.precisions[3] == Approx(50.0));
    REQUIRE(r.score == Approx(bleu_of(1.0, 62.5, 50.0, 50.0, 50.0)).epsilon(1e-12));
}

TEST_CASE("bleu/too_short_for_4grams_is_zero") {
    // No hypothesis has 4 tokens: total_4 = 0, sacreBLEU stops there and p_4 stays 0.
    const auto r = corpus_bleu({"a b c", "d e"}, {"a b c", "d e"});
    REQUIRE(r.score == 0.0);
    REQUIRE(r.precisions[0] == Approx(100.0));
    REQUIRE(r.precisions[3] == 0.0);
}

TEST_CASE("bleu/tokenizer_13a") {
    // punctuation and symbols split off; '.' and ',' split unless between digits
    REQUIRE(tokenize_13a("Hello, world!") == "Hello , world !");
    REQUIRE(tokenize_13a("The end.") == "The end .");
    REQUIRE(tokenize_13a("It costs $1,000.50 today.") == "It costs $ 1,000.50 today .");
    REQUIRE(tokenize_13a("pi is 3.14 or 3,14") == "pi is 3.14 or 3,14");
    REQUIRE(tokenize_13a("e.g. U.S.A.") == "e . g . U . S . A .");
    // escapes are unescaped first, then the characters split off
    REQUIRE(tokenize_13a("&quot;Yes&quot;, he said.") == "\" Yes \" , he said .");
    REQUIRE(tokenize_13a("a&amp;b x&lt;y&gt;z") == "a & b x < y > z");
    REQUIRE(tokenize_13a("cut <skipped> here") == "cut here");
    // apostrophes and hyphens stay inside words; '-' splits after a digit
    REQUIRE(tokenize_13a("it's a well-known 1990-1995 fact") == "it's a well-known 1990 - 1995 fact");
    REQUIRE(tokenize_13a("(test) [x] {y} a/b @c #d %e ^f _g |h ~i `j ;k :l =m +n *o ?p")
            == "( test ) [ x ] { y } a / b @ c # d % e ^ f _ g | h ~ i ` j ; k : l = m + n * o ? p");
    // non-ASCII letters are untouched; whitespace (tabs, repeats, NBSP) collapses to one space
    REQUIRE(tokenize_13a("Grüße,  Welt.\tJa") == "Grüße , Welt . Ja");
    REQUIRE(tokenize_13a("a\xC2\xA0" "b") == "a b");
    REQUIRE(tokenize_13a("") == "");
    REQUIRE(tokenize_13a("   ") == "");
}

TEST_CASE("bleu/tok_none_and_whitespace") {
    REQUIRE(split_whitespace("  a  b\tc\xC2\xA0" "d \xE3\x80\x80 e ") == std::vector<std::string>{"a", "b", "c", "d", "e"});
    // Already tokenized text: tok none must not split "1990-1995" or "&apos;s", 13a would.
    BleuOptions none;
    none.tokenize = "none";
    const auto r = corpus_bleu({"a dog &apos;s ball"}, {"a dog &apos;s ball"}, none);
    REQUIRE(r.hyp_len == 4);
    REQUIRE(r.score == Approx(100.0));
    REQUIRE(r.signature == "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.x-relpos");
    REQUIRE(corpus_bleu({"a dog &apos;s ball"}, {"a dog &apos;s ball"}).hyp_len == 7);  // 13a: a dog & apos ; s ball
    // trailing whitespace is stripped before tokenizing (sacreBLEU rstrips each line)
    REQUIRE(corpus_bleu({"a b c d  \t"}, {"a b c d"}, none).score == Approx(100.0));
}

TEST_CASE("bleu/lowercase") {
    REQUIRE(lowercase_unicode("Grüße ÄÖÜ ẞ ÉCOLE Ωmega") == "grüße äöü ß école ωmega");
    REQUIRE(lowercase_unicode("\xC4\xB0") == "i\xCC\x87");  // U+0130 becomes two code points, as in Python
    REQUIRE(lowercase_unicode("ΟΔΟΣ.") == "οδος.");        // final sigma
    const std::vector<std::string> hyps{"The Cat SAT on the MAT"}, refs{"the cat sat on the mat"};
    REQUIRE(corpus_bleu(hyps, refs).score < 50.0);
    BleuOptions lc;
    lc.lowercase = true;
    const auto r = corpus_bleu(hyps, refs, lc);
    REQUIRE(r.score == Approx(100.0));
    REQUIRE(r.signature == "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.x-relpos");
}

TEST_CASE("bleu/format_line") {
    const auto r = corpus_bleu({"the cat sat on the"}, {"the cat sat on the mat today"});
    REQUIRE(r.format() == "BLEU = 67.03 100.0/100.0/100.0/100.0 (BP = 0.670 ratio = 0.714 hyp_len = 5 ref_len = 7)");
}

TEST_CASE("bleu/errors") {
    REQUIRE_THROWS_WITH(corpus_bleu({"a", "b"}, {"a"}), Catch::Contains("2 hypotheses and 1 references"));
    REQUIRE_THROWS_WITH(corpus_bleu({"a", "b"}, {"a", ""}), Catch::Contains("reference line 2 is empty"));
    REQUIRE_THROWS_WITH(corpus_bleu({"a\xFF"}, {"a"}), Catch::Contains("hypothesis line 1 is not valid UTF-8"));
    BleuOptions bad;
    bad.tokenize = "intl";
    REQUIRE_THROWS_AS(corpus_bleu({"a"}, {"a"}, bad), DataError);
    REQUIRE_THROWS_WITH(corpus_bleu({"a"}, {"a"}, bad), Catch::Contains("allowed: 13a, none"));
    bad = {};
    bad.smooth = "laplace";
    REQUIRE_THROWS_WITH(corpus_bleu({"a"}, {"a"}, bad), Catch::Contains("allowed: exp, none, floor, add-k"));
}

TEST_CASE("metrics/token_accuracy") {
    // position by position over the longer of hypothesis and reference
    CHECK(token_accuracy({"a b c"}, {"a b c"}) == Approx(100.0));
    CHECK(token_accuracy({"a x c"}, {"a b c"}) == Approx(200.0 / 3.0));
    CHECK(token_accuracy({"a b"}, {"a b c d"}) == Approx(50.0));        // missing positions are wrong
    CHECK(token_accuracy({"a b c d"}, {"a b"}) == Approx(50.0));        // extra tokens are wrong too
    CHECK(token_accuracy({"b c d"}, {"a b c d"}) == Approx(0.0));       // shifted by one: nothing aligns
    CHECK(token_accuracy({"a b", ""}, {"a b", "c d"}) == Approx(50.0)); // pooled over sentences
    CHECK(token_accuracy({}, {}) == Approx(0.0));
}

TEST_CASE("bleu/sentence_statistics_sum_to_the_corpus_score", "[bleu][significance]") {
    const std::vector<std::string> hyps{"the cat sat on the mat", "a dog runs", "two men play football in a park ."};
    const std::vector<std::string> refs{"the cat sat on a mat", "a dog is running", "two men are playing soccer in the park ."};
    for (const char* tok : {"13a", "none"}) {
        relpos::BleuOptions o;
        o.tokenize = tok;
        relpos::BleuStats sum;
        for (const auto& st : relpos::sentence_bleu_stats(hyps, refs, o)) sum += st;
        CHECK(relpos::bleu_from_stats(sum, o).score == Approx(relpos::corpus_bleu(hyps, refs, o).score).epsilon(1e-12));
    }
}

TEST_CASE("bleu/paired_bootstrap_separates_a_better_system_from_noise", "[bleu][significance]") {
    // 200 sentences; system "good" matches the reference on every sentence, "half" on every other one.
    std::vector<std::string> refs, good, half, other_half;
    for (int i = 0; i < 200; ++i) {
        const std::string r = "w" + std::to_string(i) + " x y z a b c";
        refs.push_back(r);
        good.push_back(r);
        half.push_back(i % 2 ? r : "q q q q q q q");
        other_half.push_back(i % 2 ? "q q q q q q q" : r);
    }
    relpos::BleuOptions o;
    o.tokenize = "none";
    auto st = [&](const std::vector<std::string>& h) { return relpos::sentence_bleu_stats(h, refs, o); };
    // better system, two seeds each: tiny p, positive difference with an interval above 0
    const auto br = relpos::paired_bootstrap({st(half), st(other_half)}, {st(good), st(good)}, 500, 7, o);
    CHECK(br.observed > 10);
    CHECK(br.ci_low > 0);
    CHECK(br.p_value == Approx(1.0 / 501));
    CHECK(br.seeds_system == 2);
    // a system against itself: no difference, p = 1
    const auto same = relpos::paired_bootstrap({st(half)}, {st(half)}, 200, 7, o);
    CHECK(same.observed == 0);
    CHECK(same.p_value == Approx(1.0));
    // two systems of the same quality on different sentences: large p
    const auto tie = relpos::paired_bootstrap({st(half)}, {st(other_half)}, 500, 7, o);
    CHECK(std::abs(tie.observed) < 1.0);
    CHECK(tie.p_value > 0.2);
    // deterministic for a seed
    CHECK(relpos::paired_bootstrap({st(half)}, {st(other_half)}, 500, 7, o).ci_low == tie.ci_low);
    CHECK_THROWS(relpos::paired_bootstrap({st(half)}, {}, 10, 1, o));
}

TEST_CASE("significance/t p-values and Holm's adjustment", "[significance]") {
    // Two-sided 5% points of Student's t give p = 0.05; t = 0 gives 1; large |t| gives ~0.
    CHECK(t_two_sided_p(12.706, 1) == Approx(0.05).margin(2e-5));
    CHECK(t_two_sided_p(-2.776, 4) == Approx(0.05).margin(1e-4));  // the table's values have 3 decimals
    CHECK(t_two_sided_p(2.042, 30) == Approx(0.05).margin(1e-4));
    CHECK(t_two_sided_p(0.0, 3) == Approx(1.0));
    CHECK(t_two_sided_p(1.0, 1) == Approx(0.5).margin(1e-12));  // Cauchy: P(|T| >= 1) = 1/2
    CHECK(t_two_sided_p(50.0, 4) < 1e-5);
    // the inverse: the table's 5% points back, and the |t| a 3-seed comparison needs in a family of 84
    CHECK(t_for_two_sided_p(0.05, 1) == Approx(12.706).margin(1e-3));
    CHECK(t_for_two_sided_p(0.05, 4) == Approx(2.776).margin(1e-3));
    CHECK(t_for_two_sided_p(0.05, 30) == Approx(t_critical_95(30)).margin(1e-3));
    CHECK(t_two_sided_p(t_for_two_sided_p(0.05 / 84, 2), 2) == Approx(0.05 / 84).epsilon(1e-6));
    CHECK(t_for_two_sided_p(1.0, 3) == Approx(0.0).margin(1e-6));
    CHECK_THROWS(t_for_two_sided_p(0.0, 3));
    CHECK_THROWS(t_for_two_sided_p(0.05, 0));
    // Holm: sorted 0.005, 0.01, 0.03, 0.04 (m = 4) -> 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06, 0.06,
    // returned in the input order.
    const auto adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
    REQUIRE(adj.size() == 4);
    CHECK(adj[0] == Approx(0.03));
    CHECK(adj[1] == Approx(0.06));
    CHECK(adj[2] == Approx(0.06));
    CHECK(adj[3] == Approx(0.02));
    CHECK(holm_adjust({0.6, 0.9})[1] == Approx(1.0));  // capped at 1
    CHECK(holm_adjust({}).empty());
}
