#include <algorithm>

#include <fmt/format.h>

#include "experiments/tasks/task.hpp"
#include "experiments/util/text.hpp"
#include "nn/options.hpp"

namespace relpos {

// ---- the registration lines: one per task file
void register_multi30k(TaskRegistry&);
void register_synthetic_seq2seq(TaskRegistry&);
void register_brown(TaskRegistry&);
void register_algorithmic(TaskRegistry&);

TaskRegistry& task_registry() {
    static TaskRegistry reg = [] {
        TaskRegistry r;
        register_multi30k(r);  // the first registered is the default task
        register_synthetic_seq2seq(r);
        register_brown(r);
        register_algorithmic(r);  // after the seq2seq tasks: adds the decoder-only form of copy and reverse
        return r;
    }();
    return reg;
}

namespace {
const TaskDataSchema* find_schema(const std::string& task) {
    const TaskEntry* e = task_registry().find(task);
    return e ? &e->data : nullptr;
}
// The config layer asks the tasks through this lookup (experiments/config/task_schema.hpp): installed before
// main, so that a config is read with its task's defaults.
std::string first_task() { return task_registry().entries().front().name; }
std::vector<std::string> all_tasks() { return task_registry().names(); }
// Each option's key, "src, tgt" as two.
std::vector<std::string> data_keys(const std::string& task) {
    std::vector<std::string> keys;
    if (const TaskEntry* e = task_registry().find(task))
        for (const auto& o : e->options)
            for (std::size_t b = 0; b < o.key.size();) {
                std::size_t end = o.key.find(',', b);
                if (end == std::string::npos) end = o.key.size();
                std::string k = o.key.substr(b, end - b);
                k.erase(0, k.find_first_not_of(' '));
                k.erase(k.find_last_not_of(' ') + 1);
                if (!k.empty()) keys.push_back(k);
                b = end + 1;
            }
    return keys;
}
[[maybe_unused]] const bool g_installed = [] {
    install_task_schemas({&find_schema, &first_task, &all_tasks, &data_keys});
    return true;
}();
}  // namespace

const TaskEntry* task_entry(const ExperimentConfig& cfg) { return task_registry().find(cfg.data.task); }

bool reads_tokenized_text(const ExperimentConfig& cfg) {
    const TaskEntry* e = task_entry(cfg);
    return e && e->tokenized_text && cfg.data.tokenized;
}

const TaskEntry& text_normalizing_task(const std::string& name) {
    std::vector<std::string> able;
    for (const auto& e : task_registry().entries())
        if (e.tokenized_text) {
            if (name.empty() || e.name == name) return e;
            able.push_back(e.name);
        }
    if (able.empty()) throw ConfigError("no registered task normalizes raw text (none reads tokenized text)");
    const bool known = task_registry().find(name) != nullptr;
    throw ConfigError(fmt::format("--task '{}' {}; the tasks that do: {}", name,
                                  known ? "reads text as given and has no normalization" : "is not a registered task",
                                  join(able)));
}

std::shared_ptr<Subword> train_subword(const ExperimentConfig& cfg, const std::vector<std::string>& sentences,
                                       const std::string& cache_dir) {
    SubwordOptions so;
    so.vocab_size = static_cast<std::size_t>(cfg.data.vocab_size);
    so.model_type = cfg.data.subword_model;
    try {
        return std::make_shared<Subword>(Subword::train_or_load(sentences, so, cache_dir));
    } catch (const DataError& e) {
        const bool training = std::string(e.what()).rfind("SentencePiece training failed", 0) == 0;
        throw DataError(fmt::format("{}: {}{}", cfg.source, training ? "data.vocab_size: " : "", e.what()));
    }
}

std::unique_ptr<Task> make_task(const ExperimentConfig& cfg) {
    const TaskEntry* e = task_registry().find(cfg.data.task);
    if (!e) {
        const auto names = task_registry().names();
        const auto s = nn::did_you_mean(cfg.data.task, names);
        throw ConfigError(fmt::format("{}: data.task: '{}' is not a registered task{}; registered: {}", cfg.source,
                                      cfg.data.task, s ? fmt::format(" (did you mean '{}'?)", *s) : "", join(names)));
    }
    const nn::Family family = model_family(cfg.model);
    if (std::find(e->families.begin(), e->families.end(), family) == e->families.end()) {
        std::vector<std::string> fam;
        for (auto f : e->families) fam.push_back(nn::family_name(f));
        std::string either = fam.back();
        if (fam.size() > 1) either = join(std::vector<std::string>(fam.begin(), fam.end() - 1)) + " or " + fam.back();
        throw ConfigError(fmt::format("{}: model.family: task '{}' trains {} models, not {}; set model.family: {}",
                                      cfg.source, e->name, either, nn::family_name(family), fam.front()));
    }
    const auto known = e->metrics.count(family) ? e->metrics.at(family) : std::vector<std::string>{};
    for (const auto& m : cfg.eval.metrics)
        if (std::find(known.begin(), known.end(), m) == known.end())
            throw ConfigError(fmt::format("{}: eval.metrics: task '{}' ({}) does not compute '{}'; it computes {}",
                                          cfg.source, e->name, nn::family_name(family), m, join(known)));
    for (const auto& [split, metrics] : cfg.eval.split_metrics)
        for (const auto& m : metrics)
            if (std::find(known.begin(), known.end(), m) == known.end())
                throw ConfigError(fmt::format("{}: eval.split_metrics.{}: task '{}' ({}) does not compute '{}'; it computes {}",
                                              cfg.source, split, e->name, nn::family_name(family), m, join(known)));
    if (cfg.train.valid_bleu && family != nn::Family::EncoderDecoder)
        throw ConfigError(fmt::format("{}: train.valid_bleu: validation BLEU is for encoder-decoder tasks; task '{}' "
                                      "with model.family {} has none (set it to false)",
                                      cfg.source, e->name, nn::family_name(family)));
    if (!cfg.train.target_metric.empty()) {
        const auto targets = e->target_metrics.count(family) ? e->target_metrics.at(family) : std::vector<std::string>{};
        if (std::find(targets.begin(), targets.end(), cfg.train.target_metric) == targets.end())
            throw ConfigError(fmt::format("{}: train.stop.target_metric: task '{}' ({}) computes no validation '{}'; {}",
                                          cfg.source, e->name, nn::family_name(family), cfg.train.target_metric,
                                          targets.empty() ? std::string("it has no target metric (remove the target)")
                                                          : "it has " + join(targets)));
    }
    return e->make(family);
}

}  // namespace relpos
