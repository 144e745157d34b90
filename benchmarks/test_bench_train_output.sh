#!/bin/sh
# What bench_train prints, in structure only: a two-step run with
# --repeat 2 --profile (about a second; no figure is checked, they are
# timings). PyTorch is a stand-in interpreter that "imports torch" and
# writes the figures file benchmarks/pytorch/bench_train.py would, so the
# PyTorch rows are checked without torch; a missing interpreter is one line.
#   test_bench_train_output.sh path/to/bench_train
set -u
program=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

cat > "$scratch/python" << 'STUB'
#!/bin/sh
[ "$1" = -c ] && exit 0
echo "$@" > "$(dirname "$0")/args"
while [ $# -gt 0 ]; do
    [ "$1" = --json ] && out=$2
    shift
done
rows=""
for model in gpt modern_lm; do
    for dtype in float32 float64; do
        for threads in 1 2; do
            rows="$rows${rows:+, }{\"model\": \"$model\", \"dtype\": \"$dtype\", \"threads\": $threads, \"tokens_per_s\": 30000.0}"
        done
    done
done
echo "{\"best\": [$rows]}" > "$out"
STUB
chmod +x "$scratch/python"

# check WHAT COUNT PATTERN FILE: COUNT lines of FILE match the extended regex PATTERN.
check() {
    got=$(grep -c -E -e "$3" "$4")
    if [ "$got" != "$2" ]; then
        echo "FAILED: $1: $got lines match '$3', wanted $2"
        failures=$((failures + 1))
    fi
}

if ! "$program" --steps 2 --repeat 2 --profile --pytorch "$scratch/python" > "$scratch/out" 2> "$scratch/err"; then
    echo "FAILED: bench_train --steps 2 --repeat 2 --profile exited with status $?"
    failures=$((failures + 1))
fi
out="$scratch/out"
number='[0-9]+(\.[0-9]+)?'
check "the peak at 1 and 2 threads" 1 "^peak: FMA loop .*: $number GFLOP/s at 1 thread, $number at 2 threads$" "$out"
check "the peak again after the runs" 1 "^peak, before and after the runs: $number then $number GFLOP/s at 1 thread, $number then $number at 2 threads$" "$out"
check "the FLOP count's header" 1 '^model +weights +6 x weights +keys seen +attention +FLOP/token$' "$out"
check "GPT's product weights" 1 "^gpt +102656 +615936 +$number +$number +$number$" "$out"
check "ModernLM's product weights" 1 "^modern_lm +94976 +569856 +$number +$number +$number$" "$out"
check "two runs each" 1 '^training throughput: 2 steps of 32 sentences .*, 2 runs each$' "$out"
check "a row per model and thread count" 4 "^(gpt|modern_lm) +[12]( +$number){5}% +$number +$number$" "$out"
check "each 2-thread run with the cores' round trip before it" 2 \
    "^ +each run, tokens/s \(a cache line's round trip between the cores just before it\): $number \($number ns\), $number \($number ns\)$" "$out"
check "how the shards ran, under each 2-thread row" 2 \
    "^ +shards one after another in [0-9]+ of 4 steps \(bursts of 5 steps in 512 probe the way not taken; the others take the faster way\)$" "$out"
check "two independent runs side by side, under each 2-thread row" 2 "^(gpt|modern_lm) +2 x 1( +$number){5}% +$number +$number$" "$out"
check "what they are, against the 2-thread row" 2 \
    "^ +2 independent 1-thread runs side by side \(tokens/s of all; how the lessons train the models they compare\): the 2-thread row's median is [0-9]+% of theirs$" "$out"
check "PyTorch's figures, float32 and float64" 8 "^ +$number +PyTorch float(32|64), best threading; engine median / PyTorch = $number$" "$out"
check "a profile per model and thread count" 4 '^profile: (gpt|modern_lm), [12] threads?, 2 steps, ' "$out"
check "forward in every profile" 4 "^forward \(model and loss\) +$number +$number%$" "$out"
check "backward in every profile" 4 "^backward +$number +$number%$" "$out"
check "GEMM in forward and backward" 8 "^  GEMM +$number +$number% +[0-9]+ products, $number GFLOP/s$" "$out"
check "allocation in forward and backward" 8 "^  allocation \(storage pool\) +$number +$number% +[0-9]+ blocks$" "$out"
check "the graph in forward and backward" 8 '^  graph \((record: nodes|topological sort)\) ' "$out"
check "the shards' sum in every profile" 4 "^sum of the shards' gradients +$number +$number%$" "$out"
check "the optimizer in every profile" 4 "^optimizer \(zero_grad, AdamW step\) +$number +$number%$" "$out"
check "the rest at 1 thread" 2 "^rest \(shard set-up\) +$number +$number%$" "$out"
check "the slowest shard at 2 threads" 2 \
    "^waiting for the slowest shard +$number +$number% +shards: $number / $number ms$" "$out"
check "the set-up, start and join at 2 threads" 2 "^shard set-up, threads' start and join +$number +$number%$" "$out"
check "the ops' table in every profile" 4 '^op \(with its GEMM\) +calls +forward ms +backward ms +share$' "$out"
check "linear's row in every profile" 4 "^linear +[0-9]+ +$number +$number +$number%$" "$out"
check "GPT's GELU, ModernLM's SwiGLU" 4 "^(gelu|swiglu) +4 +$number +$number +$number%$" "$out"
check "attention in every profile" 4 "^attention_packed(_qkv)? +4 +$number +$number +$number%$" "$out"
check "what PyTorch was asked for" 1 \
    'pytorch/bench_train.py --model gpt modern_lm --dtype float32 float64 --threads 1 2 --steps 2 --repeats 2 --json ' \
    "$scratch/args"
if [ -s "$scratch/err" ]; then
    echo "FAILED: bench_train wrote to stderr:"
    cat "$scratch/err"
    failures=$((failures + 1))
fi

# No interpreter with torch: one line, and the benchmark goes on.
if ! "$program" --steps 1 --model gpt --threads 1 --pytorch "$scratch/no-such-python" > "$scratch/out2" 2>&1; then
    echo "FAILED: bench_train without PyTorch exited with status $?"
    failures=$((failures + 1))
fi
check "one line without PyTorch" 1 "^PyTorch: not measured \($scratch/no-such-python cannot import torch" "$scratch/out2"
check "its one row" 1 "^gpt +1( +$number){5}%" "$scratch/out2"

# --beside-busy: the rows run beside a busy child process (stopped for the
# peak's second reading, started again for the profile), gone when
# bench_train ends.
if ! "$program" --steps 1 --model gpt --threads 2 --profile --beside-busy --pytorch none > "$scratch/out3" 2>&1; then
    echo "FAILED: bench_train --beside-busy exited with status $?"
    failures=$((failures + 1))
fi
check "the busy process named" 1 '^beside a busy process \(pid [0-9]+, spinning on one core while the rows and profiles run\)$' "$scratch/out3"
check "its row" 1 "^gpt +2( +$number){5}%" "$scratch/out3"
for pid in $(sed -n 's/^beside a busy process (pid \([0-9]*\),.*/\1/p' "$scratch/out3"); do
    if kill -0 "$pid" 2> /dev/null; then
        echo "FAILED: the busy process $pid still runs after bench_train ended"
        failures=$((failures + 1))
    fi
done

if [ "$failures" = 0 ]; then
    echo "bench_train's output: every part as expected"
else
    echo "bench_train printed:"
    cat "$scratch/out" "$scratch/out2" "$scratch/out3"
fi
exit "$failures"
