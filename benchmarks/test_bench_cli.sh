#!/bin/sh
# A benchmark's command line (the benchmark itself is never a test, and
# none of these runs it): a bad argument is one line on stderr naming it
# and exit status 2; --help is CLI11's help on stdout and exit status 0.
#   test_bench_cli.sh path/to/bench_train (or bench_matmul)
set -u
program=$1
name=$(basename "$program")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# expect STATUS TEXT ARGS...: the exit status, and TEXT in what it printed
# (stderr for status 2, where it must be exactly one line; stdout for 0).
expect() {
    want=$1 text=$2
    shift 2
    "$program" "$@" > "$scratch/out" 2> "$scratch/err"
    status=$?
    if [ "$want" = 2 ]; then printed="$scratch/err"; else printed="$scratch/out"; fi
    if [ "$status" != "$want" ] || ! grep -q -F -e "$text" "$printed" ||
        { [ "$want" = 2 ] && [ "$(grep -c '' "$scratch/err")" != 1 ]; }; then
        echo "FAILED: $name $*: status $status (wanted $want), wanted '$text' in:"
        cat "$scratch/out" "$scratch/err"
        failures=$((failures + 1))
    fi
}

expect 2 "$name: The following argument was not expected: --bogus" --bogus
expect 0 "Usage: $name" --help
case $name in
bench_matmul)
    expect 2 "$name: The following argument was not expected: 3" 3
    ;;
bench_train)
    expect 2 "--threads: Value 0 not in range 1 to" --threads 0          # a range
    expect 2 "--threads: Value 2147483647 not in range 1 to" --threads 2147483647  # 4 x the cores at most
    expect 2 "--steps: wants a whole number, got '5x'" --steps 5x
    expect 2 "--model: llama not in {gpt,modern_lm}" --model llama
    expect 2 "--steps: 1 required N missing" --steps
    expect 2 "--repeat: Value 0 not in range 1 to 1000" --repeat 0
    expect 2 "--repeat: wants a whole number, got 'x'" --repeat x
    expect 2 "--repeat: 1 required N missing" --repeat
    expect 2 "--pytorch: 1 required PYTHON missing" --pytorch
    expect 2 "--pytorch: needs a value" --pytorch ""
    expect 2 "bench_train: The following argument was not expected: 3" --profile 3
    expect 0 "--model M" -h
    expect 0 "--repeat N" --help
    expect 0 "--profile" --help
    expect 0 "--pytorch PYTHON" --help
    ;;
esac
[ "$failures" = 0 ] && echo "$name's command line: every case as expected"
exit "$failures"
