#include "experiments/data/corpus.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

namespace relpos {

namespace {

std::string with_context(const std::string& context) { return context.empty() ? "" : " (" + context + ")"; }

// The whole (decompressed) content of a file. gzread passes plain files through unchanged, so one
// code path serves both.
std::string read_all(const std::string& path, const std::string& context) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw DataError("data file " + path + " does not exist" + with_context(context) + ".");
    if (fs::is_directory(path, ec))
        throw DataError("data file " + path + " is a directory, not a file" + with_context(context) + ".");
    if (!fs::is_regular_file(path, ec))  // a FIFO or device would block or never end
        throw DataError("data file " + path + " is not a regular file (a device, FIFO or socket)" + with_context(context) + ".");
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw DataError("data file " + path + " cannot be opened" + with_context(context) + ".");
    gzbuffer(f, 1 << 17);
    std::string out;
    std::vector<char> buf(1 << 17);
    for (;;) {
        const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
        if (n < 0) break;
        if (n == 0) break;
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
    int errnum = Z_OK;
    const char* msg = gzerror(f, &errnum);
    const std::string zmsg = msg ? msg : "";
    const int close_rc = gzclose(f);
    if (errnum != Z_OK && errnum != Z_STREAM_END)
        throw DataError("data file " + path + " is not a readable gzip or text file (zlib: " + zmsg + ")" +
                        with_context(context) + ".");
    if (close_rc != Z_OK)
        throw DataError("data file " + path + " ends in the middle of its gzip stream (truncated?)" +
                        with_context(context) + ".");
    return out;
}

// The offset of the first CR that does not end a CRLF line, or npos.
std::size_t lone_carriage_return(const std::string& text) {
    for (std::size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at + 1))
        if (at + 1 == text.size() || text[at + 1] != '\n') return at;
    return std::string::npos;
}

}  // namespace

std::vector<std::string> read_lines(const std::string& path, const std::string& context) {
    const std::string text = read_all(path, context);
    if (text.empty()) throw DataError("data file " + path + " is empty" + with_context(context) + ".");
    // Line endings: LF and CRLF (its CR dropped below) are lines; a CR not before an LF would stay inside a
    // line (a whole CR-only file read as one line), so it is named here instead of as its symptom (one
    // enormous sentence).
    if (const std::size_t at = lone_carriage_return(text); at != std::string::npos) {
        const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n'));
        throw DataError("data file " + path +
                        (text.find('\n') != std::string::npos
                             ? " has mixed line endings: line " + std::to_string(line) +
                                   " ends in a lone carriage return (CR) where the others end in LF; give every line "
                                   "an LF (or CRLF) ending"
                             : " has carriage-return-only (CR, classic Mac) line endings; convert them to LF "
                               "(e.g. tr '\\r' '\\n' < in > out)") +
                        with_context(context) + ".");
    }
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::size_t stop = end;
        if (stop > start && text[stop - 1] == '\r') --stop;
        lines.emplace_back(text, start, stop - start);
        if (!is_valid_utf8(lines.back()))
            throw DataError(path + " line " + std::to_string(lines.size()) + " is not valid UTF-8" +
                            with_context(context) + ".");
        start = end + 1;
    }
    return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
    const bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gz) {
        gzFile f = gzopen(path.c_str(), "wb9");
        if (!f) throw DataError("cannot write " + path + ".");
        for (const auto& l : lines) {
            const std::string s = l + "\n";
            if (gzwrite(f, s.data(), static_cast<unsigned>(s.size())) != static_cast<int>(s.size())) {
                gzclose(f);
                throw WriteError("cannot write " + path + " (disk full?).");
            }
        }
        if (gzclose(f) != Z_OK) throw WriteError("cannot write " + path + " (disk full?).");
        return;
    }
    std::ofstream out(path, std::ios::binary);
    if (!out) throw DataError("cannot write " + path + ".");
    for (const auto& l : lines) out << l << '\n';
    out.flush();
    if (!out) throw WriteError("cannot write " + path + " (disk full?).");
}

ParallelCorpus load_parallel(const std::string& src_path, const std::string& tgt_path, const std::string& context) {
    ParallelCorpus c;
    c.src = read_lines(src_path, context);
    c.tgt = read_lines(tgt_path, context);
    c.src_path = src_path;
    c.tgt_path = tgt_path;
    if (c.src.size() != c.tgt.size())
        throw DataError("parallel files must have the same number of lines, but " + src_path + " has " +
                        std::to_string(c.src.size()) + " and " + tgt_path + " has " + std::to_string(c.tgt.size()) +
                        with_context(context) + ".");
    return c;
}

}  // namespace relpos
