// Config layer: every kind of user error comes out as one located sentence; overrides, sweeps, sharding
// and the resolved YAML behave as docs/configs.md says. Runs with the repository root as working directory.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "experiments/config/config.hpp"
#include "experiments/run/sweep.hpp"
#include "nn/printable.hpp"

using namespace relpos;

namespace {

const std::string kDir = "tests/fixtures/configs/";

std::string fixture(const std::string& name) { return kDir + name; }

// The message of the ConfigError `f` throws (fails the test when it throws nothing or something else).
std::string config_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    } catch (const std::exception& e) {
        FAIL("expected ConfigError, got another exception: " << e.what());
    }
    FAIL("expected ConfigError, nothing was thrown");
    return "";
}

std::string option_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const nn::OptionError& e) {
        return e.what();
    } catch (const std::exception& e) {
        FAIL("expected nn::OptionError, got another exception: " << e.what());
    }
    FAIL("expected nn::OptionError, nothing was thrown");
    return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A fresh directory under /tmp for files a test writes, removed when the test ends.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/relpos-config-test-XXXXXX";
        const char* d = mkdtemp(tmpl);
        REQUIRE(d != nullptr);
        path = d;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    operator const std::string&() const { return path; }
};

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("config/defaults", "[config]") {
    const ExperimentConfig c = load_config(fixture("minimal.yaml"));
    CHECK(c.name == "minimal");
    CHECK(c.source == fixture("minimal.yaml"));
    CHECK(c.results_dir == "results");
    CHECK(c.seed == 1);
    CHECK(c.threads == 2);
    CHECK(c.data.task == "copy");
    CHECK(c.data.vocab_size == 8000);
    CHECK(c.data.test_splits == std::vector<std::string>{"test"});  // a synthetic task: its test split is test
    CHECK(c.data.synthetic.train_len.min == 5);
    CHECK(c.data.synthetic.test_len.max == 40);
    CHECK(c.model.d_model == 256);
    CHECK(c.model.heads == 8);
    CHECK(c.model.dropout == 0.1);
    CHECK(c.model.share_embeddings == "all");
    REQUIRE(c.model.position.size() == 1);
    CHECK(c.model.position[0].type == "sinusoidal");
    CHECK(c.train.warmup == 4000);
    CHECK(c.train.adam_eps == 1e-9);
    CHECK(c.eval.beam == 4);
    CHECK(c.eval.splits == std::vector<std::string>{"val", "test"});
    CHECK(c.eval.metrics == std::vector<std::string>{"bleu_tok", "bleu"});
    CHECK(c.sweep.grid.empty());
    CHECK_FALSE(c.report.reference.has_value());
}

TEST_CASE("config/full_file", "[config]") {
    const ExperimentConfig c = load_config(fixture("full.yaml"));
    CHECK(c.name == "full.example-1");
    CHECK(c.data.src == "en");
    CHECK(c.model.norm == "pre");
    REQUIRE(c.model.position.size() == 2);
    CHECK(c.model.position[1].type == "shaw");
    CHECK(c.model.position[1].key == "model.position[1]");
    CHECK(c.train.adam_eps == 1e-8);
    CHECK(c.train.time_limit_minutes == 30.5);
    CHECK(c.eval.splits == std::vector<std::string>{"val", "test2017"});
    REQUIRE(c.sweep.grid.size() == 2);
    CHECK(c.sweep.grid[0].key == "model.position[1].k");  // file order
    CHECK(c.sweep.grid[1].key == "model.dropout");
    REQUIRE(c.report.reference.has_value());
    CHECK(c.report.reference->title == "Shaw et al. 2018");
    CHECK(c.report.reference->values.at("8") == 25.9);
}

TEST_CASE("config/unknown_key", "[config]") {
    const std::string msg = config_error([] { load_config(fixture("unknown_key.yaml")); });
    CHECK(msg == "tests/fixtures/configs/unknown_key.yaml:7:3: model.d_modle: unknown key (did you mean 'd_model'?)");

    // Top level, and a key far from every known one lists what is allowed.
    const TempDir dir;
    const std::string top = write_file(dir, "top.yaml", "name: x\ndata: {task: copy}\nmodle: {}\n");
    CHECK(has(config_error([&] { load_config(top); }), "top.yaml:3:1: modle: unknown key (did you mean 'model'?)"));
    const std::string far = write_file(dir, "far.yaml", "name: x\ndata: {task: copy}\neval:\n  zzzzzzzz: 1\n");
    const std::string m = config_error([&] { load_config(far); });
    CHECK(has(m, "far.yaml:4:3: eval.zzzzzzzz: unknown key (known keys: "));
    CHECK(has(m, "beam"));
}

TEST_CASE("config/wrong_type", "[config]") {
    CHECK(config_error([] { load_config(fixture("wrong_type.yaml")); }) ==
          "tests/fixtures/configs/wrong_type.yaml:5:11: train.epochs: must be an integer >= 0, got 'ten'");
    const TempDir dir;
    // YAML 1.1's yes/no are not booleans here.
    const std::string f = write_file(dir, "t.yaml", "name: x\ndata: {task: copy}\nmodel:\n  scale_embeddings: yes\n");
    CHECK(has(config_error([&] { load_config(f); }), "t.yaml:4:21: model.scale_embeddings: must be true or false, got 'yes'"));
    const std::string g = write_file(dir, "g.yaml", "name: x\ndata: {task: copy}\nmodel:\n  norm: [pre]\n");
    CHECK(has(config_error([&] { load_config(g); }), "g.yaml:4:9: model.norm: must be one of post, pre, got a list"));
}

