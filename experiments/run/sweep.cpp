#include "experiments/run/sweep.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/run/identity.hpp"
#include "experiments/util/text.hpp"

namespace relpos {

namespace {

constexpr std::size_t kMaxPoints = 100000;
constexpr std::size_t kMaxIdLength = 150;  // well under the 255-byte limit of a file name

// Keeps [A-Za-z0-9._-] (and '=' when allowed); every other run of characters becomes one '-'.
std::string sanitize(const std::string& text, bool keep_equals) {
    std::string out;
    bool dash = false;
    for (char ch : text) {
        const bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-' ||
                        (keep_equals && ch == '=');
        if (ok) {
            out += ch;
            dash = false;
        } else if (!dash) {
            out += '-';
            dash = true;
        }
    }
    const auto b = out.find_first_not_of('-');
    if (b == std::string::npos) return "";
    return out.substr(b, out.find_last_not_of('-') - b + 1);
}

std::vector<std::string> split_dots(const std::string& key) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto dot = key.find('.', start);
        out.push_back(key.substr(start, dot - start));
        if (dot == std::string::npos) return out;
        start = dot + 1;
    }
}

// The shortest key suffixes (last component, then more) that tell the grid keys apart:
// model.position.k -> "k"; train.batch_tokens and eval.batch_tokens -> "train.batch_tokens", ...
std::vector<std::string> axis_names(const std::vector<SweepAxis>& grid) {
    std::vector<std::vector<std::string>> parts;
    for (const auto& a : grid) parts.push_back(split_dots(a.key));
    std::vector<std::size_t> depth(grid.size(), 1);
    auto name = [&](std::size_t i) {
        const auto& p = parts[i];
        const std::size_t n = std::min(depth[i], p.size());
        std::string s;
        for (std::size_t j = p.size() - n; j < p.size(); ++j) s += (s.empty() ? "" : ".") + p[j];
        return sanitize(s, false);
    };
    // Lengthen every name of a clashing group at once, so that all of them say where they come from.
    for (bool changed = true; changed;) {
        changed = false;
        std::vector<std::string> now;
        for (std::size_t i = 0; i < grid.size(); ++i) now.push_back(name(i));
        for (std::size_t i = 0; i < grid.size(); ++i)
            if (std::count(now.begin(), now.end(), now[i]) > 1 && depth[i] < parts[i].size()) {
                ++depth[i];
                changed = true;
            }
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < grid.size(); ++i) out.push_back(name(i));
    return out;
}

// Value parts of the ids for one axis: the value's text, made file-name safe; different values that
// become equal that way get the position of their first appearance appended (a cells axis repeats values).
std::vector<std::string> value_names(const SweepAxis& axis) {
    std::vector<std::string> out, yaml;
    for (const auto& v : axis.values) {
        out.push_back(sanitize(value_text(v), false));
        yaml.push_back(value_yaml(v));
    }
    std::vector<std::string> fixed = out;
    for (std::size_t i = 0; i < out.size(); ++i) {
        bool clash = false;
        for (std::size_t j = 0; j < out.size(); ++j) clash |= out[j] == out[i] && yaml[j] != yaml[i];
        if (clash)
            fixed[i] = out[i] + "-" + std::to_string(std::find(yaml.begin(), yaml.end(), yaml[i]) - yaml.begin());
    }
    return fixed;
}

}  // namespace

