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

# libFuzzer on the timeline, manifest (YAML, with fix) and bundle readers, each for FUZZ_SECONDS
# (default 60) with a limit per input: 1 s (-timeout) and 512 MB RSS (-rss_limit_mb). Seeds:
# fuzz/corpus (timelines), fuzz/corpus_manifest and fuzz/corpus_bundle.
FUZZ_SECONDS ?= 60
FUZZ_LIMITS = -timeout=1 -rss_limit_mb=512 -max_total_time=$(FUZZ_SECONDS)
fuzz: bootstrap
	@cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DTFDIAG_FUZZ=ON -DTFDIAG_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_timeline fuzz_manifest fuzz_bundle fuzz_profile
	@for t in timeline manifest bundle profile; do \
	  src=fuzz/corpus; [ $$t = timeline ] || src=fuzz/corpus_$$t; \
	  rm -rf $(BUILD)-fuzz/corpus_$$t && mkdir -p $(BUILD)-fuzz/corpus_$$t && cp $$src/* $(BUILD)-fuzz/corpus_$$t/ && \
	  echo "== fuzz_$$t ($(FUZZ_SECONDS) s)" && \
	  $(BUILD)-fuzz/fuzz_$$t $(FUZZ_LIMITS) $(BUILD)-fuzz/corpus_$$t || exit 1; \
	done

bench: build
	@bench/run_bench.sh $(BUILD); s=$$?; bench/shapes_bench.sh $(BUILD) && exit $$s

format:
	@clang-format -i --style=file $$(git ls-files '*.cc' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD)-fuzz