TEST_CASE("config/out_of_range", "[config]") {
    CHECK(config_error([] { load_config(fixture("dropout_range.yaml")); }) ==
          "tests/fixtures/configs/dropout_range.yaml:5:12: model.dropout: must be a number in [0, 1), got 1.5");
    CHECK(config_error([] { load_config(fixture("negative_epochs.yaml")); }) ==
          "tests/fixtures/configs/negative_epochs.yaml:5:11: train.epochs: must be an integer >= 0, got -1");
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"train.lr=0"}); }),
              "train.lr: must be a number > 0, got 0"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"data.vocab_size=50"}); }),
              "data.vocab_size: must be an integer in [100, 64000], got 50"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"model.norm=mid"}); }),
              "model.norm: must be one of post, pre, got 'mid'"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"eval.metrics=[bleu, bleu_tk]"}); }),
              "eval.metrics[1]: must be one of bleu, bleu_tok, loss, ppl, accuracy, token_accuracy, ppl_sliding, loss_by_position, extension_ratio, got 'bleu_tk' (did you mean 'bleu_tok'?)"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"data.synthetic.train_len=[20, 5]"}); }),
              "data.synthetic.train_len: must be [min, max] with integers 1 <= min <= max <= 100000, got [20, 5]"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"name=../x"}); }),
              "name: must be letters, digits, '_', '.' and '-' only"));
}

TEST_CASE("config/heads_divide_d_model", "[config]") {
    CHECK(config_error([] { load_config(fixture("heads.yaml")); }) ==
          "tests/fixtures/configs/heads.yaml:6:10: model.heads: must divide model.d_model = 100, got 8 (100 % 8 = 4)");
    // An override of d_model against the file's heads blames the override.
    CHECK(config_error([] { load_config(fixture("minimal.yaml"), {"model.d_model=100"}); }) ==
          "command-line override 'model.d_model=100': model.d_model: must be a multiple of model.heads = 8, got 100 "
          "(100 % 8 = 4)");
}

TEST_CASE("config/data.synthetic is read by the tasks that generate their data, refused for the others", "[config]") {
    // full.yaml is a multi30k config: its data.synthetic would change nothing
    CHECK(has(config_error([] { load_config(fixture("full.yaml"), {"data.synthetic.train_len=[3, 9]"}); }),
              "command-line override 'data.synthetic.train_len=[3, 9]': data.synthetic.train_len: task 'multi30k' does "
              "not read it"));
    const ExperimentConfig c = load_config(fixture("minimal.yaml"), {"data.synthetic.train_len=[3, 9]", "data.synthetic.n_symbols=12"});
    CHECK(c.data.synthetic.train_len.max == 9);
    CHECK(c.data.synthetic.n_symbols == 12);
    const TempDir dir;
    const ExperimentConfig back = load_config(write_file(dir, "resolved.yaml", to_yaml(c)));
    CHECK(to_yaml(back) == to_yaml(c));
}

TEST_CASE("config/missing_data_dir", "[config]") {
    const std::string msg = config_error([] { load_config(fixture("missing_data_dir.yaml")); });
    CHECK(has(msg, "tests/fixtures/configs/missing_data_dir.yaml:4:8: data.dir: directory 'tests/fixtures/no_such_dir' "
                   "does not exist"));
    // Not checked when asked not to (re-reading a finished run's config on another machine).
    LoadFlags flags;
    flags.check_paths = false;
    CHECK_NOTHROW(load_config(fixture("missing_data_dir.yaml"), {}, flags));
    // A task that reads no files does not read data.dir either: one set away from its default is refused as such.
    CHECK(has(config_error([] { load_config(fixture("missing_data_dir.yaml"), {"data.task=copy"}); }),
              "missing_data_dir.yaml:4:8: data.dir: task 'copy' does not read it"));
}

TEST_CASE("config/yaml_syntax_error", "[config]") {
    const std::string msg = config_error([] { load_config(fixture("syntax_error.yaml")); });
    CHECK(has(msg, "tests/fixtures/configs/syntax_error.yaml:"));
    CHECK(has(msg, "invalid YAML: end of sequence flow not found"));
    // The line yaml-cpp points at is inside the unclosed list or right after it.
    const bool line_ok = has(msg, "syntax_error.yaml:4:") || has(msg, "syntax_error.yaml:5:");
    CHECK(line_ok);
}

TEST_CASE("config/missing_file", "[config]") {
    CHECK(config_error([] { load_config("configs/no_such_config.yaml"); }) ==
          "config file configs/no_such_config.yaml does not exist");
    CHECK(has(config_error([] { load_config("tests/fixtures"); }), "is a directory"));
}