std::vector<SweepPoint> expand_sweep(const ExperimentConfig& cfg, const std::string& path,
                                     const std::vector<std::string>& overrides, const LoadFlags& flags) {
    const auto& grid = cfg.sweep.grid;
    const auto& cells = cfg.sweep.cells;  // zipped: cell i is every axis's i-th value
    const std::size_t n_cells = std::max<std::size_t>(cfg.sweep.cell_count(), 1);
    std::vector<SweepAxis> axes = grid;  // the grid's keys, then the cells', name the ids
    axes.insert(axes.end(), cells.begin(), cells.end());
    std::vector<Assignment> cli;
    for (const auto& o : overrides) cli.push_back(parse_override(o));
    // Overriding a swept key would give every point the same value under different names.
    for (const auto& a : cli) {
        for (const auto& axis : grid)
            if (key_contains(a.key, axis.key) || key_contains(axis.key, a.key))
                throw ConfigError(fmt::format("{}: {}: is swept by sweep.grid.{}; to run only some of its values, "
                                              "override the grid instead, e.g. sweep.grid.{}=[...]",
                                              a.location, a.key, axis.key, axis.key));
        for (const auto& axis : cells)
            if (key_contains(a.key, axis.key) || key_contains(axis.key, a.key))
                throw ConfigError(fmt::format("{}: {}: is set by sweep.cells; to run only some cells, override "
                                              "sweep.cells=[...] instead", a.location, a.key));
        if (a.key == "seed" && !cfg.sweep.seeds.empty())
            throw ConfigError(fmt::format("{}: seed: sweep.seeds lists the seeds; override sweep.seeds=[...] instead",
                                          a.location));
    }

    const bool seed_swept = std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.key == "seed"; });
    std::vector<long> seeds = cfg.sweep.seeds;
    if (seeds.empty()) seeds.push_back(cfg.seed);
    if (seed_swept) seeds.clear();  // the grid's own seed axis names each point's seed

    std::size_t total = std::max<std::size_t>(seeds.size(), 1) * n_cells;
    for (const auto& axis : grid) {
        total *= axis.values.size();
        if (total > kMaxPoints)
            throw ConfigError(fmt::format("{}: sweep.grid: more than {} points; split the sweep into several configs",
                                          path, kMaxPoints));
    }

    const auto names = axis_names(axes);
    std::vector<std::vector<std::string>> vnames;
    for (const auto& axis : axes) vnames.push_back(value_names(axis));

    LoadFlags point_flags = flags;
    point_flags.check_grid_values = false;  // each point is checked whole instead

    std::vector<SweepPoint> points;
    // The point of the grid position `idx`, cell ci and seed si.
    auto make_point = [&](const std::vector<std::size_t>& idx, std::size_t ci, std::size_t si) {
        SweepPoint p;
        p.index = points.size();
        std::vector<Assignment> as = cli;
        std::vector<std::string> id_parts;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            const bool in_grid = i < grid.size();
            const std::size_t at = in_grid ? idx[i] : ci;
            const YAML::Node& v = axes[i].values[at];
            as.push_back({axes[i].key, v, axes[i].value_locations[at],
                          in_grid ? std::string("sweep.grid.") : fmt::format("sweep.cells[{}].", ci)});
            p.overrides.push_back(axes[i].key + "=" + value_yaml(v));
            p.labels[axes[i].key] = value_text(v);
            id_parts.push_back(names[i] + "=" + vnames[i][at]);
        }
        if (!seeds.empty()) {
            const long s = seeds[si];
            as.push_back({"seed", YAML::Node(s), fmt::format("{}: sweep.seeds", path), ""});
            p.overrides.push_back(fmt::format("seed={}", s));
            p.labels["seed"] = std::to_string(s);
            id_parts.push_back(fmt::format("seed={}", s));
        }
        std::string id;
        for (const auto& part : id_parts) id += (id.empty() ? "" : "_") + part;
        if (id.size() > kMaxIdLength)
            id = id.substr(0, kMaxIdLength - 17) + "-" + fnv1a64_hex(id);
        p.id = id;
        p.config = resolve_config(path, as, point_flags);
        return p;
    };
    std::vector<std::size_t> idx(grid.size(), 0);
    while (true) {
        for (std::size_t ci = 0; ci < n_cells; ++ci)
            for (std::size_t si = 0; si < std::max<std::size_t>(seeds.size(), 1); ++si)
                points.push_back(make_point(idx, ci, si));
        // Odometer over the grid: the last key varies fastest; done when the first key wraps.
        bool done = true;
        for (std::size_t i = grid.size(); i-- > 0;) {
            if (++idx[i] < grid[i].values.size()) {
                done = false;
                break;
            }
            idx[i] = 0;
        }
        if (done) break;
    }

    // An encoding given twice in one model (the same options once its defaults are filled in) adds one
    // term twice: a typo, refused with both entries named.
    for (const auto& p : points) {
        const auto& pos = p.config.model.position;
        std::vector<std::string> seen;
        for (const auto& spec : pos) seen.push_back(value_yaml(resolved_position(spec)));
        for (std::size_t j = 0; j < pos.size(); ++j)
            for (std::size_t i = 0; i < j; ++i)
                if (seen[i] == seen[j]) {
                    YamlOptions o = pos[j].options();
                    try {
                        o.fail_at(pos[j].node, pos[j].key,
                                  fmt::format("is the encoding of {} again ({} with its defaults filled in); a model "
                                              "takes each encoding once", pos[i].key, value_text(resolved_position(pos[i]))));
                    } catch (const std::exception& e) {
                        throw ConfigError(e.what());
                    }
                }
    }
    // Two points that are one run (values that differ only in defaults, e.g. {type: shaw, k: 2} and
    // {type: shaw, k: 2, keys: true}) would train it twice under two names, or share it in a run store and
    // fill two rows with one run: refused, both named.
    std::map<std::string, std::size_t> by_identity;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto [it, fresh] = by_identity.emplace(run_identity(points[i].config), i);
        if (fresh) continue;
        const SweepPoint& a = points[it->second];
        const SweepPoint& b = points[i];
        throw ConfigError(fmt::format("{}: sweep: the points {} ({}) and {} ({}) are the same run (their values differ "
                                      "only in defaults, which `relpos list` shows); list it once",
                                      path, a.id, join(a.overrides, " "), b.id, join(b.overrides, " ")));
    }

    std::set<std::string> ids;
    for (const auto& p : points)
        if (!ids.insert(p.id).second)
            throw ConfigError(fmt::format("{}: sweep.grid: two points get the directory name '{}'; make the values "
                                          "differ in letters or digits", path, p.id));
    return points;
}

