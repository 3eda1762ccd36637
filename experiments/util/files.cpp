#include "experiments/util/files.hpp"

#include <fstream>
#include <iterator>

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

std::string link_left_as_text(const fs::path& entry) {
    std::error_code ec;
    if (fs::is_symlink(entry, ec) || !fs::is_regular_file(entry, ec)) return "";
    const auto size = fs::file_size(entry, ec);
    if (ec || size == 0 || size >= 4096) return "";
    std::ifstream in(entry, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) return "";
    if (text.find_first_of(std::string("\n\r\0", 3)) != std::string::npos) return "";
    if (fs::path(text).is_absolute()) return "";
    return text;
}

}  // namespace relpos
