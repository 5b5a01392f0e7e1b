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

.PHONY: all bootstrap configure build demo psload test soak image fuzz bench twins-live twins-gen2 twins-gen3 format clean

all: build

bootstrap:
	@scripts/bootstrap.sh

configure: bootstrap
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# make demo: what the README's first screen uses, the CLI, the viewer tfdiag-view (when CMake
# found GLFW, OpenGL and Dear ImGui, which bootstrap installs) and psload (the miniature PS/worker
# job samples/psload/run_job.sh starts), then the sample analyzed.
demo: configure
	@if cmake --build $(BUILD) --target help | grep '^\.\.\. tfdiag_view$$' >/dev/null; then \
	  cmake --build $(BUILD) -j $(JOBS) --target tfdiag tfdiag_view psload; else \
	  echo "make demo: the viewer is not configured (needs libglfw3-dev, libgl-dev, libimgui-dev);" \
	    "building the CLI and psload only" >&2; \
	  cmake --build $(BUILD) -j $(JOBS) --target tfdiag psload; fi
	@echo "== tfdiag analyze $(DEMO_SAMPLE)"
	@$(TFDIAG) analyze $(DEMO_SAMPLE)
	@echo "== next: $(TFDIAG) view $(DEMO_SAMPLE)   (the same findings in a window)"

# make psload: build/psload, the miniature PS/worker job of samples/psload (run_job.sh starts one).
psload: configure
	@cmake --build $(BUILD) -j $(JOBS) --target psload

# make test (tests/run_tests.sh): the suite TEST_JOBS at a time (default 2), then the load-gated
# live tests (ctest label `live`) one at a time with nothing beside them: one that finds the
# machine too loaded to judge is run again after a wait for a quiet machine (LIVE_TRIES tries,
# default 3; LIVE_WAIT_S s of waiting at most before each, default 240). Ends with a ledger of
# every test skipped and every part of a test not run, and why. With CI=true a live test that
# could not be judged fails the run, with its reason.
TEST_JOBS ?= 2
test: build
	@TEST_JOBS=$(TEST_JOBS) tests/run_tests.sh $(BUILD)

# make soak: the node agent for 10 minutes beside 1,000 churning TF tasks with hostile
# environments and hostile HTTP clients; every scrape checked by promtool, RSS and series against
# the budgets of docs/security.md (tests/agent_soak_test.cc; `make test` runs a 40 s version).
SOAK_SECONDS ?= 600
SOAK_TASKS ?= 1000
soak: build
	@TFDIAG_SOAK_SECONDS=$(SOAK_SECONDS) TFDIAG_SOAK_TASKS=$(SOAK_TASKS) \
	  $(BUILD)/tfdiag_tests --gtest_filter='AgentSoak.*'

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
# Two `make image` at once take turns on $(IMAGE_DIR)/lock: side by side (tests/image_test.cc's two
# tests under ctest -j) both wrote base.tar.tmp while podman imported it, and the import read a
# half-written tar ("Digest did not match", the CI run after session 33).
image: configure
	@. /etc/os-release && [ "$$VERSION_CODENAME" = bookworm ] || \
	  { echo "make image: the image runs the tfdiag built here, so build it on Debian bookworm" \
	    "(this is $$PRETTY_NAME)" >&2; exit 2; }
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag
	@mkdir -p $(IMAGE_DIR)/context
	@exec 9>$(IMAGE_DIR)/lock && flock 9 && \
	{ podman image exists $(IMAGE_BASE) || { \
	  echo "== mmdebstrap bookworm -> $(IMAGE_BASE)" && \
	  mmdebstrap --quiet --format=tar $(MMDEBSTRAP_OPTS) bookworm $(IMAGE_DIR)/base.tar.tmp && \
	  podman import --quiet $(IMAGE_DIR)/base.tar.tmp $(IMAGE_BASE) >/dev/null && \
	  rm -f $(IMAGE_DIR)/base.tar.tmp; }; } && \
	install -m 0755 -s $(TFDIAG) $(IMAGE_DIR)/context/tfdiag && \
	echo "== podman build $(IMAGE)" && \
	podman build --isolation chroot --network host --build-arg BASE=$(IMAGE_BASE) \
	  $(IMAGE_BUILD_FLAGS) -f deploy/Containerfile -t $(IMAGE) $(IMAGE_DIR)/context && \
	podman image inspect --format '$(IMAGE): {{.Size}} bytes' $(IMAGE)

