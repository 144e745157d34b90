#!/usr/bin/python3
"""PyTorch reference for bench_train: language-model training throughput on
the farm language, measured on this machine, so the C++ engine can be
compared with PyTorch by same-machine ratios (docs/reference_figures.md
also quotes PyTorch on another CPU).

The work is docs/reference_figures.md's: one epoch = 625 steps of 32
sentences, right-padded to each batch's longest sentence; forward, masked cross-entropy (padding
ignored), backward, AdamW (lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight
decay 0.01). tokens/s = non-pad target tokens / wall time of the timed steps
(data generation, model construction and 5 warm-up steps excluded).

Threading. PyTorch parallelises its own kernels with OpenMP, while Debian's
OpenBLAS (used for the matmuls) has a separate pthread pool; at 2 threads
the two pools can fight for the cores. Both pools read their size from the
environment when the libraries load, so every thread configuration runs in
a fresh subprocess with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS set before
torch is imported. At n > 1 threads several configurations are tried and
the best is reported ("best threading config per row").
A bad configuration can be 20x slower, so a row's timed loop stops after
--max-seconds and reports its rate over the steps it did.

    /usr/bin/python3 benchmarks/pytorch/bench_train.py                # everything
    /usr/bin/python3 benchmarks/pytorch/bench_train.py --model gpt --dtype float32 --threads 1 --steps 60
    /usr/bin/python3 benchmarks/pytorch/bench_train.py --model modern_lm --dtype float32 \\
        --threads 1 --epochs-for-ppl 5 [--language lecture]           # quality check

Not part of the build or the tests; needs Debian's python3-torch.
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["gpt", "modern_lm"]
DTYPES = ["float32", "float64"]
WARMUP_STEPS = 5
BATCH = 32


# ===================================================================== worker
# Runs inside a subprocess whose thread environment is already set. Imports
# torch lazily so the parent process never loads it (and its thread pools).

def worker(args):
    """Measure every requested (model, dtype) under this process's threading
    and print the results as one JSON line prefixed with RESULT."""
    import random
    import time

    import torch
    import torch.nn.functional as F

    sys.dont_write_bytecode = True     # leave no __pycache__ in the source tree
    sys.path.insert(0, HERE)
    import farm_data
    import farm_models

    threads = args.threads[0]          # a worker gets exactly one thread count
    torch.set_num_threads(threads)

    def new_model(name, dtype):
        model = farm_models.build(name, dtype, seed=args.seed)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95),
                                eps=1e-8, weight_decay=0.01)
        return model, opt

    def train_step(model, opt, inputs, targets):
        """One step: forward, mean cross-entropy over the non-pad targets
        (F.cross_entropy skips ignore_index = -100), backward, AdamW."""
        logits = model(inputs)                                   # [B, T, V]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                               ignore_index=farm_data.IGNORE_INDEX)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    @torch.no_grad()
    def perplexity(model, sentences):
        """exp(mean cross-entropy) over every predicted token (all after <s>,
        </s> included, <pad> excluded), as docs/farm_language.md defines it."""
        model.eval()
        total, count = 0.0, 0
        for inputs, targets, n in farm_data.make_lm_batches(sentences, 100):
            logits = model(inputs).double()
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                     ignore_index=farm_data.IGNORE_INDEX, reduction="sum").item()
            count += n
        model.train()
        return math.exp(total / count)

    corpora = farm_data.make_corpora(args.seed, args.language)
    shuffle = random.Random(args.seed)
    results = []

    if args.epochs_for_ppl > 0:
        # Quality check: train whole epochs (a fresh shuffle each) and report
        # the test perplexity after each; also the true distribution's floor.
        floor = farm_data.true_perplexity(corpora["test"], args.language)
        for name in args.model:
            for dt in args.dtype:
                dtype = getattr(torch, dt)
                model, opt = new_model(name, dtype)
                seconds, tokens = 0.0, 0
                for epoch in range(1, args.epochs_for_ppl + 1):
                    batches = farm_data.make_lm_batches(corpora["train"], BATCH, shuffle)
                    start = time.perf_counter()
                    for inputs, targets, n in batches:
                        loss = train_step(model, opt, inputs, targets)
                        tokens += n
                    seconds += time.perf_counter() - start
                    ppl = perplexity(model, corpora["test"])
                    print(f"  {name} {dt} epoch {epoch}: last loss {loss.item():.4f}, "
                          f"test perplexity {ppl:.4f} (floor {floor:.4f})", file=sys.stderr, flush=True)
                results.append(dict(model=name, dtype=dt, epochs=args.epochs_for_ppl,
                                    test_perplexity=ppl, true_perplexity_floor=floor,
                                    train_tokens_per_s=tokens / seconds))
        print("RESULT " + json.dumps(results), flush=True)
        return

    # Throughput: enough shuffled epochs of batches to cover warm-up + steps.
    epoch_batches = farm_data.make_lm_batches(corpora["train"], BATCH, shuffle)
    steps_per_epoch = len(epoch_batches)
    batches = list(epoch_batches)
    while len(batches) < args.steps:
        batches += farm_data.make_lm_batches(corpora["train"], BATCH, shuffle)

    for name in args.model:
        for dt in args.dtype:
            dtype = getattr(torch, dt)
            best = None
            for _ in range(args.repeats):
                # warm-up on a throwaway model (allocator, thread pools, caches),
                # then time a fresh one: the same work as the C++ benchmark
                model, opt = new_model(name, dtype)
                for inputs, targets, _n in batches[:WARMUP_STEPS]:
                    train_step(model, opt, inputs, targets)
                model, opt = new_model(name, dtype)
                tokens, steps = 0, 0
                start = time.perf_counter()
                for inputs, targets, n in batches[:args.steps]:
                    loss = train_step(model, opt, inputs, targets)
                    tokens += n
                    steps += 1
                    # a pathological threading configuration can be 20x slower:
                    # stop early, the rate over the steps done is still a rate
                    if time.perf_counter() - start > args.max_seconds:
                        break
                last_loss = loss.item()          # (the step is synchronous on CPU)
                seconds = time.perf_counter() - start
                rate = tokens / seconds
                if best is None or rate > best["tokens_per_s"]:
                    best = dict(model=name, dtype=dt, steps=steps, tokens=tokens,
                                seconds=seconds, tokens_per_s=rate,
                                s_per_epoch=seconds * steps_per_epoch / steps,
                                last_loss=last_loss)
            results.append(best)
            cut = "" if best["steps"] == args.steps else f" (stopped after {best['steps']} steps)"
            print(f"  {name:<10} {dt:<8} {best['tokens_per_s']:>10.0f} tok/s{cut}",
                  file=sys.stderr, flush=True)
    print("RESULT " + json.dumps(results), flush=True)


# ===================================================================== parent

def thread_configs(n):
    """(label, environment) pairs to try at n threads. OMP_NUM_THREADS sizes
    PyTorch's OpenMP pool (torch.set_num_threads is also called),
    OPENBLAS_NUM_THREADS the BLAS pool; OMP_WAIT_POLICY=PASSIVE makes idle
    OpenMP threads sleep instead of spinning (so they leave the cores to
    OpenBLAS)."""
    one = {"OMP_NUM_THREADS": str(n), "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": str(n)}
    if n == 1:
        return [("blas=1", one)]
    both = dict(one, OPENBLAS_NUM_THREADS=str(n))
    passive = {"OMP_WAIT_POLICY": "PASSIVE"}
    return [("blas=1", one),
            ("blas=1,passive", dict(one, **passive)),
            (f"blas={n}", both),
            (f"blas={n},passive", dict(both, **passive))]


def run_worker(args, threads, env_extra):
    """Re-run this script as a worker with the thread environment set."""
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_WAIT_POLICY"):
        env.pop(key, None)
    env.update(env_extra)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker",
           "--model", *args.model, "--dtype", *args.dtype, "--threads", str(threads),
           "--steps", str(args.steps), "--repeats", str(args.repeats),
           "--max-seconds", str(args.max_seconds),
           "--epochs-for-ppl", str(args.epochs_for_ppl), "--seed", str(args.seed), "--language", args.language]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", nargs="+", default=["both"], choices=MODELS + ["both"])
    p.add_argument("--dtype", nargs="+", default=["both"], choices=DTYPES + ["both"])
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--steps", type=int, default=625, help="timed steps (625 = one epoch)")
    p.add_argument("--repeats", type=int, default=1, help="time each row this often, keep the best")
    p.add_argument("--max-seconds", type=float, default=30.0,
                   help="stop a row's timed loop after this long (its rate is over the steps done)")
    p.add_argument("--epochs-for-ppl", type=int, default=0,
                   help="if > 0: train this many epochs and print test perplexity instead")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--language", default="uniform", choices=["uniform", "lecture"],
                   help="the farm language (bench_train's is the uniform one)")
    p.add_argument("--json", help="write the results to this file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.model = MODELS if "both" in args.model else args.model
    args.dtype = DTYPES if "both" in args.dtype else args.dtype

    if args.worker:
        return worker(args)

    sys.stdout.reconfigure(line_buffering=True)   # keep order with the workers' stderr
    cpu = cpu_name()
    print(f"CPU: {cpu}, {os.cpu_count()} logical cores; Python {platform.python_version()}")

    if args.epochs_for_ppl > 0:
        threads = args.threads[0]
        label, env = thread_configs(threads)[0]
        print(f"quality check: {args.epochs_for_ppl} epochs, {threads} thread(s) ({label})")
        rows = run_worker(args, threads, env)
        print(f"{'model':<10} {'dtype':<8} {'test ppl':>9} {'floor':>7} {'train tok/s':>12}")
        for r in rows:
            print(f"{r['model']:<10} {r['dtype']:<8} {r['test_perplexity']:>9.4f} "
                  f"{r['true_perplexity_floor']:>7.4f} {r['train_tokens_per_s']:>12.0f}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"cpu": cpu, "perplexity": rows}, f, indent=2)
        return

    print(f"training throughput: {args.steps} timed steps of {BATCH} sentences "
          f"(+{WARMUP_STEPS} warm-up), best of {args.repeats}")
    rows = []
    for n in args.threads:
        for label, env in thread_configs(n):
            print(f"threads={n} ({label}) ...", flush=True)
            for r in run_worker(args, n, env):
                rows.append(dict(r, threads=n, config=label))

    # One line per configuration, then the best configuration of each row.
    print(f"\n{'model':<10} {'dtype':<8} {'threads':>7} {'config':<16} {'steps':>5} {'tokens/s':>10} "
          f"{'s/epoch':>8} {'last loss':>9}")
    for r in rows:
        print(f"{r['model']:<10} {r['dtype']:<8} {r['threads']:>7} {r['config']:<16} {r['steps']:>5} "
              f"{r['tokens_per_s']:>10.0f} {r['s_per_epoch']:>8.2f} {r['last_loss']:>9.4f}")
    best = {}
    for r in rows:
        key = (r["model"], r["dtype"], r["threads"])
        if key not in best or r["tokens_per_s"] > best[key]["tokens_per_s"]:
            best[key] = r
    print(f"\nbest configuration per row:\n{'model':<10} {'dtype':<8} {'threads':>7} "
          f"{'tokens/s':>10} {'s/epoch':>8}  config")
    for (m, d, n), r in best.items():
        print(f"{m:<10} {d:<8} {n:>7} {r['tokens_per_s']:>10.0f} {r['s_per_epoch']:>8.2f}  {r['config']}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu, "cores": os.cpu_count(), "steps": args.steps,
                       "warmup_steps": WARMUP_STEPS, "batch": BATCH, "all": rows,
                       "best": list(best.values())}, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