Shard parse_shard(const std::string& text) {
    const std::string usage = fmt::format(
        "--shard '{}': expected i/n with 0 <= i < n, e.g. 0/4 (with Slurm's --array=0-3: "
        "--shard ${{SLURM_ARRAY_TASK_ID}}/4)", text);
    const auto slash = text.find('/');
    auto digits = [](const std::string& s) {
        return !s.empty() && s.size() <= 9 &&
               std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (slash == std::string::npos) throw ConfigError(usage);
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    if (!digits(a) || !digits(b)) throw ConfigError(usage);
    Shard s{std::stoul(a), std::stoul(b)};
    if (s.count == 0) throw ConfigError(fmt::format("--shard '{}': the shard count must be at least 1", text));
    if (s.index >= s.count)
        throw ConfigError(fmt::format("--shard '{}': the shard index must be below the count {} (shards are numbered "
                                      "0 to {})", text, s.count, s.count - 1));
    return s;
}

std::int64_t parse_start_before(const std::string& text, std::int64_t now, const std::string& option) {
    const std::string usage = fmt::format(
        "{} '{}': expected +<minutes>m, +<hours>h, +<seconds>s (from now) or @<unix time> (e.g. "
        "@$(date -d 14:00 +%s))", option, text);
    auto number = [&](const std::string& s) {
        if (s.empty() || s.size() > 12 ||
            !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            throw ConfigError(usage);
        return static_cast<std::int64_t>(std::stoll(s));
    };
    if (text.size() >= 2 && text[0] == '@') return number(text.substr(1));
    if (text.size() >= 3 && text[0] == '+') {
        const char unit = text.back();
        const std::int64_t n = number(text.substr(1, text.size() - 2));
        if (unit == 's') return now + n;
        if (unit == 'm') return now + 60 * n;
        if (unit == 'h') return now + 3600 * n;
    }
    throw ConfigError(usage);
}

std::vector<SweepPoint> select_matching(const std::vector<SweepPoint>& points, const std::string& glob,
                                        const std::string& config_path, const std::string& option) {
    std::vector<SweepPoint> out;
    for (const auto& p : points)
        if (::fnmatch(glob.c_str(), p.id.c_str(), 0) == 0) out.push_back(p);
    if (out.empty()) {
        std::vector<std::string> ids;
        for (std::size_t i = 0; i < points.size() && i < 4; ++i) ids.push_back(points[i].id);
        throw ConfigError(fmt::format("{} '{}': matches none of the {} run id(s) of {} (e.g. {}{}; `relpos run {} "
                                      "--list` lists them)", option, glob, points.size(), config_path, join(ids),
                                      points.size() > ids.size() ? ", ..." : "", config_path));
    }
    return out;
}

std::vector<SweepPoint> select_study(const std::vector<SweepPoint>& points, const ExperimentConfig& cfg,
                                     const std::string& config_path) {
    const auto& only = cfg.sweep.only;
    if (only.empty()) return points;
    std::vector<bool> used(only.size(), false);
    std::vector<SweepPoint> out;
    for (const auto& p : points) {
        bool in = false;
        for (std::size_t i = 0; i < only.size(); ++i)
            if (::fnmatch(only[i].c_str(), p.id.c_str(), 0) == 0) in = used[i] = true;
        if (in) out.push_back(p);
    }
    for (std::size_t i = 0; i < only.size(); ++i)
        if (!used[i]) {
            std::vector<std::string> ids;
            for (std::size_t k = 0; k < points.size() && k < 3; ++k) ids.push_back(points[k].id);
            throw ConfigError(fmt::format("{}: sweep.only: '{}' matches none of the {} run id(s) of the sweep (e.g. {}; "
                                          "`relpos run {} --list` lists the study's points)",
                                          config_path, only[i], points.size(), join(ids), config_path));
        }
    return out;
}

std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, std::size_t i, std::size_t n) {
    if (n == 0 || i >= n)
        throw ConfigError(fmt::format("shard {}/{}: expected 0 <= i < n", i, n));
    std::vector<SweepPoint> out;
    for (std::size_t k = i; k < points.size(); k += n) out.push_back(points[k]);
    return out;
}

}  // namespace relpos