TEST_CASE("config/empty_and_non_map", "[config]") {
    CHECK(has(config_error([] { load_config(fixture("empty.yaml")); }),
              "config file tests/fixtures/configs/empty.yaml is empty"));
    CHECK(has(config_error([] { load_config(fixture("not_a_map.yaml")); }),
              "tests/fixtures/configs/not_a_map.yaml:1:1: the top level must be a map of settings"));
    const TempDir dir;
    const std::string noname = write_file(dir, "noname.yaml", "data: {task: copy}\n");
    CHECK(has(config_error([&] { load_config(noname); }), "noname.yaml:1:1: name: is required"));
    const std::string dup = write_file(dir, "dup.yaml", "name: a\ndata: {task: copy}\nname: b\n");
    CHECK(has(config_error([&] { load_config(dup); }), "dup.yaml:3:1: name: duplicate key (first given at line 1)"));
    const std::string section = write_file(dir, "section.yaml", "name: a\ndata: copy\n");
    CHECK(has(config_error([&] { load_config(section); }), "section.yaml:2:7: data: must be a map of settings, got 'copy'"));
}

TEST_CASE("config/override_parsing", "[config]") {
    const ExperimentConfig c = load_config(fixture("position_map.yaml"),
                                           {"train.epochs=2", "model.position.k=4", "data.test_splits=[val,test2016]",
                                            "model.dropout=0", "description=", "data.task=multi30k", "data.src = en",
                                            "data.tgt=de"});
    CHECK(c.train.epochs == 2);
    CHECK(c.data.test_splits == std::vector<std::string>{"val", "test2016"});
    CHECK(c.model.dropout == 0.0);
    CHECK(c.description.empty());
    CHECK(c.data.src == "en");
    REQUIRE(c.model.position.size() == 1);
    CHECK(c.model.position[0].type == "shaw");
    CHECK(c.model.position[0].options().get_int("k", 16, 0, 1 << 20) == 4);
    // Later overrides win; a type override replaces the encoding's name and keeps its options.
    const ExperimentConfig d = load_config(fixture("position_map.yaml"), {"model.position.type=t5", "train.epochs=3",
                                                                          "train.epochs=5"});
    CHECK(d.model.position[0].type == "t5");
    CHECK(d.train.epochs == 5);
    // A config without position gets one from an override.
    CHECK(load_config(fixture("minimal.yaml"), {"model.position.type=shaw"}).model.position[0].type == "shaw");
    // Indexing a list.
    CHECK(load_config(fixture("position_list.yaml"), {"model.position[1].type=rope"}).model.position[1].type == "rope");

    CHECK(config_error([] { load_config(fixture("minimal.yaml"), {"train.epoch=2"}); }) ==
          "command-line override 'train.epoch=2': train.epoch: unknown key (did you mean 'epochs'?)");
    CHECK(config_error([] { load_config(fixture("minimal.yaml"), {"trian.epochs=2"}); }) ==
          "command-line override 'trian.epochs=2': trian: unknown key (did you mean 'train'?)");
    CHECK(config_error([] { load_config(fixture("minimal.yaml"), {"model.dropout"}); }) ==
          "command-line override 'model.dropout': expected key=value, e.g. model.dropout=0.3 or "
          "data.test_splits=[val,test2016]");
    CHECK(config_error([] { load_config(fixture("minimal.yaml"), {"model.dropout=1.5"}); }) ==
          "command-line override 'model.dropout=1.5': model.dropout: must be a number in [0, 1), got 1.5");
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"model..dropout=1"}); }),
              "'model..dropout' is not a dotted key"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"=1"}); }), "the key before '=' is empty"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"data.test_splits=[val,"}); }),
              "command-line override 'data.test_splits=[val,': data.test_splits: the value is not valid YAML"));
    CHECK(has(config_error([] { load_config(fixture("position_list.yaml"), {"model.position.k=4"}); }),
              "model.position is a list of 2 entries, so name one, e.g. model.position[0].k"));
    CHECK(has(config_error([] { load_config(fixture("position_list.yaml"), {"model.position[2].k=4"}); }),
              "model.position has 2 entries, so [2] is out of range"));
    CHECK(has(config_error([] { load_config(fixture("negative_epochs.yaml"), {"train.epochs.x=4"}); }),
              "train.epochs.x: train.epochs is a single value ('-1'), so it has no key 'x'"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"train.epochs.x=4"}); }),
              "command-line override 'train.epochs.x=4': train.epochs: must be an integer >= 0, got a map"));
}

