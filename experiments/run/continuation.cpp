#include "experiments/run/continuation.hpp"

#include <algorithm>
#include <fstream>
#include <tuple>

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "experiments/data/json.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/store.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/util/files.hpp"

namespace relpos {

namespace fs = std::filesystem;

std::string Continuation::said() const {
    if (how == "max_steps") return fmt::format("capped at step {}", step);
    if (how == "plateau") return fmt::format("stopped on its plateau at step {}", step);
    return fmt::format("interrupted at step {}", step);
}

namespace {

// Where a run of the store stops, read from its config.yaml: its cap and plateau rule.
struct StopKeys {
    long cap = 0, patience = 0;
    double min_delta = 0;
    std::string rule;
    bool operator<(const StopKeys& o) const {
        return std::tie(cap, patience, min_delta, rule) < std::tie(o.cap, o.patience, o.min_delta, o.rule);
    }
    bool operator==(const StopKeys& o) const { return !(*this < o) && !(o < *this); }
};

StopKeys stop_keys_of(const TrainConfig& t) { return StopKeys{t.max_steps, t.patience, t.min_delta, t.stop_rule}; }

std::optional<StopKeys> stop_keys(const fs::path& dir) {
    try {
        const YAML::Node saved = YAML::LoadFile((dir / "config.yaml").string());
        const YAML::Node train = saved["train"];
        if (!train || !train["max_steps"]) return std::nullopt;
        const TrainConfig defaults;
        StopKeys k{train["max_steps"].as<long>(), defaults.patience, defaults.min_delta, defaults.stop_rule};
        if (const YAML::Node st = train["stop"]) {
            if (st["patience"]) k.patience = st["patience"].as<long>();
            if (st["min_delta"]) k.min_delta = st["min_delta"].as<double>();
            if (st["rule"]) k.rule = st["rule"].as<std::string>();
        }
        return k;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// cfg under another run's stop: its cap and patience, and its plateau's min_delta and rule where cfg has no
// plateau rule (patience 0: nothing reads them).
ExperimentConfig under(const ExperimentConfig& cfg, const StopKeys& k) {
    ExperimentConfig c = cfg;
    c.train.max_steps = k.cap;
    c.train.patience = k.patience;
    if (cfg.train.patience == 0) {
        c.train.min_delta = k.min_delta;
        c.train.stop_rule = k.rule;
    }
    return c;
}

// Why a run under plateau patience `mine` may not continue one trained under `theirs` (stopped on that
// plateau or not), or "" when it may: a patience of 0 never stops; a larger one stops no earlier.
std::string patience_refusal(long mine, long theirs, bool stopped_on_plateau) {
    if (mine == 0 || (theirs > 0 && mine > theirs) || (mine == theirs && !stopped_on_plateau)) return "";
    if (theirs == 0)
        return fmt::format("it trained without the plateau rule, which this run applies (train.stop.patience = {}) "
                           "and which could have stopped it earlier", mine);
    return fmt::format("its train.stop.patience is {}, this run's {}: this run could have stopped earlier", theirs, mine);
}

}  // namespace

std::optional<Continuation> find_continuation(const ExperimentConfig& cfg, const fs::path& run_dir, int threads,
                                              int ranks, std::vector<std::string>* refused) {
    const auto& t = cfg.train;
    if (t.eval_every <= 0) return std::nullopt;
    std::optional<Continuation> best;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_dir.parent_path(), ec)) {
        const fs::path dir = e.path();
        if (dir.filename() == run_dir.filename()) continue;
        const bool finished = fs::exists(dir / "results.json", ec);
        const fs::path last = dir / "checkpoints" / "last";
        Continuation c{dir, 0, "interrupted"};
        std::string hash;
        RunRecord r;  // a finished run's record, read once
        if (finished) {  // the cheap tests first: most runs of a store stopped at their target
            r = read_finished_run(dir / "results.json");
            if ((r.stop_reason != "max_steps" && r.stop_reason != "plateau") || r.steps < 1) continue;
            c.step = static_cast<std::uint64_t>(r.steps);
            c.how = r.stop_reason;
            hash = r.config_hash;
        } else {
            if (!checkpoint_exists(last.string())) continue;
            try {
                const TrainProgress at = verify_checkpoint(last.string(), {}, false);
                c.step = at.step;
                hash = at.config_hash;
            } catch (const CheckpointError&) {
                continue;  // a run of another config, or a checkpoint its own resume will report
            }
        }
        const auto keys = stop_keys(dir);
        if (!keys) continue;
        const ExperimentConfig theirs = under(cfg, *keys);  // this config under the other run's stop
        if (stop_keys_of(theirs.train) == stop_keys_of(t) || !same_run(hash, theirs)) continue;  // itself, or another
        if (t.max_steps > 0 && c.step >= static_cast<std::uint64_t>(t.max_steps)) continue;  // nothing to continue
        auto refuse = [&](const std::string& why) {
            if (refused) refused->push_back(fmt::format("{} ({}): {}", dir.string(), c.said(), why));
        };
        if (const std::string why = patience_refusal(t.patience, keys->patience, c.how == "plateau"); !why.empty()) {
            refuse(why);
            continue;
        }
        if (finished) {
            if (c.step % static_cast<std::uint64_t>(t.eval_every) != 0) {
                refuse(fmt::format("its last step is not a multiple of train.eval_every = {}, so its last validation is "
                                   "one this run would not make", t.eval_every));
                continue;
            }
            if (r.threads != threads || r.ranks != ranks) {
                refuse(fmt::format("it trained on {} thread(s) and {} rank(s), this run on {} and {} (the sums would "
                                   "differ)", r.threads, r.ranks, threads, ranks));
                continue;
            }
        }
        if (!checkpoint_exists(last.string()) || !fs::is_directory(last / "optim", ec)) {
            refuse("it kept no last checkpoint with optimiser state (runs finished before 2026-11-26, commit 04a7fa3, "
                   "dropped it, as did runs stopped on a plateau until 2026-12-06; a committed run has no checkpoints)");
            continue;
        }
        try {
            if (verify_checkpoint(last.string(), {}, false).step != c.step) {
                refuse("its last checkpoint is not at its last step");
                continue;
            }
        } catch (const CheckpointError& e) {
            refuse(fmt::format("its last checkpoint does not verify ({})", e.what()));
            continue;
        }
        if (!best || c.step > best->step) best = c;
    }
    return best;
}

namespace {

// A finished run that stopped by a rule that does not read the cap, at one of its periodic validations:
// its recorded hash, update, why it stopped and its stop keys; none for any other run.
struct CapFreeStop {
    std::string hash;
    std::int64_t steps = 0;
    std::string reason;  // "target" or "plateau"
    StopKeys keys;
};

std::optional<CapFreeStop> cap_free_stop(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir / "results.json", ec) || !fs::exists(dir / "config.yaml", ec)) return std::nullopt;
    const RunRecord r = read_finished_run(dir / "results.json");
    if ((r.stop_reason != "target" && r.stop_reason != "plateau") || r.steps < 1 || r.config_hash.empty())
        return std::nullopt;
    const auto keys = stop_keys(dir);
    if (!keys || (keys->cap > 0 && r.steps > keys->cap)) return std::nullopt;
    return CapFreeStop{r.config_hash, static_cast<std::int64_t>(r.steps), r.stop_reason, *keys};
}

