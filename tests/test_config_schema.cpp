// The config schema as one table: describe_config_keys() (every key with its type, default and allowed
// values, recorded from the reader's own declarations in experiments/config/schema.cpp) is the table the
// other views of the schema are checked against: the resolved YAML the writer emits (write.cpp), the tables
// of docs/configs.md, and the fuzzer's dictionary (fuzz/config.dict). A key added to one and not the others
// fails here.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "experiments/config/config.hpp"
#include "nn/position.hpp"

using namespace relpos;

namespace {
// docs/configs.md's tables as full key -> (type, default) cells. A "## `data`" heading (or a paragraph
// that starts with "`data.synthetic`") sets the prefix of the rows below it; a row may name several keys.
std::map<std::string, std::pair<std::string, std::string>> documented_keys() {
    std::ifstream in(std::string(RELPOS_SOURCE_DIR) + "/docs/configs.md");
    std::map<std::string, std::pair<std::string, std::string>> out;
    std::string line, prefix;
    auto cells = [](const std::string& row) {
        std::vector<std::string> c;
        std::size_t at = 1;
        while (at < row.size()) {
            std::size_t bar = at;
            while (bar < row.size() && !(row[bar] == '|' && row[bar - 1] != '\\')) ++bar;
            std::string cell = row.substr(at, bar - at);
            while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
            while (!cell.empty() && cell.back() == ' ') cell.pop_back();
            c.push_back(cell);
            at = bar + 1;
        }
        return c;
    };
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0 || line.rfind("### ", 0) == 0) {
            const auto a = line.find('`'), b = line.rfind('`');
            prefix = a != std::string::npos && b > a ? line.substr(a + 1, b - a - 1) : "";
            if (line.find("Top level") != std::string::npos) prefix = "";
            continue;
        }
        if (line.rfind("`", 0) == 0) {  // "`data.synthetic` (read by ...":
            const auto b = line.find('`', 1);
            const std::string k = line.substr(1, b - 1);
            if (k.find('.') != std::string::npos && k.find(' ') == std::string::npos) prefix = k;
            continue;
        }
        if (line.rfind("| `", 0) != 0) continue;
        const auto c = cells(line);
        if (c.size() < 3) continue;
        std::string keys = c[0];
        std::size_t at = 0;
        while ((at = keys.find('`', at)) != std::string::npos) {
            const auto end = keys.find('`', at + 1);
            const std::string leaf = keys.substr(at + 1, end - at - 1);
            out[prefix.empty() ? leaf : prefix + "." + leaf] = {c[1], c[2]};
            at = end + 1;
        }
    }
    return out;
}
}  // namespace

TEST_CASE("config/every key the reader declares is documented with its type and default", "[config][docs]") {
    // The reader's declarations (describe_config_keys: the read_* calls, recorded) against the tables of
    // docs/configs.md: a key added to the reader and not to the docs, or a default changed in one place
    // only, fails here.
    const auto docs = documented_keys();
    const auto keys = describe_config_keys();
    REQUIRE(keys.size() > 60);
    std::set<std::string> declared;
    for (const auto& k : keys) {
        declared.insert(k.key);
        INFO(k.key << " (" << k.type << ", default " << k.default_value << ")");
        auto it = docs.find(k.key);
        REQUIRE(it != docs.end());
        const std::string& doc_default = it->second.second;
        if (k.type == "map" || k.type == "any") continue;
        if (k.default_value == "(required)") {
            CHECK(doc_default == "required");
        } else {
            const std::string want = "`" + (k.default_value.empty() ? std::string("\"\"") : k.default_value) + "`";
            CHECK(doc_default.rfind(want, 0) == 0);  // the cell starts with it (some add a task-specific default)
        }
    }
    // and every documented key is one the reader declares (no stale rows)
    for (const auto& [key, cell] : docs) {
        if (key.rfind("model.position.", 0) == 0) continue;  // options of the encodings, read by make_position
        INFO(key);
        CHECK(declared.count(key) == 1);
    }
}

TEST_CASE("config/the fuzzer's dictionary has every declared key", "[config]") {
    std::ifstream in(std::string(RELPOS_SOURCE_DIR) + "/fuzz/config.dict");
    const std::string dict((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& k : describe_config_keys()) {
        const std::string leaf = k.key.substr(k.key.rfind('.') == std::string::npos ? 0 : k.key.rfind('.') + 1);
        INFO(k.key);
        CHECK(dict.find("\"" + leaf + ":\"") != std::string::npos);
    }
}

namespace {

std::string leaf_of(const std::string& key) {
    const auto dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

// The dotted keys of a resolved YAML tree -> their values. Maps of the user's own keys (an encoding's
// options, the sweep grid, a reference column's values) are not entered: the table lists them as one key.
void flatten(const YAML::Node& n, const std::string& prefix, std::map<std::string, YAML::Node>& out) {
    for (auto it = n.begin(); it != n.end(); ++it) {
        const std::string key = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
        out[key] = it->second;
        if (it->second.IsMap() && key != "model.position" && key != "sweep.grid" && key != "report.reference.values" &&
            key != "eval.split_metrics")
            flatten(it->second, key, out);
    }
}

std::map<std::string, YAML::Node> written_keys(const std::string& config_text) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("relpos-schema-" + std::to_string(::getpid()) + ".yaml")).string();
    std::ofstream(path) << config_text;
    LoadFlags flags;
    flags.check_paths = false;  // a task's data directory need not exist to write its config
    const std::string yaml = to_yaml(load_config(path, {}, flags));
    std::filesystem::remove(path);
    std::map<std::string, YAML::Node> out;
    flatten(YAML::Load(yaml), "", out);
    return out;
}

std::set<std::string> declared_keys() {
    std::set<std::string> out;
    for (const auto& k : describe_config_keys()) out.insert(k.key);
    return out;
}

template <class M>
std::set<std::string> keys_of(const M& m) {
    std::set<std::string> out;
    for (const auto& [k, v] : m) out.insert(k);
    return out;
}

}  // namespace