# make fuzz: the CLI and the libFuzzer targets under ASan/UBSan in $(BUILD)-fuzz (clang), then
#  1. seeds: fuzz/corpus (timelines), fuzz/corpus_manifest, corpus_bundle and corpus_profile, plus
#     larger ones (0.06-0.96 MB) written by the sanitizer build's own `tfdiag simulate` (timelines,
#     XSpace, RunMetadata) and a 40-document manifest made of the manifest seeds (10 times each);
#  2. smoke: $(BUILD)-fuzz/tfdiag analyze (text and JSON) / fix over every seed (fuzz/smoke.sh);
#  3. each target for FUZZ_SECONDS (default 60) with inputs up to FUZZ_MAX_LEN (1 MiB) and a limit
#     per input: FUZZ_TIMEOUT s (-timeout; 1 MiB inputs go through every rule and both reports
#     under ASan) and 2 GB RSS (-rss_limit_mb). Each target reads the file, finishes the Capture,
#     runs every rule and renders both reports (fuzz/analyze_report.h).
# New crashes are written to $(BUILD)-fuzz/crash-*; keep the ones worth keeping in
# fuzz/crashes_found/ (see its README).
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 1048576
FUZZ_TIMEOUT ?= 10
FUZZ_TARGETS ?= timeline manifest bundle profile json_inputs
FUZZ_LIMITS = -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=2048 -max_len=$(FUZZ_MAX_LEN) \
  -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)-fuzz/
