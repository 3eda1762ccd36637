# Thin wrapper around CMake. `make run` and `make test` do all the set-up on a fresh Debian machine.
BUILD ?= build
JOBS  ?= $(shell nproc)
CONFIG ?= configs/quickstart.yaml

.PHONY: all deps build run test bench test-asan clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@if [ -x $(BUILD)/relpos ] && [ -f $(CONFIG) ]; then \
	  $(BUILD)/relpos run $(CONFIG); \
	else \
	  $(BUILD)/relpos_demo; \
	fi

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: build
	$(BUILD)/relpos_bench

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRELPOS_SANITIZE=ON -DRELPOS_NATIVE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) --timeout 1800

clean:
	rm -rf $(BUILD) build-asan
