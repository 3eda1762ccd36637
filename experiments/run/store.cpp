#include "experiments/run/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/run/continuation.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/util/files.hpp"
#include "experiments/util/system.hpp"

namespace relpos {

namespace fs = std::filesystem;

void check_results_dir(const std::string& config_path, const fs::path& exp_dir, const std::string& key) {
    std::error_code ec;
    fs::path p = exp_dir;
    while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
    if (p.empty()) p = ".";
    const auto fail = [&](const std::string& why) {
        throw ConfigError(fmt::format("{}: {}: cannot create {}: {}", config_path, key, exp_dir.string(), why));
    };
    if (!fs::is_directory(p, ec)) fail(fmt::format("{} is a file, not a directory", p.string()));
    if (::access(p.c_str(), W_OK | X_OK) != 0) fail(fmt::format("{} is not writable", p.string()));
}

bool check_existing_run_config(const SweepPoint& p, const fs::path& run_dir, bool equivalent) {
    const ExperimentConfig& cfg = p.config;
    const std::string hash = config_hash(cfg);
    std::error_code ec;
    const fs::path results = run_dir / "results.json";
    if (fs::exists(results, ec)) {
        if (equivalent) return false;  // the caller found it the same run under another stop
        std::string why;
        const std::string recorded = read_finished_run(results, &why).config_hash;
        if (recorded.empty())
            throw ConfigError(fmt::format("{}: run {} has a results.json without a config_hash{}, so it cannot be matched "
                                          "to this config; move {} away (finished runs are never overwritten)",
                                          cfg.source, p.id, why.empty() ? "" : " that relpos can read (" + why + ")",
                                          run_dir.string()));
        if (!same_run(recorded, cfg))
            throw ConfigError(fmt::format(
                "{}: run {} already finished with a different configuration; use another experiment name or move "
                "{} away (finished runs are never overwritten)",
                cfg.source, p.id, run_dir.string()));
        return false;
    }
    const std::string last = (run_dir / "checkpoints" / "last").string();
    if (!checkpoint_exists(last) && !checkpoint_exists(last + ".old")) return false;  // starts afresh
    const TrainProgress pr = verify_checkpoint(last, {}, false);  // state.json only: the config comes first
    if (!same_run(pr.config_hash, cfg))
        throw ConfigError(fmt::format(
            "{}: run {} was started with a different configuration (its checkpoint {} has config hash {}, this config "
            "{}), and resuming would mix the two; use the settings in {}, another experiment name, or move {} away",
            cfg.source, p.id, last, pr.config_hash, hash, (run_dir / "config.yaml").string(), run_dir.string()));
    return true;
}

void check_existing_run(const SweepPoint& p, const fs::path& run_dir, const nn::Transformer<float>& model,
                        bool equivalent) {
    if (check_existing_run_config(p, run_dir, equivalent))
        verify_checkpoint((run_dir / "checkpoints" / "last").string(), model.named_parameters(), true);
}

RunLock::RunLock(const fs::path& dir) {
    const fs::path file = dir / ".lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;  // unwritable: the run itself will say why
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        char buf[64] = {0};
        const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        holder_ = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "another process";
        while (!holder_.empty() && (holder_.back() == '\n' || holder_.back() == ' ')) holder_.pop_back();
        ::close(fd_);
        fd_ = -1;
        return;
    }
    const std::string me = fmt::format("pid {} on {}\n", ::getpid(), host_name());
    if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, me.data(), me.size(), 0) < 0) {}
}

RunLock::~RunLock() {
    if (fd_ >= 0) ::close(fd_);
}

