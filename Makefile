# tfdiag: the README's commands. Each target installs what it needs (scripts/bootstrap.sh,
# idempotent), configures with CMake into build/ (Release), builds, then runs.
#
# make image: the node agent's container image IMAGE (default tfdiag:<version>, the image
# deploy/daemonset.yaml runs) from deploy/Containerfile with podman, on a Debian bookworm base
# built from Debian's mirror by mmdebstrap and kept in podman's storage as IMAGE_BASE (the first
# run downloads it, about a minute; `podman rmi $(IMAGE_BASE)` to refresh it). Only the runtime
# libraries and the tfdiag built here (on bookworm) go in; IMAGE_BUILD_FLAGS=--no-cache rebuilds
# every layer. Tested by tests/image_test.cc (run in `make test`).
BUILD ?= build
JOBS ?= $(shell nproc)
TFDIAG = $(BUILD)/tfdiag
DEMO_SAMPLE = samples/hot-ps.tf1.json.gz

MAKEFLAGS += --no-print-directory

.PHONY: all bootstrap configure build demo test image fuzz bench format clean

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

VERSION := $(shell sed -n 's/^project.tfdiag VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
IMAGE ?= tfdiag:$(VERSION)
IMAGE_BASE ?= localhost/tfdiag-base:bookworm
IMAGE_BUILD_FLAGS ?=
IMAGE_DIR = $(BUILD)/image
# The slim base: minbase, merged /usr without the usrmerge package (it pulls in perl), and no
# man pages, locales or docs (the path-excludes stay in the image's dpkg configuration).
MMDEBSTRAP_OPTS = --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  $(foreach p,/usr/share/man/* /usr/share/locale/* /usr/share/info/* /usr/share/doc/*, \
    --dpkgopt='path-exclude=$(p)') --dpkgopt='path-include=/usr/share/doc/*/copyright'
# RUN steps use chroot isolation: crun refuses to create containers on hosts with hybrid cgroups.
image: configure
	@. /etc/os-release && [ "$$VERSION_CODENAME" = bookworm ] || \
	  { echo "make image: the image runs the tfdiag built here, so build it on Debian bookworm" \
	    "(this is $$PRETTY_NAME)" >&2; exit 2; }
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag
	@mkdir -p $(IMAGE_DIR)/context
	@podman image exists $(IMAGE_BASE) || { \
	  echo "== mmdebstrap bookworm -> $(IMAGE_BASE)" && \
	  mmdebstrap --quiet --format=tar $(MMDEBSTRAP_OPTS) bookworm $(IMAGE_DIR)/base.tar.tmp && \
	  podman import --quiet $(IMAGE_DIR)/base.tar.tmp $(IMAGE_BASE) >/dev/null && \
	  rm -f $(IMAGE_DIR)/base.tar.tmp; }
	@install -m 0755 -s $(TFDIAG) $(IMAGE_DIR)/context/tfdiag
	@echo "== podman build $(IMAGE)"
	@podman build --isolation chroot --network host --build-arg BASE=$(IMAGE_BASE) \
	  $(IMAGE_BUILD_FLAGS) -f deploy/Containerfile -t $(IMAGE) $(IMAGE_DIR)/context
	@podman image inspect --format '$(IMAGE): {{.Size}} bytes' $(IMAGE)

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
