#include "experiments/util/files.hpp"

#include <fstream>

namespace relpos {

namespace fs = std::filesystem;

namespace {
fs::path tmp_of(const fs::path& p) { return p.string() + ".tmp"; }
}  // namespace

void write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files) {
    auto remove_tmp = [&] {
        std::error_code ec;
        for (const auto& f : files) fs::remove(tmp_of(f.first), ec);  // no half-written file is left behind
    };
    for (const auto& [path, text] : files) {
        std::ofstream out(tmp_of(path), std::ios::binary);
        out << text;
        out.close();
        if (!out) {
            remove_tmp();
            throw WriteError("cannot write " + path.string() + " (disk full?)");
        }
    }
    for (const auto& [path, text] : files) {
        std::error_code ec;
        fs::rename(tmp_of(path), path, ec);
        if (ec) {
            remove_tmp();
            throw WriteError("cannot move " + tmp_of(path).string() + " onto " + path.string() + ": " + ec.message());
        }
    }
}

void write_file_atomic(const fs::path& path, const std::string& text) { write_files_atomic({{path, text}}); }

}  // namespace relpos
