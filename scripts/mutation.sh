#!/usr/bin/env bash
# make mutation: mutmut over the pure core (timeline_app/rendering/, compaction/ but the Anthropic
# adapter) and the scoping/auth code (api/auth.py, selectors/conversations.py), with the fast tests
# that cover them ([tool.mutmut] in pyproject.toml), on the throwaway PostgreSQL of scripts/test.sh.
# CPU-heavy: niced, two workers at most (MUTATION_CHILDREN). Prints the score and every survivor.
# MUTANTS="compaction.cutpoint.* timeline_app.api.auth.*" runs only the mutants matching those
# names (mutmut's fnmatch patterns), keeping earlier results in mutants/ (a resumed or partial run).
set -euo pipefail
cd "$(dirname "$0")/.."
CHILDREN=${MUTATION_CHILDREN:-2}
ONLY=${MUTANTS:-}
if [ -z "$ONLY" ]; then rm -rf mutants; fi
ARGS=""
set -f
for pattern in $ONLY; do ARGS+="'$pattern' "; done
set +f
mkdir -p var
start=$(date +%s)
TIMELINE_SKIP_CHECKS=1 TIMELINE_RUN="nice -n 10 .venv/bin/mutmut run --max-children $CHILDREN $ARGS>/dev/null; .venv/bin/mutmut results --all true > var/mutation-results.txt" \
  bash scripts/test.sh
end=$(date +%s)
.venv/bin/python scripts/mutation_score.py var/mutation-results.txt
echo "mutation run took $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"
