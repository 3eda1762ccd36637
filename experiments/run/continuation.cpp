#include "experiments/run/continuation.hpp"

#include <algorithm>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "experiments/data/json.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/store.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/util/files.hpp"

namespace relpos {

namespace fs = std::filesystem;

std::string continuation_key(const ExperimentConfig& cfg) {
    ExperimentConfig c = cfg;
    c.train.max_steps = 0;
    return run_identity(c);
}

std::optional<Continuation> find_continuation(const ExperimentConfig& cfg, const fs::path& run_dir, int threads,
                                              int ranks, std::vector<std::string>* refused) {
    const auto& t = cfg.train;
    if (t.max_steps <= 0 || t.eval_every <= 0) return std::nullopt;
    const std::string key = continuation_key(cfg);
    std::optional<Continuation> best;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_dir.parent_path(), ec)) {
        const fs::path dir = e.path();
        if (dir.filename() == run_dir.filename() || !fs::exists(dir / "results.json", ec)) continue;
        const RunRecord r = read_finished_run(dir / "results.json");
        if (r.continuation_key != key || r.stop_reason != "max_steps" || r.steps < 1) continue;
        const auto steps = static_cast<std::uint64_t>(r.steps);
        auto refuse = [&](const std::string& why) {
            if (refused) refused->push_back(fmt::format("{} (capped at step {}): {}", dir.string(), steps, why));
        };
        if (steps >= static_cast<std::uint64_t>(t.max_steps)) continue;  // not shorter: nothing to continue
        if (steps % static_cast<std::uint64_t>(t.eval_every) != 0) {
            refuse(fmt::format("its cap is not a multiple of train.eval_every = {}, so its last validation is one "
                               "this run would not make", t.eval_every));
            continue;
        }
        if (r.threads != threads || r.ranks != ranks) {
            refuse(fmt::format("it trained on {} thread(s) and {} rank(s), this run on {} and {} (the sums would differ)",
                               r.threads, r.ranks, threads, ranks));
            continue;
        }
        const fs::path last = dir / "checkpoints" / "last";
        if (!checkpoint_exists(last.string()) || !fs::is_directory(last / "optim", ec)) {
            refuse("it kept no last checkpoint with optimiser state (runs finished before 2026-11-26, commit 04a7fa3, "
                   "dropped it; a committed run has no checkpoints)");
            continue;
        }
        try {
            if (verify_checkpoint(last.string(), {}, false).step != steps) {
                refuse("its last checkpoint is not at its last step");
                continue;
            }
        } catch (const CheckpointError& e) {
            refuse(fmt::format("its last checkpoint does not verify ({})", e.what()));
            continue;
        }
        if (!best || steps > best->step) best = Continuation{dir, steps};
    }
    return best;
}

namespace {

// A finished run that stopped by a rule that does not read the cap, at one of its periodic validations:
// its recorded hash, update and cap; none for any other run.
struct CapFreeStop {
    std::string hash;
    std::int64_t steps = 0;
    long cap = 0;
};

std::optional<CapFreeStop> cap_free_stop(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir / "results.json", ec) || !fs::exists(dir / "config.yaml", ec)) return std::nullopt;
    const RunRecord r = read_finished_run(dir / "results.json");
    if ((r.stop_reason != "target" && r.stop_reason != "plateau") || r.steps < 1 || r.config_hash.empty())
        return std::nullopt;
    CapFreeStop s{r.config_hash, static_cast<std::int64_t>(r.steps), 0};
    try {
        const YAML::Node saved = YAML::LoadFile((dir / "config.yaml").string());
        if (!saved["train"] || !saved["train"]["max_steps"]) return std::nullopt;
        s.cap = saved["train"]["max_steps"].as<long>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (s.cap > 0 && s.steps > s.cap) return std::nullopt;
    return s;
}

// Whether a run that stopped at `steps` under cap `other` is cfg's run, its hash aside: it stopped at one of
// its periodic validations, which cfg's run makes too, before cfg's cap, and the caps differ (the same cap is
// not an equivalent but the run itself).
bool stops_within(const ExperimentConfig& cfg, std::int64_t steps, long other) {
    const auto every = static_cast<std::int64_t>(cfg.train.eval_every);
    if (every <= 0 || steps % every != 0) return false;
    if (cfg.train.max_steps > 0 && steps >= static_cast<std::int64_t>(cfg.train.max_steps)) return false;
    return other != cfg.train.max_steps;
}

}  // namespace

bool is_equivalent(const fs::path& dir, const ExperimentConfig& cfg) {
    const auto s = cap_free_stop(dir);
    if (!s || !stops_within(cfg, s->steps, s->cap)) return false;
    ExperimentConfig at_other = cfg;
    at_other.train.max_steps = s->cap;
    return same_run(s->hash, at_other);
}

std::optional<fs::path> find_equivalent(const ExperimentConfig& cfg, const fs::path& run_dir) {
    return EquivalentIndex(run_dir.parent_path()).find(cfg, run_dir);
}

EquivalentIndex::EquivalentIndex(const fs::path& store) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(store, ec))
        if (const auto s = cap_free_stop(e.path())) {
            by_hash_[s->hash].push_back(Entry{e.path(), s->steps, s->cap});
            caps_.insert(s->cap);
        }
    for (auto& [hash, entries] : by_hash_)  // the same answer whatever order the directory lists
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.dir < b.dir; });
}

std::optional<fs::path> EquivalentIndex::find(const ExperimentConfig& cfg, const fs::path& own) const {
    if (cfg.train.eval_every <= 0) return std::nullopt;
    for (const long cap : caps_) {
        if (cap == cfg.train.max_steps) continue;
        ExperimentConfig at_other = cfg;
        at_other.train.max_steps = cap;
        // same_run's two spellings of a run: its config hash and its run identity
        for (const std::string& h : {config_hash(at_other), run_identity(at_other)}) {
            const auto it = by_hash_.find(h);
            if (it == by_hash_.end()) continue;
            for (const Entry& e : it->second)
                if (e.cap == cap && e.dir.filename() != own.filename() && stops_within(cfg, e.steps, e.cap))
                    return e.dir;
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
