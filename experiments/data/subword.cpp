#include "experiments/data/subword.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace relpos {

namespace {

// FIPS 180-4 SHA-256, streamed, so the cache key of a whole corpus needs no concatenated copy.
class Sha256 {
public:
    void update(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        bits_ += std::uint64_t(n) * 8;
        while (n--) {
            buf_[fill_++] = *p++;
            if (fill_ == 64) {
                block(buf_.data());
                fill_ = 0;
            }
        }
    }
    void update(const std::string& s) { update(s.data(), s.size()); }
    std::string hex() {
        const std::uint64_t bits = bits_;
        const unsigned char one = 0x80, zero = 0;
        update(&one, 1);
        while (fill_ != 56) update(&zero, 1);
        unsigned char len[8];
        for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
        update(len, 8);
        std::string out;
        char b[9];
        for (auto w : h_) {
            std::snprintf(b, sizeof b, "%08x", w);
            out += b;
        }
        return out;
    }

private:
    static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
    void block(const unsigned char* p) {
        static const std::uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 | std::uint32_t(p[4 * i + 2]) << 8 |
                   std::uint32_t(p[4 * i + 3]);
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
        }
        h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
    }
    std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<unsigned char, 64> buf_{};
    std::size_t fill_ = 0;
    std::uint64_t bits_ = 0;
};

// Feeds the training sentences straight from memory (no temporary text file).
class VectorIterator : public sentencepiece::SentenceIterator {
public:
    explicit VectorIterator(const std::vector<std::string>& v) : v_(v) {}
    bool done() const override { return i_ >= v_.size(); }
    void Next() override { ++i_; }
    const std::string& value() const override { return v_[i_]; }
    sentencepiece::util::Status status() const override { return {}; }

private:
    const std::vector<std::string>& v_;
    std::size_t i_ = 0;
};

std::string fmt_double(double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

void validate(const SubwordOptions& opt) {
    if (opt.model_type != "unigram" && opt.model_type != "bpe")
        throw DataError("subword option model_type is '" + opt.model_type + "'; allowed: unigram, bpe.");
    if (opt.normalization != "nmt_nfkc" && opt.normalization != "identity")
        throw DataError("subword option normalization is '" + opt.normalization + "'; allowed: nmt_nfkc, identity.");
    if (opt.vocab_size < 8 || opt.vocab_size > 1000000)
        throw DataError("subword option vocab_size must be between 8 and 1000000, not " +
                        std::to_string(opt.vocab_size) + ".");
    if (!(opt.character_coverage > 0.0 && opt.character_coverage <= 1.0))
        throw DataError("subword option character_coverage must be in (0, 1], not " + fmt_double(opt.character_coverage) +
                        ".");
    if (opt.num_threads < 1 || opt.num_threads > 256)
        throw DataError("subword option num_threads must be between 1 and 256, not " + std::to_string(opt.num_threads) +
                        ".");
}

std::unordered_map<std::string, std::string> trainer_args(const SubwordOptions& opt) {
    return {
        {"model_type", opt.model_type},
        {"vocab_size", std::to_string(opt.vocab_size)},
        {"character_coverage", fmt_double(opt.character_coverage)},
        {"normalization_rule_name", opt.normalization},
        {"num_threads", std::to_string(opt.num_threads)},
        {"pad_id", std::to_string(PAD_ID)},
        {"unk_id", std::to_string(UNK_ID)},
        {"bos_id", std::to_string(BOS_ID)},
        {"eos_id", std::to_string(EOS_ID)},
        // Determinism: read every sentence in order; never sample or shuffle.
        {"input_sentence_size", "0"},
        {"shuffle_input_sentence", "false"},
        {"minloglevel", "1"},        // keep SentencePiece's per-iteration INFO lines off stderr
    };
}

}  // namespace

std::string sha256_hex(const std::string& bytes) {
    Sha256 h;
    h.update(bytes);
    return h.hex();
}

Subword Subword::load(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw DataError("subword model " + path + " does not exist.");
    Subword sw;
    sw.sp_ = std::make_shared<sentencepiece::SentencePieceProcessor>();
    const auto st = sw.sp_->Load(path);
    if (!st.ok()) throw DataError("subword model " + path + " cannot be loaded (" + st.ToString() + ").");
    if (sw.sp_->pad_id() != PAD_ID || sw.sp_->unk_id() != UNK_ID || sw.sp_->bos_id() != BOS_ID ||
        sw.sp_->eos_id() != EOS_ID)
        throw DataError("subword model " + path + " has special ids pad/unk/bos/eos = " +
                        std::to_string(sw.sp_->pad_id()) + "/" + std::to_string(sw.sp_->unk_id()) + "/" +
                        std::to_string(sw.sp_->bos_id()) + "/" + std::to_string(sw.sp_->eos_id()) +
                        "; relpos needs 0/1/2/3.");
    sw.path_ = path;
    return sw;
}

