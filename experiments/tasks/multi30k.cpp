// The multi30k task (multi30k.hpp): the bundled corpus's file layout, the task that trains on it, and its
// registration. Raw input is normalized like its tokenized files by multi30k_normalize.cpp.
#include "experiments/tasks/multi30k.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "experiments/data/batching.hpp"
#include "experiments/tasks/multi30k_normalize.hpp"
#include "experiments/tasks/seq2seq.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/util/text.hpp"

namespace relpos {

namespace {
std::string with_context(const std::string& context) { return context.empty() ? "" : " (" + context + ")"; }
}  // namespace

const std::vector<std::string>& multi30k_splits() {
    static const std::vector<std::string> s{"train", "val", "test2016", "test2017"};
    return s;
}

const std::vector<std::string>& multi30k_languages() {
    static const std::vector<std::string> s{"de", "en"};
    return s;
}

std::string multi30k_path(const std::string& dir, const std::string& split, const std::string& lang, bool tokenized) {
    const auto& splits = multi30k_splits();
    const auto& langs = multi30k_languages();
    if (std::find(splits.begin(), splits.end(), split) == splits.end())
        throw DataError("unknown Multi30k split '" + split + "'; allowed: " + join(splits) + ".");
    if (std::find(langs.begin(), langs.end(), lang) == langs.end())
        throw DataError("unknown Multi30k language '" + lang + "'; allowed: " + join(langs) + ".");
    const std::string base = dir.empty() ? "." : dir;
    if (tokenized) return base + "/tok/" + split + ".lc.norm.tok." + lang + ".gz";
    return base + "/" + split + "." + lang + ".gz";
}

ParallelCorpus load_multi30k(const std::string& dir, const std::string& split, const std::string& src_lang,
                             const std::string& tgt_lang, bool tokenized, const std::string& context) {
    if (src_lang == tgt_lang)
        throw DataError("source and target language are both '" + src_lang + "'; Multi30k pairs de with en" +
                        with_context(context) + ".");
    return load_parallel(multi30k_path(dir, split, src_lang, tokenized), multi30k_path(dir, split, tgt_lang, tokenized),
                         context);
}

namespace {

class Multi30kTask : public Seq2SeqTask {
public:
    Dataset load(const ExperimentConfig& cfg, const std::string& cache_dir, const Log& log) const override {
        Dataset d;
        const auto& dc = cfg.data;
        d.valid_split = dc.valid_split;
        const auto wanted = wanted_splits(cfg);
        const std::string ctx = fmt::format("key data.dir = {} in {}", dc.dir, cfg.source);
        // Every file is read and checked (present, UTF-8, line-aligned) before the subword model is
        // trained and cached, so that a bad file is reported before anything is written.
        ParallelCorpus train = load_multi30k(dc.dir, "train", dc.src, dc.tgt, dc.tokenized, ctx);
        std::map<std::string, ParallelCorpus> corpora;
        std::map<std::string, std::vector<std::string>> raw_refs;
        for (const auto& name : wanted) {
            corpora[name] = name == "train" ? train : load_multi30k(dc.dir, name, dc.src, dc.tgt, dc.tokenized, ctx);
            raw_refs[name] = dc.tokenized ? load_multi30k(dc.dir, name, dc.src, dc.tgt, false, ctx).tgt : corpora[name].tgt;
        }
        d.subword = train_subword(cfg, joint_sentences(train), cache_dir);
        if (log)
            log(fmt::format("subword vocabulary: {} pieces ({} {})", d.subword->vocab_size(),
                            d.subword->trained() ? "trained, cached at" : "reused from", d.subword->model_path()));
        d.vocab = d.subword->vocab_size();
        auto all = encode_corpus(*d.subword, train);
        std::size_t dropped = 0;
        d.train = filter_by_length(all, static_cast<std::size_t>(dc.max_len), &dropped);
        if (dc.max_train_examples > 0 && d.train.size() > static_cast<std::size_t>(dc.max_train_examples))
            d.train.resize(static_cast<std::size_t>(dc.max_train_examples));
        if (log)
            log(fmt::format("multi30k {}->{}{}: {} training pairs ({} longer than {} subwords dropped)", dc.src, dc.tgt,
                            dc.tokenized ? " (tokenized, lowercased)" : "", d.train.size(), dropped, dc.max_len));
        for (const auto& name : wanted) {
            ParallelCorpus& c = corpora.at(name);
            EvalSplit e;
            e.examples = encode_corpus(*d.subword, c);
            e.sources = std::move(c.src);
            e.refs = std::move(c.tgt);
            e.refs_raw = std::move(raw_refs.at(name));
            d.splits[name] = std::move(e);
        }
        return d;
    }
};

}  // namespace

void register_multi30k(TaskRegistry& r) {
    TaskEntry e;
    e.name = "multi30k";
    e.summary = "Multi30k task 1 translation, German <-> English (data/multi30k), BLEU";
    e.families = {nn::Family::EncoderDecoder};
    e.metrics = {{nn::Family::EncoderDecoder, kSeq2SeqMetrics}};
    e.options = {{"dir", "string", "data/multi30k", "the corpus directory"},
                 {"src, tgt", "string", "de, en", "the languages (de | en)"},
                 {"tokenized", "bool", "true", "the bundled lowercased Moses-tokenized text"},
                 {"vocab_size", "int", "8000", "joint SentencePiece vocabulary"},
                 {"subword_model", "string", "unigram", "SentencePiece model type (unigram | bpe)"},
                 {"max_len", "int", "100", "drop training pairs longer than this (subwords)"},
                 {"max_train_examples", "int", "0", "use only the first this many training pairs (0 = all)"}};
    e.data.dir = "data/multi30k";
    e.data.reads_dir = true;
    e.data.test_splits = {"test2016"};  // Multi30k's test sets are named after their years
    e.data.default_metrics = {{"encoder_decoder", {"bleu_tok", "bleu"}}};
    e.tokenized_text.languages = multi30k_languages();
    e.tokenized_text.normalize = normalize_like_multi30k;
    e.tokenized_text.looks_normalized = looks_tokenized;
    e.split_file = [](const ExperimentConfig& cfg, const std::string& split, const std::string& lang, bool tokenized) {
        return multi30k_path(cfg.data.dir, split, lang, tokenized);
    };
    e.make = [](nn::Family) { return std::make_unique<Multi30kTask>(); };
    r.add(std::move(e));
}

}  // namespace relpos