FUZZ_SIM = $(BUILD)-fuzz/tfdiag simulate
fuzz: bootstrap
	@cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DTFDIAG_FUZZ=ON -DTFDIAG_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target tfdiag fuzz_timeline fuzz_manifest fuzz_bundle \
	  fuzz_profile fuzz_json_inputs
	@for t in timeline manifest bundle profile json_inputs; do \
	  src=fuzz/corpus; [ $$t = timeline ] || src=fuzz/corpus_$$t; \
	  rm -rf $(BUILD)-fuzz/corpus_$$t && mkdir -p $(BUILD)-fuzz/corpus_$$t && \
	  cp $$src/* $(BUILD)-fuzz/corpus_$$t/ || exit 1; \
	done
	@echo "== seeds from $(FUZZ_SIM)"
	@c=$(BUILD)-fuzz/corpus_timeline && $(FUZZ_SIM) hot-ps --steps 3 -o $$c/sim-hot-ps.tf1.json && \
	  $(FUZZ_SIM) straggler-worker --format tf2 --steps 2 -o $$c/sim-straggler.tf2.json && \
	  $(FUZZ_SIM) sync-replicas --steps 2 -o $$c/sim-sync-replicas.tf1.json
	@c=$(BUILD)-fuzz/corpus_profile && \
	  $(FUZZ_SIM) hot-ps --format xplane --steps 3 -o $$c/sim-hot-ps.xplane.pb && \
	  $(FUZZ_SIM) input-bound --format xplane --steps 3 -o $$c/sim-input-bound.xplane.pb && \
	  $(FUZZ_SIM) hot-ps --format runmetadata --steps 3 -o $$c/sim-hot-ps.runmetadata.pb && \
	  $(FUZZ_SIM) ps-on-gpu --format runmetadata --steps 2 -o $$c/sim-ps-on-gpu.runmetadata.pb
	@for i in $$(seq 10); do for f in fuzz/corpus_manifest/*.yaml; do echo ---; cat $$f; done; \
	  done > $(BUILD)-fuzz/corpus_manifest/many-documents.yaml
	@c=$(BUILD)-fuzz/corpus_json_inputs && for k in 0 1 2 3; do \
	  python3 -c "import sys; sys.stdout.buffer.write(bytes([$$k]) + b'[' * 100000)" > $$c/deep-brackets-$$k; \
	  python3 -c "import sys; sys.stdout.buffer.write(bytes([$$k]) + b'{\"a\":' * 50000)" > $$c/deep-objects-$$k; done
	@echo "== smoke: $(BUILD)-fuzz/tfdiag over the seeds"
	@fuzz/smoke.sh $(BUILD)-fuzz/tfdiag $(foreach t,timeline manifest bundle profile,$(BUILD)-fuzz/corpus_$(t))
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz_$$t ($(FUZZ_SECONDS) s, log $(BUILD)-fuzz/fuzz_$$t.log)" && \
	  UBSAN_OPTIONS=print_stacktrace=1:suppressions=fuzz/ubsan.supp \
	  $(BUILD)-fuzz/fuzz_$$t $(FUZZ_LIMITS) $(BUILD)-fuzz/corpus_$$t \
	    2>$(BUILD)-fuzz/fuzz_$$t.log; rc=$$?; grep -E "^#[0-9]+[[:space:]]+DONE|runtime error" \
	    $(BUILD)-fuzz/fuzz_$$t.log | sort | uniq -c | sed 's/^/  /'; tail -n 3 $(BUILD)-fuzz/fuzz_$$t.log; \
	  [ $$rc -eq 0 ] || exit 1; \
	done

bench: build
	@bench/run_bench.sh $(BUILD); s=$$?; bench/shapes_bench.sh $(BUILD) && exit $$s

# make twins-live (bench/twins_live/run_twins_live.py): each shape of a real psload job (hot and
# balanced placement, PS threads 1/2/4, a CPU quota on a PS, a slow link between network
# namespaces, a slow worker, slow input) run as it is with timelines, analyzed, and its real
# fixed twin run: the table of predicted against measured steps. Needs root (cgroup, ip netns,
# tc) and a quiet machine: a run during which other work used CPU is not judged (tried again).
# Exit 1 when a prediction is over 20% off its twin, 2 when a shape cannot run here, 3 when a
# prediction was not made, 4 when too loaded to judge.
# TWINS_LIVE_FLAGS passes options (--shapes hot,slow-input, --duration 3; --help lists them).
TWINS_LIVE_FLAGS ?=
twins-live: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag psload
	@bench/twins_live/run_twins_live.py --build $(BUILD) $(TWINS_LIVE_FLAGS)

# make twins-gen2 (bench/twins/gen2/run_gen2.py): tfdiag's predictions and scaling outlook on jobs
# of a second independent generator, each against its simulated fixed twin and sweep (issue 44).
# GEN2_FLAGS passes options: the default runs the dev seeds; `--set report` (the held-out seeds)
# is the lead's, once, after the merges. One core, several minutes.
GEN2_FLAGS ?=
twins-gen2: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag
	@bench/twins/gen2/run_gen2.py $(TFDIAG) $(GEN2_FLAGS)

# make twins-gen3 (bench/twins/gen3/run_gen3.py): the same on jobs of a third generator, written
# apart from tfdiag, indepsim and gen2 (issue 44). GEN3_FLAGS passes options: the default runs the
# dev seeds (200-219); `--set report` (700-731, held out) is the lead's, once, after the merges.
# One core, about 5-10 minutes.
GEN3_FLAGS ?=
twins-gen3: configure
	@cmake --build $(BUILD) -j $(JOBS) --target tfdiag
	@bench/twins/gen3/run_gen3.py $(TFDIAG) $(GEN3_FLAGS)

format:
	@clang-format -i --style=file $$(git ls-files '*.cc' '*.h')

clean:
	@rm -rf $(BUILD) $(BUILD)-fuzz