TEST_CASE("config/position_list_vs_map", "[config]") {
    const ExperimentConfig m = load_config(fixture("position_map.yaml"));
    REQUIRE(m.model.position.size() == 1);
    CHECK(m.model.position[0].type == "shaw");
    CHECK(m.model.position[0].key == "model.position");
    CHECK(m.model.position[0].file == fixture("position_map.yaml"));

    const ExperimentConfig l = load_config(fixture("position_list.yaml"));
    REQUIRE(l.model.position.size() == 2);
    CHECK(l.model.position[0].type == "sinusoidal");
    CHECK(l.model.position[1].type == "shaw");
    CHECK(l.model.position[1].key == "model.position[1]");
    YamlOptions o = l.model.position[1].options();
    CHECK(o.get_int("k", 16, 0, 1 << 20) == 8);
    CHECK_NOTHROW(o.finish());  // `type` counts as read

    CHECK(config_error([] { load_config(fixture("position_no_type.yaml")); }) ==
          "tests/fixtures/configs/position_no_type.yaml:7:7: model.position[1].type: is required (the name of a "
          "registered position encoding, e.g. sinusoidal or shaw)");
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"model.position=shaw"}); }),
              "model.position: must be a map {type: <encoding>, ...options} or a list of such maps"));
    CHECK(load_config(fixture("minimal.yaml"), {"model.position=[]"}).model.position.empty());
    // An option set on a config without position creates a map that lacks `type`: the override is to blame.
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"model.position.k=3"}); }),
              "command-line override 'model.position.k=3': model.position.type: is required"));
}

TEST_CASE("config/yaml_options_plugin_errors", "[config]") {
    const ExperimentConfig c = load_config(fixture("plugin_bad_option.yaml"));
    REQUIRE(c.model.position.size() == 1);
    const PositionSpec& spec = c.model.position[0];
    {
        YamlOptions o = spec.options();
        CHECK(option_error([&] { o.get_int("k", 16, 0, 1 << 20); }) ==
              "tests/fixtures/configs/plugin_bad_option.yaml:7:8: model.position.k: must be an integer in [0, 1048576], "
              "got -1");
    }
    {
        YamlOptions o = spec.options();
        o.mark_used("k");
        o.get_bool("keys", true);
        o.get_bool("values", true);
        CHECK(option_error([&] { o.finish(); }) ==
              "tests/fixtures/configs/plugin_bad_option.yaml:8:5: model.position.keyz: unknown key (did you mean 'keys'?)");
    }
    {
        YamlOptions o = spec.options();
        CHECK(has(option_error([&] { o.fail("k", "must be at most max_len"); }),
                  "plugin_bad_option.yaml:7:8: model.position.k: must be at most max_len"));
        CHECK(has(option_error([&] { o.get_string("type", "", {"sinusoidal", "shaww"}); }),
                  "model.position.type: must be one of sinusoidal, shaww, got 'shaw' (did you mean 'shaww'?)"));
    }
    // A value from an override is located at the override.
    const ExperimentConfig d = load_config(fixture("plugin_bad_option.yaml"), {"model.position.k=-3"});
    YamlOptions o = d.model.position[0].options();
    CHECK(option_error([&] { o.get_int("k", 16, 0, 1 << 20); }) ==
          "command-line override 'model.position.k=-3': model.position.k: must be an integer in [0, 1048576], got -3");
    // Through the nn::Options interface, as a plug-in sees it.
    nn::Options& base = o;
    CHECK(base.get_double("missing", 0.5, 0, 1) == 0.5);
    CHECK(base.has("keyz"));
}

TEST_CASE("config/to_yaml_round_trip", "[config]") {
    const TempDir dir;
    for (const char* name : {"full.yaml", "minimal.yaml", "position_list.yaml", "sweep_k.yaml"}) {
        INFO(name);
        const ExperimentConfig a = load_config(fixture(name));
        const std::string text = to_yaml(a);
        const std::string path = write_file(dir, std::string("resolved_") + name, text);
        const ExperimentConfig b = load_config(path);
        CHECK(to_yaml(b) == text);
        CHECK(config_hash(b) == config_hash(a));
        CHECK(config_hash(a).size() == 16);
    }
    const ExperimentConfig full = load_config(fixture("full.yaml"));
    const std::string text = to_yaml(full);
    CHECK(has(text, "adam_eps: 1e-08"));
    CHECK(has(text, "dropout: 0.3"));
    CHECK(has(text, "k: 4"));
    // Defaults are written out.
    const std::string minimal = to_yaml(load_config(fixture("minimal.yaml")));
    CHECK(has(minimal, "warmup: 4000"));
    CHECK(has(minimal, "type: sinusoidal"));
    // The hash follows what decides a run, not names, titles or the sweep around it.
    const std::string h = config_hash(full);
    CHECK(config_hash(load_config(fixture("full.yaml"), {"description=other", "threads=4", "report.title=x",
                                                         "sweep.seeds=[9]"})) == h);
    CHECK(config_hash(load_config(fixture("full.yaml"), {"model.dropout=0.25"})) != h);
    CHECK(config_hash(load_config(fixture("full.yaml"), {"model.position[1].k=5"})) != h);
    CHECK(fnv1a64_hex("") == "cbf29ce484222325");
}

