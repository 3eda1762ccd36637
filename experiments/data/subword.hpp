// A joint SentencePiece vocabulary (source + target training text), trained once and cached.
// Ids PAD_ID=0, UNK_ID=1, BOS_ID=2, EOS_ID=3 are fixed (experiments/data/example.hpp), so batching and the
// model never look ids up by piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiments/data/corpus.hpp"
#include "experiments/data/example.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace relpos {

struct SubwordOptions {
    std::size_t vocab_size = 8000;        // including the 4 special ids
    std::string model_type = "unigram";   // "unigram" or "bpe"
    double character_coverage = 1.0;      // 1.0: every character seen in training gets a piece
    // SentencePiece's normalization rule: "nmt_nfkc" (its default: NFKC + whitespace cleanup) or
    // "identity" (no change, so decode(encode(s)) == s for any single-spaced text).
    std::string normalization = "nmt_nfkc";
    // Trainer threads. Part of the cache key, since the unigram trainer's sums may depend on it.
    int num_threads = 2;
};

class Subword {
public:
    // Returns the vocabulary for these sentences and options: loads
    // `cache_dir`/spm-<model_type>-<vocab_size>-<hash>.model if it exists, else trains it (on all
    // sentences, in order, no sampling or shuffling: deterministic), writes it to a temporary name and
    // renames it into place (atomic, so concurrent runs never read a partial file). <hash> is the first
    // 32 hex digits of a SHA-256 over every option and every sentence. Creates cache_dir if needed.
    // Throws DataError for bad options (naming the allowed values) or a failed training, e.g. a
    // vocab_size larger than the text supports.
    static Subword train_or_load(const std::vector<std::string>& sentences, const SubwordOptions& opt,
                                 const std::string& cache_dir);
    // Loads a trained model file; throws DataError when it is missing or not a SentencePiece model, or
    // when its special ids differ from PAD/UNK/BOS/EOS = 0/1/2/3.
    static Subword load(const std::string& path);

    // Content ids of a sentence (no BOS/EOS).
    std::vector<std::int32_t> encode(const std::string& text) const;
    // Text of ids; PAD/BOS/EOS are skipped, UNK (and any id outside the vocabulary) decodes as " ⁇ "
    // (SentencePiece's convention).
    std::string decode(const std::vector<std::int32_t>& ids) const;
    std::size_t vocab_size() const;
    std::string model_path() const { return path_; }
    std::string piece(std::int32_t id) const;  // for debugging and attention-map labels
    // True when the last train_or_load call that returned this object trained a new model (false when
    // it reused the cache).
    bool trained() const { return trained_; }

    // False for a default-constructed Subword (a placeholder until train_or_load or load is assigned).
    bool loaded() const { return sp_ != nullptr; }

private:
    void require_loaded() const;  // throws std::logic_error: a programming error, not a user error
    std::shared_ptr<sentencepiece::SentencePieceProcessor> sp_;
    std::string path_;
    bool trained_ = false;
};

// The joint training text: every source then every target sentence of `corpus`.
std::vector<std::string> joint_sentences(const ParallelCorpus& corpus);

// Encodes both sides of a corpus into examples (pair i -> example i).
std::vector<Example> encode_corpus(const Subword& sw, const ParallelCorpus& corpus);

// SHA-256 of bytes as 64 lowercase hex digits (the cache key; also handy for data checksums).
std::string sha256_hex(const std::string& bytes);

}  // namespace relpos
