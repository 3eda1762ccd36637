// Reading text corpora: gzipped or plain UTF-8 files as lines, and line-aligned parallel pairs. Where a
// task's files lie is the task's own business (experiments/tasks/).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/util/files.hpp"  // WriteError
#include "experiments/util/text.hpp"   // is_valid_utf8

namespace relpos {

// A problem with data the user supplied (a missing or malformed file, misaligned files, bad task
// options). The message is one sentence naming the file, line or option and what is allowed.
struct DataError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads a UTF-8 text file, gzipped or plain (zlib reads both), as lines without their "\n" (a "\r"
// before it is dropped too). A last line without "\n" still counts; empty lines in the middle are
// kept, because line i of a source file must stay paired with line i of its target file.
// Throws DataError when the file is missing ("data file X does not exist (CONTEXT)"), empty, not
// readable as gzip, or has a line that is not valid UTF-8 ("X line N is not valid UTF-8").
// `context` names where the path came from, e.g. "key data.dir = data/corpus"; it may be empty.
std::vector<std::string> read_lines(const std::string& path, const std::string& context = "");

// Writes lines, each followed by "\n"; gzipped when the path ends in ".gz" (for hypotheses files).
void write_lines(const std::string& path, const std::vector<std::string>& lines);

// Two line-aligned sides of a corpus: tgt[i] translates src[i].
struct ParallelCorpus {
    std::vector<std::string> src, tgt;
    std::string src_path, tgt_path;
    std::size_t size() const { return src.size(); }
};

// Loads both sides; throws DataError naming both files and both line counts when they differ.
ParallelCorpus load_parallel(const std::string& src_path, const std::string& tgt_path,
                             const std::string& context = "");

}  // namespace relpos