TEST_CASE("config/sweep_expansion", "[config]") {
    const std::string path = fixture("sweep.yaml");
    const ExperimentConfig c = load_config(path);
    const auto points = expand_sweep(c, path);
    REQUIRE(points.size() == 2 * 2 * 3);
    CHECK(points[0].id == "keys=true_values=false_seed=1");
    CHECK(points[1].id == "keys=true_values=false_seed=2");
    CHECK(points[3].id == "keys=true_values=true_seed=1");
    CHECK(points[11].id == "keys=false_values=true_seed=3");
    std::set<std::string> ids;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        CHECK(p.index == i);
        ids.insert(p.id);
        for (char ch : p.id) CHECK((std::isalnum(static_cast<unsigned char>(ch)) || std::string("=._-").find(ch) != std::string::npos));
    }
    CHECK(ids.size() == points.size());
    const SweepPoint& p = points[5];  // keys=true, values=true, seed=3
    CHECK(p.labels.at("model.position.keys") == "true");
    CHECK(p.labels.at("model.position.values") == "true");
    CHECK(p.labels.at("seed") == "3");
    CHECK(p.config.seed == 3);
    CHECK(p.overrides == std::vector<std::string>{"model.position.keys=true", "model.position.values=true", "seed=3"});
    YamlOptions o = points[6].config.model.position[0].options();
    CHECK(o.get_bool("keys", true) == false);
    CHECK(o.get_bool("values", true) == false);
    // The point's overrides, applied after the command line's, give the point's config.
    CHECK(to_yaml(load_config(path, points[6].overrides)) == to_yaml(points[6].config));

    // No sweep: one point named after the seed.
    const auto single = expand_sweep(load_config(fixture("minimal.yaml"), {"seed=5"}), fixture("minimal.yaml"), {"seed=5"});
    REQUIRE(single.size() == 1);
    CHECK(single[0].id == "seed=5");
    CHECK(single[0].config.seed == 5);

    // Seven values of k, clashing last components get longer names, command-line override of the grid.
    const auto ks = expand_sweep(load_config(fixture("sweep_k.yaml")), fixture("sweep_k.yaml"));
    REQUIRE(ks.size() == 7);
    CHECK(ks[4].id == "k=16_seed=1");
    CHECK(ks[4].labels.at("model.position.k") == "16");
    const std::vector<std::string> two{"sweep.grid.model.position.k=[4, 16]", "sweep.seeds=[1, 2]"};
    const auto sub = expand_sweep(load_config(fixture("sweep_k.yaml"), two), fixture("sweep_k.yaml"), two);
    REQUIRE(sub.size() == 4);
    CHECK(sub[3].id == "k=16_seed=2");
    const std::vector<std::string> clash{"sweep.grid.train.batch_tokens=[1000]", "sweep.grid.eval.batch_tokens=[2000]"};
    const auto cl = expand_sweep(load_config(fixture("minimal.yaml"), clash), fixture("minimal.yaml"), clash);
    REQUIRE(cl.size() == 1);
    CHECK(cl[0].id == "train.batch_tokens=1000_eval.batch_tokens=2000_seed=1");
    CHECK(cl[0].config.eval.batch_tokens == 2000);
    // Values only valid together are accepted (each is checked alone against the file, without cross-key rules).
    CHECK(expand_sweep(load_config(fixture("sweep_axes.yaml")), fixture("sweep_axes.yaml")).size() == 4);
    // Map values get a file-name-safe id.
    const std::vector<std::string> maps{"sweep.grid.model.position=[{type: shaw, k: 4}, {type: sinusoidal}]"};
    const auto mp = expand_sweep(load_config(fixture("minimal.yaml"), maps), fixture("minimal.yaml"), maps);
    REQUIRE(mp.size() == 2);
    CHECK(mp[0].id == "position=type-shaw-k-4_seed=1");
    CHECK(mp[0].labels.at("model.position") == "{type: shaw, k: 4}");
    CHECK(mp[0].config.model.position[0].type == "shaw");
}