// Whether a run that stopped as s says is cfg's run, its hash aside: it stopped at one of its periodic
// validations, which cfg's run makes too, before cfg's cap, and cfg's plateau rule would not have stopped it
// earlier (a plateau stop only under the same rule; a target reached under patience 0 or a smaller one); its
// stop keys differ from cfg's (the same keys are not an equivalent but the run itself).
bool stops_within(const ExperimentConfig& cfg, const CapFreeStop& s) {
    const auto every = static_cast<std::int64_t>(cfg.train.eval_every);
    if (every <= 0 || s.steps % every != 0) return false;
    if (cfg.train.max_steps > 0 && s.steps >= static_cast<std::int64_t>(cfg.train.max_steps)) return false;
    const StopKeys mine = stop_keys_of(cfg.train);
    if (stop_keys_of(under(cfg, s.keys).train) == mine) return false;
    if (s.reason == "plateau") return s.keys.patience == mine.patience && s.keys.min_delta == mine.min_delta &&
                                      s.keys.rule == mine.rule;
    return patience_refusal(mine.patience, s.keys.patience, false).empty();
}

}  // namespace

bool is_equivalent(const fs::path& dir, const ExperimentConfig& cfg) {
    const auto s = cap_free_stop(dir);
    return s && stops_within(cfg, *s) && same_run(s->hash, under(cfg, s->keys));
}

