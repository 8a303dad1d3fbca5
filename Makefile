# Oware Abapa toolchain. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
RELEASE := $(CARGO) run --release --quiet --bin

.PHONY: build test lint bench endgames endgames-more openings perft-check clean

build:
	$(CARGO) build --release --bins

# Formatting first (a second), then the tests, compiled by clippy's
# driver: every target the tests build (the library, its unit tests, the
# binaries, the integration tests, the examples) is linted as it is
# compiled, with every warning an error. One compilation instead of a
# `cargo clippy` pass and a build: a fresh clone's `make test` saves about
# a minute. Then the documentation (broken links and missing docs fail
# it; after the build, whose build scripts it reuses: 14 s instead of 50),
# and the distributed build over MPI against the one-process build
# (scripts/mpi-check.sh, also linted as it compiles).
test:
	$(CARGO) fmt --check
	$(LINTED) $(CARGO) test --profile ci
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --profile ci
	$(LINTED) CARGO=$(CARGO) scripts/mpi-check.sh

# Clippy's driver, for `make test`. It reads its arguments from CLIPPY_ARGS,
# separated by __CLIPPY_HACKERY__ (as `cargo clippy` passes them).
CLIPPY_DRIVER := $(shell rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
LINTED = RUSTC_WORKSPACE_WRAPPER=$(or $(CLIPPY_DRIVER),$(error clippy-driver not found: install clippy (rustup component add clippy))) \
	CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__

# Every lint on every target, the benchmarks and the MPI build included
# (needs Open MPI): what a change should pass before it is proposed.
lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --profile ci --all-targets --features bench -- -D warnings
	$(CARGO) clippy --profile ci -p oware-mpi --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --profile ci

bench:
	$(CARGO) bench --features bench

# Checks our rules against the engine's perft file.
perft-check: build
	$(RELEASE) perft -- --check tests/reference/perft.txt

# The shipped endgame tablebase: one resumable build of every layer up to
# ENDGAMES_SEEDS, with the threshold search on the layers up to
# ENDGAMES_SEARCH at up to ENDGAMES_NODES nodes per question (each question
# starts at 4,096 nodes and gets 8 times more per round). Layer 8 is the
# long one (about 54 CPU minutes, 31 on 2 cores); once it is exact the bounds and a
# second of search close every layer above. Then verified (with a second
# opinion on a sample of search proofs) and copied to data/. Rerunning it
# resumes the build where it stopped.
ENDGAMES_SEEDS ?= 12
ENDGAMES_SEARCH ?= 11
ENDGAMES_NODES ?= 300000000
ENDGAMES_DIR := target/endgames-$(ENDGAMES_SEEDS)-search$(ENDGAMES_SEARCH)-$(ENDGAMES_NODES)
endgames: build
	$(RELEASE) endgames -- build --dir $(ENDGAMES_DIR) --max-seeds $(ENDGAMES_SEEDS) --search-max-seeds $(ENDGAMES_SEARCH) --search-nodes $(ENDGAMES_NODES)
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_DIR) --deep --sample 100
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_DIR) --deep --sample 20 --deep-nodes 2000 --deep-max-seeds 9
	cp $(ENDGAMES_DIR)/tablebase.owtb.zst data/endgames-$(ENDGAMES_SEEDS).owtb.zst
	cp $(ENDGAMES_DIR)/endgames-2.0.bin data/endgames-$(ENDGAMES_SEEDS)-2.0.bin
	cp $(ENDGAMES_DIR)/stats.json data/endgames-$(ENDGAMES_SEEDS)-stats.json

# Every position up to ENDGAMES_MORE seeds, built from the shipped table
# (`--from`: its proven layers need no search) with the threshold search on
# the layers above 12: about a minute for 15 seeds, all exact. The table
# stays in target/ (52 MB; 6 MB compressed); its figures go to data/.
ENDGAMES_MORE ?= 15
ENDGAMES_MORE_DIR := target/endgames-$(ENDGAMES_MORE)-from-shipped
endgames-more: build
	$(RELEASE) endgames -- build --dir $(ENDGAMES_MORE_DIR) --from data/endgames-12.owtb.zst --max-seeds $(ENDGAMES_MORE) \
	  --search-min-seeds 13 --search-max-seeds $(ENDGAMES_MORE) --search-nodes 30000000
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_MORE_DIR)
	cp $(ENDGAMES_MORE_DIR)/stats.json data/endgames-$(ENDGAMES_MORE)-stats.json

# The shipped opening book: grows OPENINGS_DIR (resuming it if it exists)
# to OPENINGS_EXPANSIONS expansions, every leaf valued by our search with
# 1,000,000 nodes and the shipped ≤ 12 endgame table (about 21,000
# expansions per hour on 2 cores: 50,000 take about 2.5 hours; stop it
# any time, rerunning resumes, and any target gives the same book as one
# run), then exports it in both engine layouts. Growing with another
# evaluator needs another directory (the book records its evaluator).
OPENINGS_DIR ?= data/book
OPENINGS_EXPANSIONS ?= 50000
OPENINGS_EVAL ?= --leaf-nodes 1000000 --tablebase data/endgames-12.owtb.zst
OPENINGS_GROW ?= --omega 0.04 --batch 16 --checkpoint-seconds 300
openings:
	$(RELEASE) openings -- grow --book $(OPENINGS_DIR) --expansions $(OPENINGS_EXPANSIONS) $(OPENINGS_GROW) $(OPENINGS_EVAL)
	$(RELEASE) openings -- export --book $(OPENINGS_DIR) --classic data/openings-2014.bin --doe data/openings-doe.bin
	$(RELEASE) openings -- stats --book $(OPENINGS_DIR) > data/openings-stats.txt.tmp
	mv data/openings-stats.txt.tmp data/openings-stats.txt

clean:
	$(CARGO) clean