TEST_CASE("config/sweep_value_errors", "[config]") {
    CHECK(config_error([] { load_config(fixture("sweep_bad_value.yaml")); }) ==
          "tests/fixtures/configs/sweep_bad_value.yaml:6:26: sweep.grid.model.dropout: must be a number in [0, 1), "
          "got 1.5");
    CHECK(config_error([] { load_config(fixture("sweep_unknown_key.yaml")); }) ==
          "tests/fixtures/configs/sweep_unknown_key.yaml:6:21: sweep.grid.model.d_modle: unknown key (did you mean "
          "'d_model'?)");
    // A combination of valid values that breaks a rule across keys names the sweep key at expansion.
    const ExperimentConfig c = load_config(fixture("sweep_bad_combo.yaml"));
    CHECK(config_error([&] { expand_sweep(c, fixture("sweep_bad_combo.yaml")); }) ==
          "tests/fixtures/configs/sweep_bad_combo.yaml:7:22: sweep.grid.model.heads: must divide model.d_model = 64, "
          "got 12 (64 % 12 = 4)");
    // Overriding a swept key.
    const ExperimentConfig k = load_config(fixture("sweep_k.yaml"), {"model.position.k=4"});
    CHECK(has(config_error([&] { expand_sweep(k, fixture("sweep_k.yaml"), {"model.position.k=4"}); }),
              "command-line override 'model.position.k=4': model.position.k: is swept by sweep.grid.model.position.k"));
    // Grid structure.
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"sweep.grid.model.dropout=0.1"}); }),
              "sweep.grid.model.dropout: must be a non-empty list of the values to try"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"sweep.grid.model.dropout=[0.1, 0.1]"}); }),
              "sweep.grid.model.dropout[1]: repeats the value 0.1"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"sweep.grid.name=[a, b]"}); }),
              "sweep.grid.name: cannot be swept"));
    CHECK(has(config_error([] { load_config(fixture("sweep_k.yaml"), {"report.rows=model.position.kk"}); }),
              "report.rows: must be a sweep.grid key (model.position.k), several joined by '+', or \"\", got 'model.position.kk' (did you mean "
              "'model.position.k'?)"));
    CHECK(has(config_error([] { load_config(fixture("sweep_k.yaml"), {"report.baseline=17"}); }),
              "report.baseline: must be one of the rows (0, 1, 2, 4, 16, 64, 256), got '17'"));
    CHECK(load_config(fixture("sweep_k.yaml"), {"report.baseline=16"}).report.baseline == "16");
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"report.baseline=16"}); }),
              "report.baseline: needs report.rows"));
    CHECK(load_config(fixture("sweep_k.yaml"), {"report.contrasts=[[\"4\", \"16\"]]"}).report.contrasts ==
          std::vector<std::pair<std::string, std::string>>{{"4", "16"}});
    CHECK(has(config_error([] { load_config(fixture("sweep_k.yaml"), {"report.contrasts=[[\"4\", \"17\"]]"}); }),
              "report.contrasts: entry 1 names '17', which is not one of the rows (0, 1, 2, 4, 16, 64, 256)"));
    CHECK(has(config_error([] { load_config(fixture("sweep_k.yaml"), {"report.contrasts=[[\"4\", \"4\"]]"}); }),
              "report.contrasts: entry 1 compares row '4' with itself"));
    CHECK(has(config_error([] { load_config(fixture("sweep_k.yaml"), {"report.contrasts=[\"4\", \"16\"]"}); }),
              "report.contrasts: must be a list of [row, other row] pairs"));
    CHECK(has(config_error([] { load_config(fixture("minimal.yaml"), {"report.contrasts=[[a, b]]"}); }),
              "report.contrasts: needs report.rows"));
    CHECK(has(config_error([] { load_config(fixture("sweep.yaml"), {"report.metrics=[test2017.bleu_tok]"}); }),
              "report.metrics: 'test2017.bleu_tok' names split 'test2017', which eval.splits (val, test) does not "
              "evaluate"));
}

TEST_CASE("config/sweep_cells: explicit points crossed with the grid and the seeds", "[config]") {
    const std::string path = fixture("sweep_cells.yaml");
    const ExperimentConfig c = load_config(path);
    REQUIRE(c.sweep.cell_count() == 3);
    const auto points = expand_sweep(c, path);
    REQUIRE(points.size() == 2 * 3 * 2);  // grid slowest, then the cells, seeds innermost
    CHECK(points[0].id == "dropout=0.1_position=type-rope_lr=0.25_seed=1");
    CHECK(points[3].id == "dropout=0.1_position=type-alibi_lr=0.5_seed=2");
    CHECK(points[11].id == "dropout=0.2_position=type-sinusoidal_lr=0.25_seed=2");
    const SweepPoint& p = points[3];
    CHECK(p.labels.at("model.position") == "{type: alibi}");
    CHECK(p.labels.at("train.lr") == "0.5");
    CHECK(p.labels.at("model.dropout") == "0.1");
    CHECK(p.config.model.position[0].type == "alibi");
    CHECK(p.config.train.lr == Approx(0.5));
    CHECK(p.config.seed == 2);
    CHECK(to_yaml(load_config(path, p.overrides)) == to_yaml(p.config));
    // A cell is a point, not an axis: no (alibi, 0.25) or (rope, 0.5) point.
    for (const auto& q : points)
        CHECK((q.labels.at("model.position") == "{type: alibi}") == (q.labels.at("train.lr") == "0.5"));
    // The written config reads back the same, cells included; a config without cells writes none.
    const std::string text = to_yaml(c);
    CHECK(has(text, "cells:"));
    TempDir dir;
    CHECK(to_yaml(load_config(write_file(dir.path, "cells.yaml", text))) == text);
    CHECK_FALSE(has(to_yaml(load_config(fixture("sweep_k.yaml"))), "cells:"));
    // Rows and columns may name cell keys; the labels are the cells' own combinations.
    CHECK(report_axis_labels(c, "model.position") ==
          std::vector<std::string>{"{type: rope}", "{type: alibi}", "{type: sinusoidal}"});
    CHECK(report_axis_labels(c, "model.position+train.lr") ==
          std::vector<std::string>{"{type: rope} · 0.25", "{type: alibi} · 0.5", "{type: sinusoidal} · 0.25"});
    CHECK(report_axis_labels(c, "model.dropout+train.lr") ==
          std::vector<std::string>{"0.1 · 0.25", "0.1 · 0.5", "0.2 · 0.25", "0.2 · 0.5"});
    const auto rows = load_config(path, {"report.columns=\"\"", "report.contrasts=[[\"{type: alibi}\", \"{type: rope}\"]]"});
    CHECK(rows.report.contrasts.size() == 1);
    // Run names do not change when cells are added: the ids of a cell's points depend on its own values.
    const auto more = expand_sweep(load_config(path, {"sweep.cells=[{model.position: {type: rope}, train.lr: 0.25}]"}), path,
                                   {"sweep.cells=[{model.position: {type: rope}, train.lr: 0.25}]"});
    REQUIRE(more.size() == 4);
    CHECK(more[0].id == points[0].id);
    CHECK(config_hash(more[0].config) == config_hash(points[0].config));
}

