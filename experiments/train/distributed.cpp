#include "experiments/train/distributed.hpp"

#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "experiments/config/config.hpp"

namespace relpos {

namespace {

// One process: every collective is the identity.
class SingleProcess final : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::unique_ptr<Pending> start_sum(float*, std::size_t) override { return std::make_unique<Done>(); }
    void sum(double*, std::size_t) override {}
    void broadcast(void*, std::size_t) override {}
    [[noreturn]] void abort(int code) override { std::exit(code); }

private:
    struct Done final : Pending {
        void wait() override {}
        void poke() override {}
    };
};

SingleProcess g_single;
std::unique_ptr<Communicator> g_mpi;  // set while a DistributedSession with several ranks lives

int env_int(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : 0;
}

}  // namespace

Communicator& world() { return g_mpi ? *g_mpi : single_process(); }
Communicator& single_process() { return g_single; }

int launched_ranks() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
        if (const int n = env_int(name); n > 0) return n;
    if (std::getenv("PMIX_RANK")) return std::max(1, env_int("SLURM_NTASKS"));  // srun --mpi=pmix
    return 1;
}

DistributedSession::DistributedSession() {
    const int ranks = launched_ranks();
    if (ranks <= 1) return;
    g_mpi = start_mpi();
    // Without MPI, processes started by srun may be meant as independent shards (--shard); mpirun's are not.
    if (!g_mpi && env_int("OMPI_COMM_WORLD_SIZE") > 1)
        throw ConfigError(fmt::format(
            "this relpos was built without MPI but mpirun started it as one of {} processes: each would "
            "train the whole run alone; build it with cmake -DRELPOS_MPI=ON (make mpi, docs/distributed.md) or run "
            "it without mpirun",
            ranks));
}

DistributedSession::~DistributedSession() { g_mpi.reset(); }

std::string rank_prefix() {
    const Communicator& c = world();
    return c.size() > 1 && c.rank() != 0 ? fmt::format("rank {} of {}: ", c.rank(), c.size()) : std::string();
}

// ---------------------------------------------------------------- gradients

GradientSum::GradientSum(Communicator& comm, nn::NamedParams<float> params, std::size_t bucket_floats)
    : comm_(comm), params_(std::move(params)), bucket_of_(params_.size()) {
    // Buckets in reverse registration order: the last layers' gradients are the first ones backward
    // completes.
    std::size_t k = params_.size();
    while (k > 0) {
        Bucket b{k, k, {}};
        std::size_t n = 0;
        while (b.first > 0 && (n == 0 || n + params_[b.first - 1].second.numel() <= bucket_floats))
            n += params_[--b.first].second.numel();
        b.buf.resize(n);
        for (std::size_t j = b.first; j < b.last; ++j) bucket_of_[j] = buckets_.size();
        buckets_.push_back(std::move(b));
        k = buckets_.back().first;
    }
    for (std::size_t j = 0; j < params_.size(); ++j) index_[params_[j].second.node().get()] = j;
}

void GradientSum::start() {
    pending_.clear();
    meta_.assign(params_.size(), 0.0f);
    for (auto& b : buckets_) b.missing = b.last - b.first;
    next_ = sent_early_ = 0;
}

void GradientSum::send(Bucket& b) {
    float* out = b.buf.data();
    for (std::size_t k = b.first; k < b.last; ++k) {
        const Var<float>& p = params_[k].second;
        if (p.has_grad()) {
            std::memcpy(out, p.grad().data(), p.numel() * sizeof(float));
            meta_[k] = 1.0f;
        } else {
            std::fill(out, out + p.numel(), 0.0f);
        }
        out += p.numel();
    }
    pending_.push_back(comm_.start_sum(b.buf.data(), b.buf.size()));
}

void GradientSum::leaf_done(const Node<float>& param) {
    const auto it = index_.find(&param);
    if (it == index_.end()) return;  // not one of the parameters (e.g. a test's input)
    --buckets_[bucket_of_[it->second]].missing;
    while (next_ < buckets_.size() && buckets_[next_].missing == 0) {
        send(buckets_[next_++]);
        ++sent_early_;
    }
    for (auto& p : pending_) p->poke();
}

