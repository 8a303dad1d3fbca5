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

# The shipped endgame tablebase: built (or resumed) in target/, verified,
# then copied to data/. ENDGAMES_SEEDS=15 builds a bigger one (not shipped).
ENDGAMES_SEEDS ?= 12
ENDGAMES_DIR := target/endgames-$(ENDGAMES_SEEDS)
endgames: build
	$(RELEASE) endgames -- build --dir $(ENDGAMES_DIR) --max-seeds $(ENDGAMES_SEEDS)
	$(RELEASE) endgames -- verify --tablebase $(ENDGAMES_DIR)
	cp $(ENDGAMES_DIR)/tablebase.owtb.zst data/endgames-$(ENDGAMES_SEEDS).owtb.zst
	cp $(ENDGAMES_DIR)/endgames-2.0.bin data/endgames-$(ENDGAMES_SEEDS)-2.0.bin
	cp $(ENDGAMES_DIR)/stats.json data/endgames-$(ENDGAMES_SEEDS)-stats.json

openings:
	@echo "openings: the opening-book builder arrives with issue 5" >&2; exit 1

clean:
	$(CARGO) clean