TEST_CASE("config/sweep_cells errors name the cell and the key", "[config]") {
    CHECK(config_error([] { load_config(fixture("sweep_cells_bad_value.yaml")); }) ==
          "tests/fixtures/configs/sweep_cells_bad_value.yaml:7:49: sweep.cells[1].train.lr: must be a number > 0, got -1");
    const std::string path = fixture("sweep_cells.yaml");
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[{train.lr: 0.1}, {train.warmup: 10}]"}); }),
              "sweep.cells[1]: must set the same keys as the first cell (train.lr), got train.warmup"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[{train.lr: 0.1}, {train.lr: 0.1}]"}); }),
              "sweep.cells[1]: repeats an earlier cell"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[{model.dropout: 0.3}]"}); }),
              "sweep.cells[0].model.dropout: is swept by sweep.grid.model.dropout too"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.grid={}", "sweep.cells=[{model: {d_model: 32}, model.heads: 4}]"}); }),
              "sweep.cells[0].model.heads: overlaps model: set a key or keys under it, not both"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[{name: x}]"}); }), "sweep.cells[0].name: cannot be swept"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[]"}); }), "sweep.cells: must be a non-empty list of maps"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[3]"}); }), "sweep.cells[0]: must be a map"));
    CHECK(has(config_error([&] { load_config(path, {"sweep.cells=[{seed: 3}]"}); }),
              "sweep.seeds: cannot be combined with 'seed' in sweep.cells"));
    CHECK(has(config_error([&] { load_config(path, {"report.rows=train.lrr"}); }),
              "report.rows: must be a sweep.grid key (model.dropout, model.position, train.lr)"));
    const ExperimentConfig c = load_config(path, {"train.lr=0.3"});
    CHECK(has(config_error([&] { expand_sweep(c, path, {"train.lr=0.3"}); }),
              "train.lr: is set by sweep.cells; to run only some cells, override sweep.cells=[...] instead"));
}

TEST_CASE("config/eval.split_metrics: read, written back, and refused in one sentence", "[config]") {
    const std::string path = fixture("minimal.yaml");
    const ExperimentConfig c = load_config(path, {"eval.splits=[val, test]", "eval.metrics=[accuracy, loss]",
                                                  "eval.split_metrics={val: [loss]}"});
    CHECK(c.eval.metrics_for("val") == std::vector<std::string>{"loss"});
    CHECK(c.eval.metrics_for("test") == std::vector<std::string>{"accuracy", "loss"});
    const TempDir dir;
    CHECK(load_config(write_file(dir, "resolved.yaml", to_yaml(c))).eval.split_metrics == c.eval.split_metrics);
    CHECK(to_yaml(load_config(path)).find("split_metrics") == std::string::npos);  // absent: not written
    CHECK(has(config_error([&] { load_config(path, {"eval.splits=[val, test]", "eval.split_metrics={tset: [loss]}"}); }),
              "eval.split_metrics.tset: names the split 'tset', which is not one of eval.splits (val, test) (did you mean 'test'?)"));
    CHECK(has(config_error([&] { load_config(path, {"eval.splits=[val, test]", "eval.split_metrics={val: []}"}); }),
              "eval.split_metrics.val: must list at least one metric"));
    CHECK(has(config_error([&] { load_config(path, {"eval.splits=[val, test]", "eval.split_metrics={val: [blue]}"}); }),
              "eval.split_metrics.val"));
    // report.metrics of that split must be among its own metrics
    CHECK(has(config_error([&] {
              load_config(path, {"eval.splits=[val, test]", "eval.metrics=[accuracy, loss]", "eval.split_metrics={val: [loss]}",
                                 "report.metrics=[val.accuracy]"});
          }),
              "report.metrics: 'val.accuracy' names metric 'accuracy', which eval.split_metrics.val (loss) does not compute"));
}

TEST_CASE("config/report.metrics: a language model's loss_pos<N>@<p> needs loss_by_position and N among the windows",
          "[config]") {
    const std::string path = fixture("minimal.yaml");
    const std::vector<std::string> lm = {"data.task=brown", "data.dir=tests/fixtures", "eval.splits=[val, test]", "eval.metrics=[ppl, loss_by_position]",
                                         "data.lm.eval_lengths=[64, 256]"};
    auto with = [&](std::vector<std::string> o, const std::string& extra) {
        o.push_back(extra);
        return o;
    };
    CHECK_NOTHROW(load_config(path, with(lm, "report.metrics=[test.ppl@64, test.loss_pos256@252]")));
    CHECK(has(config_error([&] { load_config(path, with(lm, "report.metrics=[test.loss_pos128@0]")); }),
              "report.metrics: 'test.loss_pos128@0': windows of 128 tokens are not among data.lm.eval_lengths (64, 256)"));
    CHECK(has(config_error([&] {
              load_config(path, {"data.task=brown", "data.dir=tests/fixtures", "eval.splits=[val, test]", "eval.metrics=[ppl]",
                                 "data.lm.eval_lengths=[64, 256]", "report.metrics=[test.loss_pos64@0]"});
          }),
              "report.metrics: 'test.loss_pos64@0' names metric 'loss_by_position', which eval.metrics (ppl) does not compute"));
}

