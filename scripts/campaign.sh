#!/usr/bin/env bash
# A study that spans sessions, started and stopped with one command each:
#
#   scripts/campaign.sh start [-j N] CONFIG [CONFIG ...]
#   scripts/campaign.sh start [-j N]
#       (without configs: the project's campaign, the configs listed in configs/campaign.list in order, one
#       per line, '#' starts a comment; the list says what trains next, so a new session resumes with one
#       command)
#       brings back parked checkpoints (scripts/park_checkpoints.sh restore), then starts N trainers (default:
#       one per core), STAGGER seconds apart, each running `relpos run CONFIG --jobs 1 threads=1` for the
#       configs in order (when no point of the first is left to start, a trainer goes on to the next: a study
#       and then its reference experiment keep every core busy), and the loop that every INTERVAL seconds
#       commits each finished run (scripts/commit_finished_runs.sh), writes again the report of each study whose
#       report.json is committed (`relpos report`; a page reads it) and commits it, brings the status counts (count(...)
#       markers) of every page scripts/check_claims.py checks up to date (README.md, results/**/README.md,
#       docs/*.md; --update-counts) and renders the pages whose sources are under docs/pages/
#       (scripts/render_pages.py), and commits them (only after HEAD moved: pages follow committed files),
#       and parks the unfinished runs' checkpoints. All detached from the terminal: the session that started them may end.
#   scripts/campaign.sh status
#       the trainers and the loop, each trainer's latest progress line, and for each config how many of its
#       runs have finished and how many core-hours are left (`relpos run CONFIG --list`), and the figures of
#       the checked pages that no longer match their sources (the loop runs scripts/check_claims.py after each
#       pass that committed something: a finished run can move a figure that sums over a study's runs).
#   scripts/campaign.sh stop
#       SIGTERM to the trainers: each writes a checkpoint of its run at the current update and exits (a run
#       that had finished training is evaluated and written first), then one pass of the loop, so that
#       nothing finished is left uncommitted and every unfinished run is parked, and the figures that no
#       longer match their sources, as status says them. `start` resumes from there.
#
# State lives in .campaign/ (ignored; CAMPAIGN_DIR=<dir> moves it): the copy of the relpos binary the
# trainers run (rebuilding build/ does not change a campaign under way), the configs, the pids and the logs
# (trainer<i>.log, loop.log). One campaign at a time per state directory.
# Environment: RELPOS (the binary to copy; default build/relpos), INTERVAL (default 120), STAGGER (default
# 20), COMMIT=0 (the loop commits nothing: it parks only), STOP_WAIT (seconds `stop` waits for the trainers
# to exit; default 1800, an evaluation in progress included), START_CHECK (seconds `start` watches its
# trainers before returning, to say why one exited at once; default 3), KEEP_CORETYPE=1 (pass the environment's
# OPENBLAS_CORETYPE to the trainers; by default it is dropped, so that every session trains with the kernels
# relpos chooses for the CPU).
# Each config's run store is its `run_store` (or <results_dir>/<name>/runs), its study page
# <results_dir>/<name>/README.md when there is one; read from the config's top-level keys.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
state=${CAMPAIGN_DIR:-.campaign}
interval=${INTERVAL:-120}
stagger=${STAGGER:-20}
commit=${COMMIT:-1}

usage() {
  echo "usage: $0 start [-j N] [CONFIG ...] | status | stop   (the comment at the top of $0 says more)" >&2
  exit 2
}
die() { echo "campaign: $*" >&2; exit 2; }

top_key() {  # a top-level scalar of a config: top_key FILE KEY DEFAULT
  local v
  v=$(sed -n "s/^$2:[[:space:]]*//p" "$1" | head -n1 | sed 's/[[:space:]]*#.*$//; s/^"\(.*\)"$/\1/; s/^'"'"'\(.*\)'"'"'$/\1/')
  echo "${v:-$3}"
}

# the run stores of the configs in $state/configs and where their run links go: "STORE LINKS" per config
targets() {
  local c name rdir store
  while IFS= read -r c; do
    name=$(top_key "$c" name "")
    rdir=$(top_key "$c" results_dir results)
    store=$(top_key "$c" run_store "")
    echo "${store:-$rdir/$name/runs} $rdir/$name/runs"
  done < "$state/configs"
}

