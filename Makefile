# tfdiag: the README's commands. Each target installs what it needs (scripts/bootstrap.sh,
# idempotent), configures with CMake into build/ (Release), builds, then runs.
BUILD ?= build
JOBS ?= $(shell nproc)
TFDIAG = $(BUILD)/tfdiag
DEMO_SAMPLE = samples/hot-ps.tf1.json.gz

MAKEFLAGS += --no-print-directory

.PHONY: all bootstrap configure build demo test fuzz bench format clean

all: build

bootstrap:
	@scripts/bootstrap.sh

configure: bootstrap
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag
	@echo "== tfdiag analyze $(DEMO_SAMPLE)"
	@$(TFDIAG) analyze $(DEMO_SAMPLE)

# Serially: the live tests measure CPU throttling, runnable threads and traffic of real
# processes, which tests running beside them would disturb.
test: build
	@cd $(BUILD) && ctest --output-on-failure

# libFuzzer on the timeline reader, bounded (FUZZ_SECONDS, default 60).
FUZZ_SECONDS ?= 60
fuzz: bootstrap
	@cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DTFDIAG_FUZZ=ON -DTFDIAG_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_timeline
	@rm -rf $(BUILD)-fuzz/corpus && mkdir -p $(BUILD)-fuzz/corpus && cp fuzz/corpus/* $(BUILD)-fuzz/corpus/
	@$(BUILD)-fuzz/fuzz_timeline -max_total_time=$(FUZZ_SECONDS) -timeout=10 $(BUILD)-fuzz/corpus
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_profile
	@rm -rf $(BUILD)-fuzz/corpus_profile && mkdir -p $(BUILD)-fuzz/corpus_profile && cp fuzz/corpus_profile/* $(BUILD)-fuzz/corpus_profile/
	@$(BUILD)-fuzz/fuzz_profile -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 $(BUILD)-fuzz/corpus_profile

bench: build
	@bench/run_bench.sh $(BUILD)

format:
	@clang-format -i --style=file $$(git ls-files '*.cc' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD)-fuzz