void GradientSum::finish(std::vector<float>& extras) {
    while (next_ < buckets_.size()) send(buckets_[next_++]);
    meta_.resize(params_.size());
    meta_.insert(meta_.end(), extras.begin(), extras.end());
    pending_.push_back(comm_.start_sum(meta_.data(), meta_.size()));
    for (auto& p : pending_) p->wait();
    pending_.clear();
    for (auto& b : buckets_) {
        const float* in = b.buf.data();
        for (std::size_t k = b.first; k < b.last; ++k) {
            Var<float> p = params_[k].second;
            if (meta_[k] > 0.0f) {  // some rank has a gradient here: every rank takes the sum
                Array<float>& g = p.node()->grad_buf();
                std::memcpy(g.data(), in, p.numel() * sizeof(float));
            }
            in += p.numel();
        }
    }
    std::copy(meta_.begin() + static_cast<std::ptrdiff_t>(params_.size()), meta_.end(), extras.begin());
}

void GradientSum::run(std::vector<float>& extras) {
    start();
    finish(extras);
}

// ---------------------------------------------------------------- broadcasts

template <class T>
void broadcast_vector(Communicator& comm, std::vector<T>& v) {
    static_assert(std::is_trivially_copyable<T>::value, "broadcast_vector sends raw bytes");
    std::uint64_t n = v.size();
    comm.broadcast(&n, sizeof n);
    v.resize(n);
    if (n) comm.broadcast(v.data(), n * sizeof(T));
}
template void broadcast_vector(Communicator&, std::vector<std::int32_t>&);
template void broadcast_vector(Communicator&, std::vector<std::uint64_t>&);
template void broadcast_vector(Communicator&, std::vector<double>&);

void broadcast_string(Communicator& comm, std::string& s) {
    std::vector<std::int32_t> chars(s.begin(), s.end());
    broadcast_vector(comm, chars);
    s.assign(chars.begin(), chars.end());
}

std::vector<Example> broadcast_examples(Communicator& comm, const std::vector<Example>& on_root) {
    // Lengths (src, tgt per example), then every token in order.
    std::vector<std::int32_t> lengths, tokens;
    if (comm.is_root())
        for (const auto& e : on_root) {
            lengths.push_back(static_cast<std::int32_t>(e.src.size()));
            lengths.push_back(static_cast<std::int32_t>(e.tgt.size()));
            tokens.insert(tokens.end(), e.src.begin(), e.src.end());
            tokens.insert(tokens.end(), e.tgt.begin(), e.tgt.end());
        }
    broadcast_vector(comm, lengths);
    broadcast_vector(comm, tokens);
    if (comm.is_root()) return {};
    std::vector<Example> examples(lengths.size() / 2);
    auto t = tokens.begin();
    for (std::size_t i = 0; i < examples.size(); ++i) {
        examples[i].src.assign(t, t + lengths[2 * i]);
        t += lengths[2 * i];
        examples[i].tgt.assign(t, t + lengths[2 * i + 1]);
        t += lengths[2 * i + 1];
    }
    return examples;
}

void broadcast_training_state(Communicator& comm, const nn::NamedParams<float>& params, nn::Adam<float>& adam,
                              TrainProgress& pr) {
    for (std::size_t k = 0; k < params.size(); ++k) {
        Var<float> p = params[k].second;
        comm.broadcast(p.value().data(), p.numel() * sizeof(float));
        comm.broadcast(adam.first_moments()[k].data(), p.numel() * sizeof(float));
        comm.broadcast(adam.second_moments()[k].data(), p.numel() * sizeof(float));
    }
    std::vector<std::uint64_t> counts{adam.steps(), pr.step, pr.epoch, pr.batch_in_epoch, pr.tokens, pr.best_step,
                                      pr.bad_validations, pr.target_step};
    counts.insert(counts.end(), pr.dropout_rng.begin(), pr.dropout_rng.end());
    std::vector<double> reals{pr.best_valid_loss, pr.elapsed_seconds, pr.plateau_reference, pr.best_target_metric};
    broadcast_vector(comm, counts);
    broadcast_vector(comm, reals);
    broadcast_string(comm, pr.config_hash);
    adam.set_steps(counts[0]);
    pr.step = counts[1];
    pr.epoch = counts[2];
    pr.batch_in_epoch = counts[3];
    pr.tokens = counts[4];
    pr.best_step = counts[5];
    pr.bad_validations = counts[6];
    pr.target_step = counts[7];
    std::copy(counts.begin() + 8, counts.end(), pr.dropout_rng.begin());
    pr.best_valid_loss = reals[0];
    pr.elapsed_seconds = reals[1];
    pr.plateau_reference = reals[2];
    pr.best_target_metric = reals[3];
}

}  // namespace relpos