# each run store of targets once (configs that share a store, a study and its reference experiment,
# park and restore it once)
stores() { targets | awk '!seen[$1]++ { print $1 }'; }

alive() {  # pids from a file that are still running
  local p
  [ -f "$1" ] || return 0
  while read -r p; do
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null && echo "$p"
  done < "$1"
  return 0
}

# the pages scripts/check_claims.py checks by default (its own list), the tracked ones
checked_pages() {
  local pages
  pages=$(scripts/check_claims.py --list-pages) || return 1
  # shellcheck disable=SC2086  # one page a line, no spaces in the paths
  git ls-files -- $pages
}

update_counts() {  # a tracked page's count(...) numbers brought up to date and committed
  local page=$1 what
  grep -q "count(" "$page" || return 0
  if ! git diff --quiet -- "$page"; then
    # a page with uncommitted edits (someone is writing it) is left alone: its status commit would take their
    # half-written lines with it
    echo "campaign: $page has uncommitted edits; its status counts wait for them to be committed"
    return 0
  fi
  what=$(basename "$(dirname "$page")"); [ "$what" = . ] && what=README
  # the counts are committed even when another figure of the page no longer matches its source (then the
  # check fails and the loop says so; claims_check below keeps the list): a stale count helps nobody, and a
  # page left half-updated would be skipped as "uncommitted edits" by every later pass
  scripts/check_claims.py --update-counts "$page" >/dev/null 2>&1 ||
    echo "campaign: $page: a figure no longer matches its source (scripts/check_claims.py $page says which)"
  git diff --quiet -- "$page" || git commit -qm "$what: status" -- "$page"
}

refresh_reports() {  # each study's committed report (report.json, .md, .csv) brought up to its committed runs, and its
                     # re-score at 41-500 (scripts/ruoss_test500.sh) where one is committed
  local store links dir
  local -a files
  while read -r store links; do
    dir=$(dirname "$links")
    # only a study that publishes its report (a page reads it): report.json committed
    git ls-files --error-unmatch "$dir/report.json" > /dev/null 2>&1 || continue
    if ! "$state/relpos" report "$dir" > "$state/report.out" 2>&1; then
      echo "campaign: relpos report $dir failed: $(tail -n 1 "$state/report.out" | cut -c1-300)"
      continue
    fi
    files=()
    for f in report.json report.md report.csv; do [ -f "$dir/$f" ] && files+=("$dir/$f"); done
    git add -- "${files[@]}"
    git diff --cached --quiet -- "${files[@]}" || git commit -qm "$(basename "$dir"): report after new runs" -- "${files[@]}"
    # a Ruoss-protocol study whose re-score at test lengths 41-500 is committed: its new runs re-scored too
    if git ls-files --error-unmatch "$dir/test_41_500.json" > /dev/null 2>&1; then
      if ! RELPOS="$state/relpos" nice -n 5 scripts/ruoss_test500.sh "$(basename "$dir")" > "$state/report.out" 2>&1; then
        echo "campaign: scripts/ruoss_test500.sh $(basename "$dir") failed: $(tail -n 1 "$state/report.out" | cut -c1-300)"
        continue
      fi
      files=("$dir/test_41_500.json" "$dir/test_41_500.jsonl")
      git add -- "${files[@]}"
      git diff --cached --quiet -- "${files[@]}" || git commit -qm "$(basename "$dir"): new runs re-scored at test lengths 41-500" -- "${files[@]}"
    fi
    # a study whose learning curves are committed (curves.json) and written by scripts/<study>_curves.sh: drawn again
    local curves="scripts/$(basename "$dir")_curves.sh"
    if [ -x "$curves" ] && git ls-files --error-unmatch "$dir/curves.json" > /dev/null 2>&1; then
      if ! nice -n 5 "$curves" > "$state/report.out" 2>&1; then
        echo "campaign: $curves failed: $(tail -n 1 "$state/report.out" | cut -c1-300)"
        continue
      fi
      files=("$dir/curves.json")
      [ -f "$dir/curves.png" ] && files+=("$dir/curves.png")
      git add -- "${files[@]}"
      git diff --cached --quiet -- "${files[@]}" || git commit -qm "$(basename "$dir"): learning curves after new runs" -- "${files[@]}"
    fi
  done < <(targets)
}

