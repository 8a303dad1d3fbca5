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

endgames:
	@echo "endgames: the tablebase builder arrives with issue 3" >&2; exit 1

openings:
	@echo "openings: the opening-book builder arrives with issue 5" >&2; exit 1

clean:
	$(CARGO) clean