bool same_run_but_stop(const fs::path& dir, const ExperimentConfig& cfg) {
    std::error_code ec;
    if (!fs::exists(dir / "results.json", ec)) return false;
    const auto keys = stop_keys(dir);
    return keys && same_run(read_finished_run(dir / "results.json").config_hash, under(cfg, *keys));
}

std::optional<fs::path> find_equivalent(const ExperimentConfig& cfg, const fs::path& run_dir) {
    return EquivalentIndex(run_dir.parent_path()).find(cfg, run_dir);
}

struct EquivalentIndex::Entry {
    fs::path dir;
    CapFreeStop stop;
};

EquivalentIndex::EquivalentIndex(const fs::path& store) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(store, ec))
        if (auto s = cap_free_stop(e.path())) by_hash_[s->hash].push_back(Entry{e.path(), std::move(*s)});
    for (auto& [hash, entries] : by_hash_)  // the same answer whatever order the directory lists
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.dir < b.dir; });
}

EquivalentIndex::~EquivalentIndex() = default;

std::optional<fs::path> EquivalentIndex::find(const ExperimentConfig& cfg, const fs::path& own) const {
    if (cfg.train.eval_every <= 0) return std::nullopt;
    std::set<StopKeys> tried;  // one config hash per distinct stop of the store's runs
    for (const auto& [hash, entries] : by_hash_)
        for (const Entry& e : entries) {
            if (!tried.insert(e.stop.keys).second) continue;
            const ExperimentConfig at_other = under(cfg, e.stop.keys);
            // same_run's two spellings of a run: its config hash and its run identity
            for (const std::string& h : {config_hash(at_other), run_identity(at_other)}) {
                const auto it = by_hash_.find(h);
                if (it == by_hash_.end()) continue;
                for (const Entry& f : it->second)
                    if (f.stop.keys == e.stop.keys && f.dir.filename() != own.filename() && stops_within(cfg, f.stop))
                        return f.dir;
            }
        }
    return std::nullopt;
}

namespace {

void copy_checkpoint_as(const fs::path& from, const fs::path& to, const std::string& config_hash) {
    fs::copy(from, to, fs::copy_options::recursive);
    const fs::path state = to / "state.json";
    Json st = parse_json_or_throw<CheckpointError>(read_text_file(state.string()),
                                                   "checkpoint " + from.string() + " has an unreadable state.json: it");
    st["config_hash"] = config_hash;
    write_file_atomic(state, json_document(st));
}

}  // namespace

void start_from(const Continuation& c, const fs::path& run_dir, const std::string& config_hash) {
    const fs::path tmp = run_dir / "checkpoints.continue.tmp", dest = run_dir / "checkpoints";
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    copy_checkpoint_as(c.from / "checkpoints" / "last", tmp / "last", config_hash);
    if (fs::exists(c.from / "checkpoints" / "best" / "state.json"))
        copy_checkpoint_as(c.from / "checkpoints" / "best", tmp / "best", config_hash);
    fs::copy_file(c.from / "metrics.jsonl", run_dir / "metrics.jsonl", fs::copy_options::overwrite_existing);
    if (fs::exists(c.from / "log.txt"))
        fs::copy_file(c.from / "log.txt", run_dir / "log.txt", fs::copy_options::overwrite_existing);
    fs::remove_all(dest);
    fs::rename(tmp, dest);  // the checkpoint appears whole or not at all
}

}  // namespace relpos