std::string unfinished_run_state(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir / "metrics.jsonl", ec)) return "";
    long step = -1, epoch = -1;
    {
        std::ifstream in(dir / "metrics.jsonl", std::ios::binary | std::ios::ate);
        const std::streamoff size = in.tellg();
        const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
        in.seekg(from);
        std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::size_t end = tail.size();
        while (end > 0 && step < 0) {  // the last complete line with a step
            const std::size_t start = tail.rfind('\n', end - 1);
            const std::size_t b = start == std::string::npos ? 0 : start + 1;
            if (b > 0 || from == 0) {
                const Json j = Json::parse(tail.substr(b, end - b), nullptr, false);
                if (j.is_object() && j.contains("step") && j["step"].is_number()) {
                    step = j["step"].get<long>();
                    if (j.contains("epoch") && j["epoch"].is_number()) epoch = j["epoch"].get<long>();
                }
            }
            if (start == std::string::npos) break;
            end = start;
        }
    }
    const std::string where = step < 0 ? std::string("no update logged yet")
                                       : fmt::format("step {}{}", step, epoch >= 0 ? fmt::format(", epoch {}", epoch + 1) : "");
    std::ifstream lock(dir / ".lock");
    std::string word, on, host;
    long pid = 0;
    if (lock >> word >> pid >> on >> host && word == "pid" && on == "on" && pid > 0) {
        const bool alive = host == host_name() && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
        if (alive) return fmt::format("  [training: pid {}, {}]", pid, where);
        if (host != host_name()) return fmt::format("  [started by pid {} on {}: {}]", pid, host, where);
    }
    return fmt::format("  [interrupted: {}; resumes from its last checkpoint]", where);
}

std::vector<SharedLink> plan_shared_links(const std::vector<SweepPoint>& points, const fs::path& exp_dir,
                                          const std::function<fs::path(const SweepPoint&)>& run_dir_of,
                                          const std::string& config_path) {
    std::vector<SharedLink> steps;
    for (const auto& p : points) {
        const fs::path link = exp_dir / "runs" / p.id, target = run_dir_of(p);
        const fs::path rel = fs::relative(fs::absolute(target), fs::absolute(link.parent_path()));
        std::error_code ec;
        if (fs::is_symlink(link, ec)) {
            if (fs::read_symlink(link, ec) == rel) {
                steps.push_back({fs::path(), target, rel, ""});  // linked already: its run directory only
                continue;
            }
            // A link to a run directory that never started (no metrics.jsonl, no results.json: an earlier call
            // linked this point to its own directory, and the store now holds the same run under another stop,
            // which run_dir_of gives) holds nothing to lose: relink. So does a link to an unfinished run of the
            // same store (the point's config was changed since it started): the run stays there, and this point
            // continues it where it may (run/continuation.hpp). A link to a finished run, or out of the store,
            // is the user's.
            const fs::path old_target = link.parent_path() / fs::read_symlink(link, ec);
            if (!fs::exists(old_target / "results.json", ec)) {
                const bool started = fs::exists(old_target / "metrics.jsonl", ec);
                const fs::path a = fs::weakly_canonical(fs::absolute(old_target.parent_path()), ec),
                               b = fs::weakly_canonical(fs::absolute(target.parent_path()), ec);
                const bool same_store = !a.empty() && a == b;
                if (!started || same_store) {
                    steps.push_back({link, target, rel,
                                     started ? fmt::format("note: {}: {} linked the unfinished run {}, of the point's "
                                                           "config before it changed; relinked to {} (that run stays "
                                                           "in the store)\n",
                                                           config_path, link.string(),
                                                           old_target.lexically_normal().string(), rel.string())
                                             : ""});
                    continue;
                }
            }
            throw ConfigError(fmt::format("{}: run_store: {} is a link to {}, not to this point's shared run {}; move it "
                                          "away (runs are never overwritten)",
                                          config_path, link.string(), fs::read_symlink(link, ec).string(), rel.string()));
        }
        // a plain file holding this very link's target (a checkout without symbolic links): nothing of the user's
        // is lost by making it a link again
        if (link_left_as_text(link) != rel.string() && fs::exists(link, ec))
            throw ConfigError(fmt::format("{}: run_store: {} already exists and is not a link to the shared run {}; "
                                          "move it away or use another experiment name (runs are never overwritten)",
                                          config_path, link.string(), rel.string()));
        steps.push_back({link, target, rel, ""});
    }
    return steps;
}

void make_shared_links(const std::vector<SharedLink>& links) {
    for (const auto& s : links) {
        fs::create_directories(s.target);
        if (s.link.empty()) continue;
        if (!s.note.empty()) fmt::print(stderr, "{}", s.note);
        std::error_code ec;
        fs::remove(s.link, ec);  // nothing, or an entry plan_shared_links found to hold nothing of the user's
        fs::create_directories(s.link.parent_path());
        fs::create_directory_symlink(s.rel, s.link);
    }
}

}  // namespace relpos
