# Oware Abapa toolchain. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
RELEASE := $(CARGO) run --release --quiet --bin

.PHONY: build test bench endgames openings perft-check clean

build:
	$(CARGO) build --release --bins

test:
	$(CARGO) test --release

bench:
	$(CARGO) bench

# Checks our rules against the engine's perft file.
perft-check: build
	$(RELEASE) perft -- --check tests/reference/perft.txt

# The shipped endgame tablebase, in stages, each a resumable build in its
# own directory (rerunning `make endgames` reuses what is done):
# 1. every layer up to ENDGAMES_SEEDS, with the threshold search up to layer
#    ENDGAMES_SEARCH at ENDGAMES_NODES nodes per question (layers up to 7
#    close in seconds; layer 8 takes about 20 minutes of one core and leaves
#    3,857 positions open);
# 2. for each layer of ENDGAMES_DEEPER_LAYERS in turn, a build started from
#    the previous stage's table (`--from`) that searches that layer's open
#    positions again with ENDGAMES_DEEPER nodes per question: what
#    `endgames improve` does in place (layer 8: about 45 minutes of one core;
#    layer 9: about a second).
# Then verified (with a second opinion on a sample of search proofs) and
# copied to data/. ENDGAMES_SEEDS=15 builds a bigger one (not shipped).
ENDGAMES_SEEDS ?= 12
ENDGAMES_SEARCH ?= 8
ENDGAMES_NODES ?= 3000000
ENDGAMES_DEEPER ?= 30000000
ENDGAMES_DEEPER_LAYERS ?= 8 9
ENDGAMES_STAGE1 := target/endgames-$(ENDGAMES_SEEDS)-search$(ENDGAMES_SEARCH)-$(ENDGAMES_NODES)
empty :=
space := $(empty) $(empty)
ENDGAMES_DIR := $(ENDGAMES_STAGE1)$(subst $(space),,$(foreach n,$(ENDGAMES_DEEPER_LAYERS),-then-$(n)-$(ENDGAMES_DEEPER)))
endgames: build
	$(RELEASE) endgames -- build --dir $(ENDGAMES_STAGE1) --max-seeds $(ENDGAMES_SEEDS) --search-max-seeds $(ENDGAMES_SEARCH) --search-nodes $(ENDGAMES_NODES)
	from=$(ENDGAMES_STAGE1); for n in $(ENDGAMES_DEEPER_LAYERS); do \
	  dir=$$from-then-$$n-$(ENDGAMES_DEEPER); \
	  $(RELEASE) endgames -- build --dir $$dir --from $$from/tablebase.owtb --max-seeds $(ENDGAMES_SEEDS) \
	    --search-min-seeds $$n --search-max-seeds $$n --search-nodes $(ENDGAMES_DEEPER) || exit 1; \
	  from=$$dir; \
	done
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_DIR) --deep --sample 100
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_DIR) --deep --sample 20 --deep-nodes 2000 --deep-max-seeds 9
	cp $(ENDGAMES_DIR)/tablebase.owtb.zst data/endgames-$(ENDGAMES_SEEDS).owtb.zst
	cp $(ENDGAMES_DIR)/endgames-2.0.bin data/endgames-$(ENDGAMES_SEEDS)-2.0.bin
	cp $(ENDGAMES_DIR)/stats.json data/endgames-$(ENDGAMES_SEEDS)-stats.json

# The shipped opening book: grows data/book-dir (resuming it if it exists)
# to OPENINGS_EXPANSIONS expansions, then exports it in both engine layouts.
# Growing with another evaluator needs another directory (the book records
# its evaluator): e.g. make openings OPENINGS_DIR=... OPENINGS_EVAL=...
OPENINGS_DIR ?= data/book-dir
OPENINGS_EXPANSIONS ?= 12000
OPENINGS_EVAL ?= --search-nodes 100000
OPENINGS_GROW ?= --omega 0.04 --batch 16 --checkpoint-seconds 120
openings:
	$(RELEASE) openings -- grow --book $(OPENINGS_DIR) --expansions $(OPENINGS_EXPANSIONS) $(OPENINGS_GROW) $(OPENINGS_EVAL)
	$(RELEASE) openings -- export --book $(OPENINGS_DIR) --classic data/openings-2014.bin --doe data/openings-doe.bin
	$(RELEASE) openings -- stats --book $(OPENINGS_DIR) > data/openings-stats.txt

clean:
	$(CARGO) clean
