// Raw text normalized like the bundled Multi30k tokenized files (experiments/tasks/multi30k_normalize.hpp), and its
// use in relpos eval / translate (--input raw | tokenized).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "experiments/cli/commands.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/tasks/multi30k.hpp"
#include "experiments/tasks/multi30k_normalize.hpp"
#include "tests/cli_helpers.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {
const std::string kData = std::string(RELPOS_SOURCE_DIR) + "/data/multi30k";
const std::string kBin = std::string(RELPOS_BINARY_DIR) + "/relpos";

struct Case {
    const char* raw;
    const char* normalized;
};

void check_cases(const std::vector<Case>& cases, const std::string& lang) {
    for (const auto& c : cases) {
        INFO(lang << ": " << c.raw);
        CHECK(normalize_like_multi30k(c.raw, lang) == c.normalized);
    }
}

// Lines i in [0, n) (all when n = 0) of a split whose normalized raw text equals the bundled tokenized text.
std::pair<std::size_t, std::size_t> identical_lines(const std::string& split, const std::string& lang, std::size_t n) {
    const auto raw = read_lines(multi30k_path(kData, split, lang, false));
    const auto tok = read_lines(multi30k_path(kData, split, lang, true));
    REQUIRE(raw.size() == tok.size());
    if (n == 0 || n > raw.size()) n = raw.size();
    std::size_t same = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::string got = normalize_like_multi30k(raw[i], lang);
        same += got == tok[i];
        if (got != tok[i]) UNSCOPED_INFO(split << "." << lang << " line " << i + 1 << ": " << got << " | " << tok[i]);
    }
    return {same, n};
}
}  // namespace

// Every example is a line (or part of one) of the raw files, with the bundled tokenized line.
TEST_CASE("normalize/german_examples_from_the_files", "[normalize]") {
    check_cases({
        {"Ein Mann schläft in einem grünen Raum auf einem Sofa.", "ein mann schläft in einem grünen raum auf einem sofa ."},
        {"Ein Mann klettert eine Felswand hoch und erreicht einen Überhang.",
         "ein mann klettert eine felswand hoch und erreicht einen überhang ."},  // Ü
        {"ÄRGER IM GROẞEN ÖLHAFEN", "ärger im großen ölhafen"},                 // Ä Ö ẞ (made up)
        {"Ein Boston Terrier läuft über saftig-grünes Gras.", "ein boston terrier läuft über saftig-grünes gras ."},
        {"Ein Mann mit beginnender Glatze, der eine rote Rettungsweste trägt, sitzt in einem kleinen Boot.",
         "ein mann mit beginnender glatze , der eine rote rettungsweste trägt , sitzt in einem kleinen boot ."},
        // quotes: „ “ ” become &quot;, and German puts the period after the closing quote
        {"Ein Schild, auf dem steht „Welcome Bikers“.", "ein schild , auf dem steht &quot; welcome bikers &quot; ."},
        {"Eine Anzeige, die sagt: „Wir sind alle Arbeitnehmer.“", "eine anzeige , die sagt : &quot; wir sind alle arbeitnehmer &quot; ."},
        {"Unter einer „Mongolian BBQ“-Leuchtreklame.", "unter einer &quot; mongolian bbq &quot; -leuchtreklame ."},
        // apostrophes: split on both sides; ‘ ’ inside a word are apostrophes, outside quotes
        {"Ein kleiner Junge spielt bei McDonald's GameCube.", "ein kleiner junge spielt bei mcdonald &apos; s gamecube ."},
        {"Trader Joe‘s, mit einem Wagen", "trader joe &apos; s , mit einem wagen"},
        {"macht das „Hook ’em Horns“-Zeichen.", "macht das &quot; hook &quot; em horns &quot; -zeichen ."},
        // numbers, ordinals and abbreviations
        {"Trikot mit der Nummer\u00a028.", "trikot mit der nummer 28."},
        {"einem Scheck über 10.000 Euro, das Benzin kostet 2,52 Dollar.",
         "einem scheck über 10.000 euro , das benzin kostet 2,52 dollar ."},
        {"ein Durchmesser von ca. 120 cm", "ein durchmesser von ca. 120 cm"},
        {"auf der Straße. eine Frau", "auf der straße. eine frau"},  // a lowercase word follows: kept
        {"Vier Männer mit Helmen (2 davon beobachtend) graben.", "vier männer mit helmen ( 2 davon beobachtend ) graben ."},
        {"Er spricht auf einem Q&A.", "er spricht auf einem q &amp; a."},
        {"Vier Menschen – drei Mädchen und ein Junge – sind auf einem Boot.",
         "vier menschen - drei mädchen und ein junge - sind auf einem boot ."},
        {"Ein Bild von Freund/in, Segelboot,mit 50 %.", "ein bild von freund / in , segelboot , mit 50 % ."},
        {"rennt über den Sand..", "rennt über den sand .."},
        {"  ", ""},
    }, "de");
}

