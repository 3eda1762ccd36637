// libFuzzer target for the checkpoint reader (`make fuzz FUZZ_TARGET=checkpoint`; docs/reliability.md).
//
// Input: the files of a checkpoint directory, separated by the marker "@RELPOS@", in this order:
// state.json, params/w.npy, params/b.npy, optim/w.m.npy, optim/w.v.npy, optim/b.m.npy, optim/b.v.npy,
// rng.npy (a missing part is a missing file). They are written to a fresh directory and read by
// verify_checkpoint and load_checkpoint into a two-parameter model (w: 2 x 3, b: 3) with an Adam
// optimiser. CheckpointError is the expected outcome for damaged files; anything else -- another
// exception, a crash, a sanitizer report, a hang, a huge allocation -- is a bug. A load that throws must
// leave the parameters untouched (docs/reliability.md: nothing is loaded unless everything fits).
// fuzz/make_seeds.py writes the seed (a valid checkpoint).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/common.hpp"
#include "experiments/train/checkpoint.hpp"
#include "nn/optim.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const char* const kFiles[] = {"state.json",    "params/w.npy",  "params/b.npy",  "optim/w.m.npy",
                                         "optim/w.v.npy", "optim/b.m.npy", "optim/b.v.npy", "rng.npy"};
    const std::string input(reinterpret_cast<const char*>(data), size);
    const fs::path dir = fs::path(relpos::fuzz::work_dir()) / "ck";
    fs::remove_all(dir);
    fs::create_directories(dir / "params");
    fs::create_directories(dir / "optim");
    const std::string marker = "@RELPOS@";
    std::size_t start = 0;
    for (const char* name : kFiles) {
        if (start > input.size()) break;
        auto end = input.find(marker, start);
        if (end == std::string::npos) end = input.size();
        std::ofstream(dir / name, std::ios::binary) << input.substr(start, end - start);
        start = end + marker.size();
    }

    using relpos::Array;
    using relpos::Var;
    Array<float> w = xt::zeros<float>({2, 3}), b = xt::zeros<float>({3});
    w(1, 2) = 7.f;
    b(0) = -1.f;
    relpos::nn::NamedParams<float> params = {{"w", Var<float>(w, true)}, {"b", Var<float>(b, true)}};
    relpos::nn::Adam<float> adam(params);
    try {
        (void)relpos::verify_checkpoint(dir.string(), params, true);
    } catch (const relpos::CheckpointError&) {
    }
    try {
        (void)relpos::load_checkpoint(dir.string(), params, &adam);
    } catch (const relpos::CheckpointError&) {
        if (params[0].second.value() != w || params[1].second.value() != b)
            relpos::fuzz::bug("fuzz_checkpoint", "load_checkpoint threw but changed the parameters");
    }
    return 0;
}