TEST_CASE("config/sharding", "[config]") {
    const ExperimentConfig c = load_config(fixture("sweep_k.yaml"));
    const auto points = expand_sweep(c, fixture("sweep_k.yaml"));
    for (std::size_t n : {1, 2, 3, 7, 10}) {
        std::multiset<std::string> all;
        for (std::size_t i = 0; i < n; ++i) {
            const auto shard = select_shard(points, parse_shard(std::to_string(i) + "/" + std::to_string(n)));
            for (const auto& p : shard) {
                CHECK(p.index % n == i);
                all.insert(p.id);
            }
        }
        CHECK(all.size() == points.size());  // disjoint ...
        for (const auto& p : points) CHECK(all.count(p.id) == 1);  // ... and covering
    }
    CHECK(select_shard(points, 2, 7).size() == 1);
    CHECK(select_shard(points, 2, 7)[0].id == "k=2_seed=1");
}

TEST_CASE("config/--only picks points by a pattern of their ids, ids and order kept", "[config]") {
    const ExperimentConfig c = load_config(fixture("sweep_k.yaml"));
    const auto points = expand_sweep(c, fixture("sweep_k.yaml"));
    REQUIRE(points.size() == 7);
    auto ids = [](const std::vector<SweepPoint>& ps) {
        std::vector<std::string> out;
        for (const auto& p : ps) out.push_back(p.id);
        return out;
    };
    CHECK(ids(select_matching(points, "k=?_seed=1", "x.yaml")) ==
          std::vector<std::string>{"k=0_seed=1", "k=1_seed=1", "k=2_seed=1", "k=4_seed=1"});
    CHECK(ids(select_matching(points, "k=1*", "x.yaml")) == std::vector<std::string>{"k=1_seed=1", "k=16_seed=1"});
    const auto one = select_matching(points, "k=64_seed=1", "x.yaml");
    REQUIRE(one.size() == 1);
    CHECK(one[0].index == 5);  // its place in the whole sweep, as the ids are the whole sweep's
    CHECK(one[0].overrides == points[5].overrides);
    CHECK(has(config_error([&] { select_matching(points, "k=3*", "x.yaml"); }),
              "--only 'k=3*': matches none of the 7 run id(s) of x.yaml (e.g. k=0_seed=1, k=1_seed=1, k=2_seed=1, "
              "k=4_seed=1, ...; `relpos run x.yaml --list` lists them)"));
}

TEST_CASE("config/parse_shard", "[config]") {
    const Shard s = parse_shard("2/4");
    CHECK(s.index == 2);
    CHECK(s.count == 4);
    CHECK(has(config_error([] { parse_shard("4/4"); }),
              "--shard '4/4': the shard index must be below the count 4 (shards are numbered 0 to 3)"));
    CHECK(has(config_error([] { parse_shard("0/0"); }), "the shard count must be at least 1"));
    for (const char* bad : {"2", "a/4", "-1/4", "1/", "/4", "1/4/5", " 1/4", ""})
        CHECK(has(config_error([&] { parse_shard(bad); }), "expected i/n with 0 <= i < n"));
    CHECK_THROWS_AS(select_shard({}, 3, 3), ConfigError);
}

TEST_CASE("config/user text in messages shows control and stray bytes escaped", "[config][errors]") {
    using nn::printable;
    CHECK(printable("model.dropout=0.3, caf\xc3\xa9, \xe2\x82\xac") == "model.dropout=0.3, caf\xc3\xa9, \xe2\x82\xac");
    CHECK(printable("1\x01") == "1\\x01");
    CHECK(printable(std::string("a\0b\tc\nd\x7f", 8)) == "a\\x00b\\x09c\\x0Ad\\x7F");
    CHECK(printable("caf\xe9") == "caf\\xE9");                   // Latin-1
    CHECK(printable("\xc3") == "\\xC3");                          // cut short
    CHECK(printable("\xc0\xaf") == "\\xC0\\xAF");                 // overlong
    CHECK(printable("\xed\xa0\x80") == "\\xED\\xA0\\x80");       // a surrogate
    CHECK(printable("\xc2\x85|\xe2\x80\xae") == "\\u0085|\\u202E");  // C1 control, right-to-left override
    CHECK(printable(printable("1\x01\xe9")) == printable("1\x01\xe9"));  // escaping twice changes nothing
    // The override's message quotes it that way.
    const std::string e = config_error([] { load_config(fixture("minimal.yaml"), {"train.lr=1\x01"}); });
    CHECK(e == "command-line override 'train.lr=1\\x01': train.lr: must be a number > 0, got '1\\x01'");
    CHECK_THAT(config_error([] { parse_override("description=caf\xe9"); }),
               Catch::Equals("command-line override 'description=caf\\xE9' is not valid UTF-8 (a config is UTF-8 text, "
                             "and so is an override; convert it first, e.g. with iconv -f latin1 -t utf-8)"));
}