TEST_CASE("normalize/english_examples_from_the_files", "[normalize]") {
    check_cases({
        {"A boy wearing headphones sits on a woman's shoulders.", "a boy wearing headphones sits on a woman &apos;s shoulders ."},
        {"The images aren't showing up, so I 'm going to assume", "the images aren &apos;t showing up , so i &apos; m going to assume"},
        {"A man stands outside a ladies' bathroom.", "a man stands outside a ladies &apos; bathroom ."},
        {"A man in his 30's is sitting", "a man in his 30 &apos;s is sitting"},
        {"A women` s hand", "a women &apos; s hand"},
        // English keeps , and . inside the quotes
        {"A sign that says \"Come on now ... what's gayer than tea.\"",
         "a sign that says &quot; come on now ... what &apos;s gayer than tea . &quot;"},
        {"A sign reading \"Welcome\", and a man.", "a sign reading &quot; welcome , &quot; and a man ."},
        {"A man showing a book at the U.S. Army Library.", "a man showing a book at the u.s. army library ."},
        {"Mr. Soccer player of the green team attempts a shot.", "mr. soccer player of the green team attempts a shot ."},
        {"A union employee making 95,000 a year for $ 2.52.", "a union employee making 95,000 a year for $ 2.52 ."},
        {"A gas station name m&amp;h.", "a gas station name m &amp; amp ; h ."},
        {"A curly-haired kid is #1!", "a curly-haired kid is # 1 !"},
        {"Shirt number 28.", "shirt number 28 ."},  // no English ordinals
    }, "en");
}

TEST_CASE("normalize/invalid_utf8_passes_through", "[normalize]") {
    CHECK(normalize_like_multi30k("Ab\xff" "c.", "de") == "ab\xff" "c .");
}

TEST_CASE("normalize/looks_tokenized", "[normalize]") {
    CHECK(looks_tokenized("a woman &apos;s shoulders"));
    CHECK(looks_tokenized("ein mann fährt fahrrad ."));
    CHECK_FALSE(looks_tokenized("Ein Mann fährt Fahrrad."));
    CHECK_FALSE(looks_tokenized("."));
    CHECK_FALSE(looks_tokenized(""));
}

// The figures of data/multi30k/README.md ("Normalizing raw input"): every val and test line came out
// identical when they were measured; the tests allow a margin.
TEST_CASE("normalize/matches_the_bundled_tokenized_files", "[normalize]") {
    for (const std::string lang : {"de", "en"}) {
        const auto [same, n] = identical_lines("val", lang, 200);
        INFO("val." << lang << ", first 200 lines: " << same << " identical");
        CHECK(n == 200);
        CHECK(same >= 198);  // 99%
    }
    for (const std::string split : {"val", "test2016", "test2017"})
        for (const std::string lang : {"de", "en"}) {
            const auto [same, n] = identical_lines(split, lang, 0);
            INFO(split << "." << lang << ": " << same << " of " << n << " identical");
            CHECK(double(same) >= 0.995 * double(n));
        }
}

