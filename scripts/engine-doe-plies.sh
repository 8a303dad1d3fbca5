#!/bin/sh
# How many plies the engine's 2022 code stays in a DOE book when both sides
# play from it (scripts/engine/BookPlies.java: the engine's own pick rule,
# no search).
#
#   scripts/engine-doe-plies.sh SAMURAI_SRC OWARE_SRC BOOK [GAMES]
#
# SAMURAI_SRC: joansalasoler/samurai at 6634d72; OWARE_SRC:
# joansalasoler/oware at 220d9fc (their sources need only the JDK here).
# BOOK: a DOE file, e.g. data/openings-doe.bin. GAMES: 1000 by default.
set -eu
SAMURAI=${1:?usage: engine-doe-plies.sh SAMURAI_SRC OWARE_SRC BOOK [GAMES]}
OWARE=${2:?usage: engine-doe-plies.sh SAMURAI_SRC OWARE_SRC BOOK [GAMES]}
BOOK=${3:?usage: engine-doe-plies.sh SAMURAI_SRC OWARE_SRC BOOK [GAMES]}
BOOK=$(cd "$(dirname "$BOOK")" && pwd)/$(basename "$BOOK")
GAMES=${4:-1000}
WORK=${WORK:-target/engine-2022}
mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -sourcepath "$SAMURAI/src/main/java:$OWARE/src/main/java" \
  "$(dirname "$0")/engine/BookPlies.java"
java -cp "$WORK/classes:/" BookPlies "$BOOK" "$GAMES"
