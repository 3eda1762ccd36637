// The multi30k task: Multi30k task 1 (English-German) translation from the bundled copy in data/multi30k
// (see its README for source, terms and checksums), scored with BLEU.
#pragma once

#include <string>
#include <vector>

#include "experiments/data/corpus.hpp"

namespace relpos {

// The splits in data/multi30k: train (29000 pairs), val (1014), test2016 (1000), test2017 (1000).
const std::vector<std::string>& multi30k_splits();
// The languages present: "de", "en".
const std::vector<std::string>& multi30k_languages();

// The file of one split and language: "{dir}/{split}.{lang}.gz" for the raw text, or
// "{dir}/tok/{split}.lc.norm.tok.{lang}.gz" for the Moses-tokenized lowercased text.
// Throws DataError for a split or language not listed above (it does not check that the file exists).
std::string multi30k_path(const std::string& dir, const std::string& split, const std::string& lang,
                          bool tokenized);

// Loads one split in the direction src_lang -> tgt_lang (de -> en by default; en -> de works the same).
// Throws DataError when src_lang == tgt_lang or a file is missing (naming `context`, e.g. the config key).
ParallelCorpus load_multi30k(const std::string& dir, const std::string& split, const std::string& src_lang = "de",
                             const std::string& tgt_lang = "en", bool tokenized = false,
                             const std::string& context = "");

}  // namespace relpos