TEST_CASE("normalize/model_text_follows_the_run_and_input", "[normalize]") {
    ExperimentConfig cfg;  // multi30k, data.tokenized: true
    REQUIRE(reads_tokenized_text(cfg));
    CHECK(model_text(cfg, "Ein Mann fährt Fahrrad.", "de", InputForm::Raw) == "ein mann fährt fahrrad .");
    CHECK(model_text(cfg, "Ein Mann fährt Fahrrad.", "de", InputForm::Tokenized) == "Ein Mann fährt Fahrrad.");
    CHECK(model_text(cfg, "A woman's bike.", "en", InputForm::Raw) == "a woman &apos;s bike .");
    cfg.data.tokenized = false;  // trained on raw text: the text is left alone
    CHECK(model_text(cfg, "Ein Mann fährt Fahrrad.", "de", InputForm::Raw) == "Ein Mann fährt Fahrrad.");
    cfg.data.tokenized = true;
    cfg.data.task = "copy";
    CHECK(model_text(cfg, "4 5 6", "de", InputForm::Raw) == "4 5 6");
}

TEST_CASE("normalize/input_flag_rejects_a_bad_value", "[normalize][cli]") {
    CHECK(parse_input_form("raw") == InputForm::Raw);
    CHECK(parse_input_form("tokenized") == InputForm::Tokenized);
    CHECK_THROWS_WITH(parse_input_form("Raw"), Catch::Contains("--input 'Raw'") && Catch::Contains("raw (") &&
                                                   Catch::Contains("tokenized ("));
    // on the command line: exit 2, one line, before any run is read
    for (const std::string cmd : {"translate --run no/such/run --input lowercased",
                                  "eval --run no/such/run --src x --ref y --input lowercased"}) {
        const auto r = test::sh("echo x | " + kBin + " " + cmd);
        INFO(cmd << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
        CHECK_THAT(r.out, Catch::StartsWith("error: --input 'lowercased' is not a form of text"));
    }
}

TEST_CASE("normalize/the_normalize_command", "[normalize][cli]") {
    const auto ok = test::sh("printf 'Ein Mann fährt Fahrrad.\\nA woman\\n' | " + kBin + " normalize --lang de");
    CHECK(ok.code == 0);
    CHECK(ok.out == "ein mann fährt fahrrad .\na woman\n");
    const auto bad = test::sh("echo x | " + kBin + " normalize --lang fr");
    CHECK(bad.code == 2);
    CHECK(bad.out == "error: --lang 'fr' is not a language of task multi30k; use de or en\n");
    // --task names the task whose training text to match (the default: the first that normalizes)
    CHECK(test::sh("printf 'A woman.\\n' | " + kBin + " normalize --lang en --task multi30k").out == "a woman .\n");
    const auto plain = test::sh("echo x | " + kBin + " normalize --lang en --task copy");
    CHECK(plain.code == 2);
    CHECK(plain.out == "error: --task 'copy' reads text as given and has no normalization; the tasks that do: multi30k\n");
    const auto unknown = test::sh("echo x | " + kBin + " normalize --lang en --task nosuch");
    CHECK(unknown.code == 2);
    CHECK(unknown.out == "error: --task 'nosuch' is not a registered task; the tasks that do: multi30k\n");
}

// A tiny run that learns 16 sentence pairs of the tokenized files by heart (about 5 s). Then eval on the
// raw files gives the hypotheses and bleu_tok of eval on the tokenized files with --input tokenized, and
// the run's own val bleu_tok; the raw files read as they are (the bug `--input raw` fixed, 2026-11-24) score
// far lower.
TEST_CASE("normalize/eval_and_translate_on_raw_text", "[normalize][cli]") {
    const fs::path dir = fs::temp_directory_path() / ("relpos-normalize-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "data" / "tok");
    const std::string D = (dir / "data").string();
    for (const std::string split : {"train", "val"})  // both: the first 16 lines of val
        for (const std::string lang : {"de", "en"})
            for (bool tok : {false, true}) {
                auto lines = read_lines(multi30k_path(kData, "val", lang, tok));
                lines.resize(16);
                write_lines(multi30k_path(D, split, lang, tok), lines);
            }
    std::ofstream(dir / "tiny.yaml") << "name: tiny\nthreads: 1\n"
                                        "data: {task: multi30k, dir: " << D << ", tokenized: true, vocab_size: 150, "
                                        "test_splits: []}\n"
                                        "model: {d_model: 32, heads: 2, d_ff: 64, encoder_layers: 1, decoder_layers: 1, "
                                        "dropout: 0}\n"
                                        "train: {epochs: 300, batch_tokens: 4000, warmup: 30, lr: 1.0, "
                                        "label_smoothing: 0, eval_every: 0}\n"
                                        "eval: {beam: 1, metrics: [bleu_tok]}\n";
    const auto trained = test::sh(kBin + " run " + (dir / "tiny.yaml").string() + " results_dir=" +
                                  (dir / "results").string() + " --quiet");
    INFO(trained.out);
    REQUIRE(trained.code == 0);
    const fs::path run = fs::directory_iterator(dir / "results" / "tiny" / "runs")->path();

    const std::string ev = kBin + " eval --run " + run.string();
    const auto raw = test::sh(ev + " --src " + D + "/val.de.gz --ref " + D + "/val.en.gz --out " + (dir / "raw.txt").string());
    const auto tok = test::sh(ev + " --src " + multi30k_path(D, "val", "de", true) + " --ref " +
                              multi30k_path(D, "val", "en", true) + " --input tokenized --out " + (dir / "tok.txt").string());
    INFO(raw.out << tok.out);
    REQUIRE(raw.code == 0);
    REQUIRE(tok.code == 0);
    CHECK(read_lines((dir / "raw.txt").string()) == read_lines((dir / "tok.txt").string()));
    const auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
    CHECK_THAT(first_line(raw.out), Catch::StartsWith("BLEU (tokenized, lc; bleu_tok)"));
    CHECK(first_line(raw.out) == first_line(tok.out));
    CHECK_THAT(raw.out, Catch::Contains("BLEU (sacreBLEU 13a, lc; bleu)  BLEU = "));
    CHECK_THAT(tok.out, Catch::Contains("not computed"));
    CHECK_THAT(raw.out + tok.out, !Catch::Contains("warning"));
    // the run's own val bleu_tok, scored against the tokenized references while training
    std::ifstream results(run / "results.json");
    const std::string json((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
    const auto number_after = [](const std::string& s, const std::string& key) {
        const auto at = s.find(key);
        REQUIRE(at != std::string::npos);
        return std::stod(s.substr(at + key.size()));
    };
    INFO(json);
    CHECK(number_after(raw.out, "BLEU = ") == Approx(number_after(json, "\"val.bleu_tok\": ")).margin(0.006));

    CHECK(number_after(raw.out, "BLEU = ") > 80);  // learnt by heart
    // the raw files given to the model as they are score far lower
    const auto unnormalized = test::sh(ev + " --src " + D + "/val.de.gz --ref " + D + "/val.en.gz --input tokenized");
    INFO(unnormalized.out);
    CHECK(number_after(unnormalized.out, "BLEU = ") < number_after(raw.out, "BLEU = ") - 20);

    // tokenized files read as raw text: a warning, not silence
    const auto twice = test::sh(ev + " --src " + multi30k_path(D, "val", "de", true) + " --ref " +
                                multi30k_path(D, "val", "en", true));
    CHECK(twice.code == 0);
    CHECK_THAT(twice.out, Catch::Contains("warning: ") && Catch::Contains("look tokenized already") &&
                              Catch::Contains("--input tokenized"));

    // translate: raw sentences give what their tokenized forms give with --input tokenized
    const auto raw_lines = read_lines(D + "/val.de.gz"), tok_lines = read_lines(multi30k_path(D, "val", "de", true));
    std::ofstream(dir / "raw.de") << raw_lines[0] << "\n" << raw_lines[1] << "\n";
    std::ofstream(dir / "tok.de") << tok_lines[0] << "\n" << tok_lines[1] << "\n";
    const auto tr_raw = test::sh(kBin + " translate --run " + run.string() + " < " + (dir / "raw.de").string());
    const auto tr_tok = test::sh(kBin + " translate --run " + run.string() + " --input tokenized < " + (dir / "tok.de").string());
    INFO(tr_raw.out << tr_tok.out);
    CHECK(tr_raw.code == 0);
    CHECK(std::count(tr_raw.out.begin(), tr_raw.out.end(), '\n') == 2);
    CHECK(tr_raw.out == tr_tok.out);
    fs::remove_all(dir);
}
