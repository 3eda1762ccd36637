// Committed experiments rerun as committed: `relpos run <results/<study>/experiment.yaml>` of a finished study
// trains nothing. A study that stopped short of its grid (its budget, or cells never meant to run) lists the
// points it ran in sweep.only, in its config and in its experiment.yaml alike (docs/configs.md, `sweep`).
//
// Exempt, by rule: the studies of configs/campaign.list, the project's campaign, in progress by definition (a
// study is the campaign's when the first line of its experiment.yaml, "# written by relpos run <config>", names a
// config that list holds); and a study whose data is not installed here (the Brown corpus before `make data`),
// which is named in a warning instead. docs/studies.md states the same rule.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "experiments/config/config.hpp"
#include "tests/cli_helpers.hpp"

#include <catch2/catch.hpp>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot(RELPOS_SOURCE_DIR);

std::string first_line(const fs::path& p) {
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
}

// configs/campaign.list: one config per line, '#' comments.
std::set<std::string> campaign_configs() {
    std::ifstream in(kRoot / "configs" / "campaign.list");
    std::set<std::string> out;
    for (std::string line; std::getline(in, line);) {
        line = line.substr(0, line.find('#'));
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (!line.empty()) out.insert(line);
    }
    return out;
}

std::vector<fs::path> committed_experiments() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(kRoot / "results"))
        if (fs::exists(e.path() / "experiment.yaml")) out.push_back(e.path() / "experiment.yaml");
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("studies/relpos run of every committed experiment.yaml finds nothing left to train",
          "[cli][committed_runs][studies]") {
    const auto campaign = campaign_configs();
    const auto experiments = committed_experiments();
    REQUIRE(experiments.size() > 20);
    const std::regex summary("# (\\d+) of (\\d+) run\\(s\\) finished, (\\d+) left");
    std::size_t checked = 0;
    for (const auto& x : experiments) {
        const std::string rel = fs::relative(x, kRoot).string();
        const std::string written_by = first_line(x);
        const std::string prefix = "# written by relpos run ";
        const std::string config = written_by.rfind(prefix, 0) == 0 ? written_by.substr(prefix.size()) : "";
        if (campaign.count(config)) {
            WARN(rel << ": not checked: its config " << config << " is in configs/campaign.list (in progress)");
            continue;
        }
        // the summary line (stderr) alone; the points (stdout) are not read
        const relpos::test::Cmd r = relpos::test::sh("(cd " + kRoot.string() + " && " + std::string(RELPOS_BINARY_DIR) +
                                                     "/relpos run " + rel + " --list 2>&1 >/dev/null)");
        if (r.code == 2 && r.out.find("data.dir") != std::string::npos && r.out.find("does not exist") != std::string::npos) {
            WARN(rel << ": not checked: its data are not installed here (" << r.out.substr(0, r.out.find('\n')) << ")");
            continue;
        }
        INFO(rel << " (" << config << "):\n" << r.out);
        REQUIRE(r.code == 0);
        std::smatch m;
        REQUIRE(std::regex_search(r.out, m, summary));
        if (m[3] != "0")
            FAIL_CHECK("study " << rel << " would train " << m[3] << " of its " << m[2] << " run(s): `relpos run " << rel
                                << "` of a committed study must train nothing; list the points it ran in sweep.only "
                                   "(in " << config << " and in " << rel << "), or add its config to configs/campaign.list "
                                   "while it is in progress");
        else
            CHECK_THAT(r.out, Catch::Contains("the study is complete"));
        ++checked;
    }
    CHECK(checked > 15);
}

TEST_CASE("studies/a committed experiment.yaml with sweep.only is what relpos run writes", "[config][committed_runs][studies]") {
    // `relpos run` rewrites experiment.yaml when the resolved config differs from its body: the hand-written
    // sweep.only of a finished study must read back to the same text, so that a rerun leaves the file (and its
    // commit line) as committed.
    relpos::LoadFlags flags;
    flags.check_paths = false;
    std::size_t with_only = 0;
    for (const auto& x : committed_experiments()) {
        std::ifstream in(x);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find("\n  only:\n") == std::string::npos) continue;
        ++with_only;
        INFO(x.string());
        const auto body_at = text.find('\n', text.find("\n# commit ") + 1);
        REQUIRE(body_at != std::string::npos);
        const relpos::ExperimentConfig cfg = relpos::load_config(x.string(), {}, flags);
        CHECK_FALSE(cfg.sweep.only.empty());
        CHECK(relpos::to_yaml(cfg) == text.substr(body_at + 1));
    }
    CHECK(with_only >= 9);
}
