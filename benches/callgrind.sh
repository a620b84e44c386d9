#!/usr/bin/env bash
# Instruction counts (valgrind callgrind, deterministic on a busy machine) of a lowered run's phases, for
# benches/results/overhead.md. Builds the `phases` bench (bench profile) unless BIN names its binary.
#
#   benches/callgrind.sh [agent|words|loop|calls ...]
#
# Prints one markdown row per workload, in millions of instructions: Zamburak's lowering, loading the
# prelude session, Monty compiling the snippet, the VM running it, the conversions at the boundary (Monty
# converting call arguments out and results in, the host unboxing and reboxing), dropping the finished
# session; then the lowered total, plain Monty's whole run and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${BIN:-}" ]]; then
    BIN=$(cargo bench --bench phases --no-run --message-format=json 2>/dev/null |
        sed -n 's/.*"executable":"\([^"]*phases[^"]*\)".*/\1/p' | tail -1)
fi
[[ -x "$BIN" ]] || { echo "no phases binary (BIN=$BIN)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Inclusive count of the first function whose name matches exactly (0 if it never ran).
incl() {
    awk -v f="$2" '$0 ~ "\\?\\?\\?:" f " \\[" { gsub(",", "", $1); print $1; found=1; exit } END { if (!found) print 0 }' "$1"
}
m() { awk -v x="$1" 'BEGIN { printf "%.2f", x / 1e6 }'; }

echo "| workload | lowering | load | compile | run (VM) | conversion | drop | lowered | plain | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for w in "${@:-agent}"; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$w.cg" "$BIN" --once "$w" >/dev/null 2>&1
    valgrind --tool=callgrind --callgrind-out-file="$out/$w.plain.cg" "$BIN" --once "$w" --plain >/dev/null 2>&1
    callgrind_annotate --inclusive=yes --threshold=100 "$out/$w.cg" >"$out/$w.txt" 2>/dev/null
    callgrind_annotate --inclusive=yes --threshold=100 "$out/$w.plain.cg" >"$out/$w.plain.txt" 2>/dev/null
    lower=$(incl "$out/$w.txt" 'phases::phase_lower')
    load=$(incl "$out/$w.txt" 'phases::phase_load')
    run=$(incl "$out/$w.txt" 'phases::phase_run')
    drop=$(incl "$out/$w.txt" 'phases::phase_drop')
    compile=$(incl "$out/$w.txt" 'monty::run::Executor::new_repl_snippet')
    vm=$(incl "$out/$w.txt" 'monty::bytecode::vm::VM::run')
    conv=$((
        $(incl "$out/$w.txt" '<monty_types::object::MontyObject as monty::object_bridge::MontyObjectExt>::to_value') +
        $(incl "$out/$w.txt" 'monty::run_progress::convert_frame_exit') +
        $(incl "$out/$w.txt" 'phases::phase_convert')))
    plain=$(incl "$out/$w.plain.txt" 'phases::plain_once')
    total=$((lower + load + run + drop))
    echo "| $w | $(m $lower) | $(m $load) | $(m $compile) | $(m $vm) | $(m $conv) | $(m $drop) | $(m $total) | $(m $plain) | $(awk -v a=$total -v b=$plain 'BEGIN { printf "%.2f×", a / b }') |"
done