Subword Subword::train_or_load(const std::vector<std::string>& sentences, const SubwordOptions& opt,
                               const std::string& cache_dir) {
    namespace fs = std::filesystem;
    validate(opt);
    if (sentences.empty()) throw DataError("subword training needs at least one sentence.");

    // Cache key: a format tag, every option, then each sentence with its length (so that no two different
    // sentence lists give the same byte stream).
    Sha256 h;
    h.update("relpos-subword-v1|sentencepiece-0.1.97\n");
    h.update("model_type=" + opt.model_type + "\nvocab_size=" + std::to_string(opt.vocab_size) +
             "\ncharacter_coverage=" + fmt_double(opt.character_coverage) + "\nnormalization=" + opt.normalization +
             "\nnum_threads=" + std::to_string(opt.num_threads) + "\n");
    for (const auto& s : sentences) {
        const std::string len = std::to_string(s.size()) + ":";
        h.update(len);
        h.update(s);
    }
    const std::string key = h.hex().substr(0, 32);
    const std::string dir = cache_dir.empty() ? "." : cache_dir;
    const std::string path =
        dir + "/spm-" + opt.model_type + "-" + std::to_string(opt.vocab_size) + "-" + key + ".model";

    std::error_code ec;
    if (fs::exists(path, ec)) return load(path);

    fs::create_directories(dir, ec);
    if (ec) throw DataError("cannot create the subword cache directory " + dir + " (" + ec.message() + ").");

    VectorIterator it(sentences);
    std::string serialized;
    const auto st = sentencepiece::SentencePieceTrainer::Train(trainer_args(opt), &it, &serialized);
    if (!st.ok())
        throw DataError("SentencePiece training failed for vocab_size " + std::to_string(opt.vocab_size) + " (" +
                        st.ToString() + ").");

    // Write to a name unique to this process, then rename: readers see either no file or a whole one.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary);
        out.write(serialized.data(), static_cast<std::streamsize>(serialized.size()));
        out.flush();
        if (!out) throw DataError("cannot write the subword model " + tmp + ".");
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw DataError("cannot move the subword model into place at " + path + ".");
    }
    Subword sw = load(path);
    sw.trained_ = true;
    return sw;
}

void Subword::require_loaded() const {
    if (!sp_) throw std::logic_error("relpos::Subword used before train_or_load() or load().");
}

std::vector<std::int32_t> Subword::encode(const std::string& text) const {
    require_loaded();
    std::vector<int> ids;
    const auto st = sp_->Encode(text, &ids);
    if (!st.ok()) throw DataError("subword encoding failed (" + st.ToString() + ").");
    return std::vector<std::int32_t>(ids.begin(), ids.end());
}

std::string Subword::decode(const std::vector<std::int32_t>& ids) const {
    require_loaded();
    std::vector<int> v;
    v.reserve(ids.size());
    const auto n = static_cast<std::int32_t>(vocab_size());
    for (auto id : ids) {
        if (id == PAD_ID || id == BOS_ID || id == EOS_ID) continue;
        v.push_back(id >= 0 && id < n ? id : UNK_ID);
    }
    std::string text;
    const auto st = sp_->Decode(v, &text);
    if (!st.ok()) throw DataError("subword decoding failed (" + st.ToString() + ").");
    return text;
}

std::size_t Subword::vocab_size() const {
    require_loaded();
    return static_cast<std::size_t>(sp_->GetPieceSize());
}

std::string Subword::piece(std::int32_t id) const {
    if (id < 0 || id >= static_cast<std::int32_t>(vocab_size())) return "<out-of-range>";
    return sp_->IdToPiece(id);
}

std::vector<std::string> joint_sentences(const ParallelCorpus& corpus) {
    std::vector<std::string> all;
    all.reserve(corpus.src.size() + corpus.tgt.size());
    all.insert(all.end(), corpus.src.begin(), corpus.src.end());
    all.insert(all.end(), corpus.tgt.begin(), corpus.tgt.end());
    return all;
}

std::vector<Example> encode_corpus(const Subword& sw, const ParallelCorpus& corpus) {
    std::vector<Example> out(corpus.size());
    for (std::size_t i = 0; i < corpus.size(); ++i) {
        out[i].src = sw.encode(corpus.src[i]);
        out[i].tgt = sw.encode(corpus.tgt[i]);
    }
    return out;
}

}  // namespace relpos