render_pages() {  # the pages rendered from docs/pages/ brought up to the committed runs, and committed
  local out page
  local -a changed=()
  [ -d docs/pages ] && [ -f scripts/render_pages.py ] || return 0
  local sources=(docs/pages scripts/render_pages.py)
  if [ -n "$(git status --porcelain -- "${sources[@]}")" ]; then
    # someone is writing a page's source: its rendering would take their half-written lines with it
    echo "campaign: docs/pages or scripts/render_pages.py has uncommitted edits; the rendered pages wait for them to be committed"
    return 0
  fi
  if ! out=$(/usr/bin/python3 scripts/render_pages.py 2>&1); then
    echo "campaign: scripts/render_pages.py failed: $(head -c 300 <<< "$out")"
    return 0
  fi
  if [ -n "$(git status --porcelain -- "${sources[@]}")" ]; then
    # a source was edited while the pages rendered: what was rendered may hold some of it; the next pass renders
    # again once the edit is committed
    echo "campaign: a page's source changed while the pages rendered; they wait for it to be committed"
    return 0
  fi
  while read -r page; do
    [ -n "$page" ] && changed+=("$page")
  done < <(sed -n 's/^render_pages: wrote //p' <<< "$out")
  # and the pages an earlier pass rendered but did not commit (a pass cut short by a stop): every rendered page
  # (docs/pages/X.j2 -> X; the _*.j2 partials render nothing) that differs from HEAD, now equal to its sources
  while read -r src; do
    page=${src#docs/pages/}; page=${page%.j2}
    [ -f "$page" ] && ! git diff --quiet -- "$page" && [[ " ${changed[*]} " != *" $page "* ]] && changed+=("$page")
  done < <(find docs/pages -name '*.j2' ! -name '_*' | sort)
  [ ${#changed[@]} -eq 0 ] || git commit -qm "pages: rendered after new runs (${changed[*]})" -- "${changed[@]}"
}

claims_current() {  # the last claims_check was at this HEAD
  [ -f "$state/claims.txt" ] &&
    [ "$(git rev-parse -q --verify HEAD 2>/dev/null || true)" = "$(cat "$state/claims.head" 2>/dev/null)" ]
}

claims_check() {  # after new commits: every checked page's figures against their sources, kept in claims.txt
  local out
  claims_current && return 0
  # claims.txt: empty when every figure matches; else what the checker says, less its summary line
  if out=$(scripts/check_claims.py 2>&1); then
    : > "$state/claims.tmp"
  else
    grep -v '^check_claims: [0-9]* checked' <<< "$out" > "$state/claims.tmp" || true
    echo "campaign: $(date -u +%FT%TZ): figures that no longer match their sources (scripts/check_claims.py):"
    cut -c1-300 "$state/claims.tmp"
  fi
  mv "$state/claims.tmp" "$state/claims.txt"
  git rev-parse -q --verify HEAD > "$state/claims.head" 2>/dev/null || : > "$state/claims.head"
}

claims_report() {  # what the last claims_check found, for status and stop: the suite fails on it
  local bad
  [ -f "$state/claims.txt" ] || return 0
  bad=$(grep -c . "$state/claims.txt" || true)
  [ "$bad" -gt 0 ] || return 0
  echo "campaign: $bad figure(s) no longer match their sources as of $(date -u -r "$state/claims.txt" +%FT%TZ)" \
       "(a finished run moved them, or a page is being edited; the suite fails until they match:" \
       "scripts/check_claims.py):"
  cut -c1-300 "$state/claims.txt" | head -n 10
}

loop_pass() {
  local store links page
  if [ "$commit" = 1 ]; then
    while read -r store links; do
      [ -d "$store" ] || continue
      if [ "$links" != "$store" ] && [ -d "$links" ]; then
        scripts/commit_finished_runs.sh "$store" "$links" || true
      else
        scripts/commit_finished_runs.sh "$store" || true
      fi
    done < <(targets)
    # every checked page (scripts/check_claims.py's default set), so that no count goes stale in the suite;
    # only after HEAD moved (a finished run or an edit committed): the pages follow committed files, and
    # checking them all every pass cost ~9 CPU-seconds in 120 beside the trainers
    if ! claims_current; then
      refresh_reports
      while read -r page; do
        update_counts "$page"
      done < <(checked_pages)
      render_pages
      claims_check
    fi
  fi
  while read -r store; do
    if [ -d "$store" ]; then scripts/park_checkpoints.sh park "$store" || true; fi
  done < <(stores)
}

start() {
  local jobs
  jobs=$(nproc)
  while getopts "j:" o; do
    case "$o" in j) jobs=$OPTARG ;; *) usage ;; esac
  done
  shift $((OPTIND - 1))
  if [ $# -eq 0 ]; then  # the project's campaign
    local -a listed
    local list=${CAMPAIGN_LIST:-configs/campaign.list}
    [ -f "$list" ] || die "no configs given and no $list (one config per line) to read them from"
    mapfile -t listed < <(sed 's/#.*$//; s/^[[:space:]]*//; s/[[:space:]]*$//' "$list" | grep -v '^$')
    [ "${#listed[@]}" -ge 1 ] || die "$list lists no config"
    set -- "${listed[@]}"
    echo "campaign: the configs of $list: $*"
  fi
  [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "-j must be a positive number of trainers, got '$jobs'"
  [ -z "$(alive "$state/trainers.pid")$(alive "$state/loop.pid")" ] ||
    die "a campaign is running ($state/trainers.pid, $state/loop.pid): scripts/campaign.sh stop first"
  local bin=${RELPOS:-build/relpos} c
  [ -x "$bin" ] || die "$bin is not an executable relpos (make build, or RELPOS=<binary>)"
  for c in "$@"; do
    [ -f "$c" ] || die "$c: no such config"
    [ -n "$(top_key "$c" name "")" ] || die "$c: no top-level name: key"
  done
  mkdir -p "$state"
  printf '%s\n' "$@" > "$state/configs"
  cp "$bin" "$state/relpos.new" && mv "$state/relpos.new" "$state/relpos"
  for c in "$@"; do  # every config must load before anything starts
    "$state/relpos" run "$c" --list > "$state/list.out" 2>&1 || { cat "$state/list.out" >&2; die "$c does not load (above)"; }
  done
  local store
  while read -r store; do
    if [ -d "$store" ]; then scripts/park_checkpoints.sh restore "$store"; fi
  done < <(stores)
  # A run spans sessions, and each session's environment may differ: some set OPENBLAS_CORETYPE=Haswell. The
  # trainers run with the kernels relpos chooses for the CPU (blas::tune_process), the same every session on
  # the same machine, unless KEEP_CORETYPE=1: a run trained on two kernel families rounds differently in
  # each part, and no rerun of its config reproduces it (results.json's trained_on lists them).
  if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "${KEEP_CORETYPE:-0}" != 1 ]; then
    echo "campaign: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE is not passed to the trainers (their runs span sessions;" \
         "KEEP_CORETYPE=1 keeps it)"
    unset OPENBLAS_CORETYPE
  fi
  : > "$state/trainers.pid"
  local i
  for ((i = 1; i <= jobs; i++)); do
    [ "$i" -gt 1 ] && sleep "$stagger"  # two starts at once would both take the first free point's lock race
    # On SIGTERM the trainer's shell waits for its relpos (bash acts on a signal only when the command it
    # waits for has exited), so `stop` sees it exit only after the run's checkpoint is written; the trap
    # makes it start no other config then.
    setsid nohup bash -c 'trap "stopped=1" TERM; bin=$1; shift
      for c in "$@"; do
        "$bin" run "$c" --jobs 1 threads=1; rc=$?
        if [ -n "${stopped:-}" ] || [ "$rc" -ne 0 ]; then exit "$rc"; fi
      done' trainer "$state/relpos" "$@" >> "$state/trainer$i.log" 2>&1 < /dev/null &
    echo $! >> "$state/trainers.pid"
  done
  setsid nohup "$self" _loop >> "$state/loop.log" 2>&1 < /dev/null &
  echo $! > "$state/loop.pid"
  echo "campaign: $jobs trainer(s) on $(wc -l < "$state/configs") config(s), logs in $state/ (scripts/campaign.sh status)"
  # a trainer that exits at once (data not installed, a config that loads but cannot train) says why here
  sleep "${START_CHECK:-3}"
  i=0
  while read -r p; do
    i=$((i + 1))
    kill -0 "$p" 2>/dev/null && continue
    echo "campaign: trainer $i has already exited; the end of $state/trainer$i.log:" >&2
    tr '\r' '\n' < "$state/trainer$i.log" | grep -v '^$' | tail -n 5 >&2
  done < "$state/trainers.pid"
}

loop() {
  # SIGTERM (from `stop`) ends the loop while it sleeps, or right after the step it is in (a commit is never
  # cut in half: a trapped signal waits for the command running)
  trap 'kill "${nap:-}" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "$interval" &
    nap=$!
    wait "$nap" || true
    if [ -z "$(alive "$state/trainers.pid")" ]; then
      loop_pass
      echo "campaign: every trainer has exited; last pass done at $(date -u +%FT%TZ)"
      return 0
    fi
    loop_pass
  done
}

status() {
  [ -f "$state/configs" ] || { echo "campaign: none started in $state/"; return 0; }
  local t l i=0 c v last
  t=$(alive "$state/trainers.pid" | wc -l)
  l=$(alive "$state/loop.pid" | wc -l)
  echo "trainers running: $t of $(cat "$state/trainers.pid" 2>/dev/null | grep -c . || true); commit loop: $([ "$l" -gt 0 ] && echo running || echo stopped)"
  for f in "$state"/trainer*.log; do
    [ -f "$f" ] || continue
    last=$(tr '\r' '\n' < "$f" | grep -v '^$' | tail -n 1 || true)  # (set -e: an empty log is no error)
    echo "$(basename "$f"): $last"
    # its latest validation: how near the plateau rule is to stopping the run (the plateau counter)
    v=$(tr '\r' '\n' < "$f" | grep -a 'validation loss' | tail -n 1 || true)  # none yet: no line
    if [ -n "$v" ] && [ "$v" != "$last" ]; then echo "  last validation: $v"; fi
  done
  while IFS= read -r c; do
    echo "$c: $("$state/relpos" run "$c" --list 2>&1 | tail -n 1)"
  done < "$state/configs"
  claims_report
}

stop() {
  [ -f "$state/configs" ] || die "no campaign started in $state/"
  local p waited=0
  for p in $(alive "$state/trainers.pid"); do
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true  # its process group: the relpos under it
  done
  while [ -n "$(alive "$state/trainers.pid")" ]; do
    if [ "$waited" -ge "${STOP_WAIT:-1800}" ]; then
      die "trainers still running after ${STOP_WAIT:-1800} s: $(alive "$state/trainers.pid" | tr '\n' ' ')(see $state/trainer*.log)"
    fi
    [ $((waited % 30)) -eq 0 ] && echo "campaign: waiting for the trainers to checkpoint and exit (${waited} s)"
    sleep 2
    waited=$((waited + 2))
  done
  for p in $(alive "$state/loop.pid"); do kill -TERM "$p" 2>/dev/null || true; done
  while [ -n "$(alive "$state/loop.pid")" ]; do sleep 1; done
  loop_pass
  echo "campaign: stopped; every finished run committed, the others parked (scripts/campaign.sh start resumes)"
  claims_report
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case "$cmd" in
  start) start "$@" ;;
  status) status ;;
  stop) stop ;;
  _loop) loop ;;
  _pages) checked_pages ;;  # the pages whose counts the loop updates (tests/campaign_start_stop.sh)
  *) usage ;;
esac