TEST_CASE("config/the writer writes exactly the declared keys of a config that uses them all", "[config]") {
    // Every optional part used (a run store, a decoder-only family, a stop section with a target, valid_bleu,
    // a task named by data.lm, a reference column, a comparison): the resolved YAML then has every key of the
    // table and no other, so a key read and not written (lost from config.yaml and the run's name) or written
    // and not read (config.yaml would not load back) fails here.
    // (brown: a task whose runs are named by data.lm, TaskDataSchema::named_sections)
    const auto written = written_keys(
        "name: t\nrun_store: store\ndata: {task: brown}\nmodel: {family: decoder_only}\n"
        "train: {valid_bleu: true, stop: {patience: 2, target_metric: accuracy, target: 99}}\n"
        "sweep: {cells: [{train.lr: 0.5}], only: ['lr=*']}\neval: {split_metrics: {val: [ppl]}}\n"
        "report: {reference: {title: paper, values: {a: 1}}, compare: {dir: other}}\n");
    CHECK(keys_of(written) == declared_keys());
}

TEST_CASE("config/the writer writes each declared key at its declared default", "[config]") {
    // A config of defaults: every key the writer writes for it has the value the table declares as its
    // default, and the keys it leaves out are those written only when used (each named here with its reason).
    const std::set<std::string> only_when_used = {
        "model.family",    // written only when not encoder_decoder (names of older runs kept)
        "data.lm",         // written only for the tasks named by it (TaskDataSchema::named_sections)
        "data.lm.context", "data.lm.eval_lengths", "data.lm.stride", "data.lm.max_eval_tokens",
        "run_store",       // describes where runs live, not a run
        "report.reference", "report.reference.title", "report.reference.values",  // only when given
        "report.compare", "report.compare.dir", "report.compare.title",           // only when given
        "train.stop", "train.stop.patience", "train.stop.min_delta",  // only with patience > 0 (older names kept)
        "train.stop.rule", "train.stop.target_metric", "train.stop.target",  // the same; a target only when set
        "train.valid_bleu",                                           // only when true (older names kept)
        "sweep.cells",                                                // only when given (experiment.yaml as before)
        "sweep.only",                                                 // the same
        "eval.split_metrics",                                         // only when given (run names as before)
    };
    const auto written = written_keys("name: t\n");
    for (const auto& k : describe_config_keys()) {
        INFO(k.key << " (" << k.type << ", declared default " << k.default_value << ")");
        const auto it = written.find(k.key);
        if (only_when_used.count(k.key)) {
            CHECK(it == written.end());
            continue;
        }
        REQUIRE(it != written.end());
        if (k.type == "map" || k.type == "any" || k.default_value == "(required)") continue;
        const YAML::Node& v = it->second;
        std::string text = v.IsScalar() ? v.Scalar() : value_yaml(v);
        if (k.key == "model.position" && v.IsMap()) text = "[" + text + "]";  // one encoding is written as its map
        CHECK(text == k.default_value);
    }
    for (const auto& [key, v] : written) {
        INFO(key);
        CHECK(declared_keys().count(key) == 1);
    }
}

TEST_CASE("config/every key in the fuzzer's dictionary is one the reader or an encoding declares", "[config]") {
    // The other direction of the test above: a key left in the dictionary after it left the schema.
    std::ifstream in(std::string(RELPOS_SOURCE_DIR) + "/fuzz/config.dict");
    std::set<std::string> known;
    for (const auto& k : describe_config_keys()) known.insert(leaf_of(k.key));
    known.insert("type");  // model.position's, read by whoever picks the encoding
    for (const auto& name : nn::position_registry().names())
        for (const auto& o : nn::describe_position_options(name)) known.insert(o.key);
    for (const auto& o : nn::describe_common_position_options()) known.insert(o.key);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        // entries "word:" (a key as it opens a mapping); values, dotted override keys and punctuation are free
        if (line.size() < 4 || line.front() != '"' || line.compare(line.size() - 2, 2, ":\"") != 0) continue;
        const std::string key = line.substr(1, line.size() - 3);
        if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) continue;
        ++n;
        INFO(key);
        CHECK(known.count(key) == 1);
    }
    CHECK(n > 60);
}
