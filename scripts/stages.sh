# Sourced by scripts/test.sh: names its stages, times each, and on exit says which passed,
# which failed and which never ran. One red test early must not hide that the sanitizer and
# fuzz stages did not run.
#   stages_begin NAME... ; stage NAME TITLE ; ... (the EXIT trap prints the summary)
# shellcheck shell=bash
stages_all=() stages_done=() stage_now="" stage_times="" stages_t0=$SECONDS stage_t0=$SECONDS

stages_begin() {
  stages_all=("$@")
  trap stages_summary EXIT
}

stage_end() {
  [ -n "$stage_now" ] || return 0
  stage_times+="  $stage_now: $((SECONDS - stage_t0)) s"$'\n'
  stages_done+=("$stage_now")
  stage_now=""
}

stage() {
  stage_end
  stage_now=$1
  stage_t0=$SECONDS
  printf '\n== %s\n' "$2"
}

stages_summary() {
  local rc=$? failed="" not_run=() s
  if [ "$rc" = 0 ]; then stage_end; else failed=$stage_now; fi
  for s in "${stages_all[@]}"; do
    [[ " ${stages_done[*]} " == *" $s "* || "$s" == "$failed" ]] || not_run+=("$s")
  done
  printf '\n== %s: %s after %d s\n%s' "$(basename "$0")" \
    "$([ "$rc" = 0 ] && echo passed || echo "FAILED (exit $rc)")" "$((SECONDS - stages_t0))" \
    "$stage_times"
  [ -z "$failed" ] || echo "  $failed: FAILED after $((SECONDS - stage_t0)) s"
  [ ${#not_run[@]} -eq 0 ] || echo "  not run, because an earlier stage failed: ${not_run[*]}"
  return "$rc"
}
