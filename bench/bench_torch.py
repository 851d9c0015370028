#!/usr/bin/python3
"""The bench_forward shapes in PyTorch: nn.MultiheadAttention (GPT-2-small layer,
C=768, H=12, biases, batch_first) forward, eager float32, torch.set_num_threads(2).

No maps: need_weights=False. Maps: need_weights=True, average_attn_weights=False
(the (B, H, S, S) weights are returned in memory). Causal: a boolean attn_mask
(True above the diagonal). Prints median and best of --reps runs after a warm-up,
GFLOP/s counted as bench_forward counts them (causal score and P.V FLOPs halved),
and the peak RSS of a child process per shape. With --attn-json FILE (written by
bench_forward --json FILE) it also prints attn-run / PyTorch time ratios.

  /usr/bin/python3 bench/bench_torch.py --attn-json attn.json
"""
import argparse
import json
import multiprocessing as mp
import resource
import time

C, H, D, O = 768, 12, 64, 768


def forward_flops(B, S, causal):
    rows = B * S
    proj = 2.0 * rows * C * 3 * H * D + 2.0 * rows * H * D * O
    attend = 4.0 * B * H * S * S * D
    return proj + (attend / 2 if causal else attend)


def time_shape(args, B, S, causal, maps, queue):
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(C, H, bias=True, batch_first=True).eval()
    x = torch.rand(B, S, C) * 2 - 1
    mask = torch.ones(S, S, dtype=torch.bool).triu(1) if causal else None
    times = []
    with torch.inference_mode():
        for r in range(args.reps + 1):
            t0 = time.perf_counter()
            if maps:
                out, att = mha(x, x, x, attn_mask=mask, need_weights=True,
                               average_attn_weights=False)
            else:
                out, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
            if r > 0:  # the first run warms up
                times.append(1e3 * (time.perf_counter() - t0))
    times.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    queue.put((times[len(times) // 2], times[0], rss))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--B", default="1,4")
    p.add_argument("--S", default="128,1024,4096")
    p.add_argument("--causal", default="1,0")
    p.add_argument("--maps", default="0,1")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--attn-json", help="bench_forward --json output, to print ratios")
    p.add_argument("--json", help="write these results as JSON")
    args = p.parse_args()
    ints = lambda s: [int(v) for v in s.split(",")]

    attn = {}
    if args.attn_json:
        for r in json.load(open(args.attn_json)):
            attn[(r["B"], r["S"], r["causal"], r["maps"])] = r

    import torch
    print(f"torch {torch.__version__} nn.MultiheadAttention, C=768 H=12, "
          f"threads={args.threads}, median of {args.reps}")
    print(f"{'B':>3} {'S':>6} {'mask':<6} {'maps':<4} {'median_ms':>10} {'best_ms':>10} "
          f"{'GFLOP/s':>9} {'RSS_MiB':>9} {'attn_ms':>9} {'ratio':>7}")
    results = []
    ctx = mp.get_context("fork")
    for B in ints(args.B):
        for S in ints(args.S):
            for causal in map(bool, ints(args.causal)):
                for maps in map(bool, ints(args.maps)):
                    q = ctx.Queue()
                    proc = ctx.Process(target=time_shape, args=(args, B, S, causal, maps, q))
                    proc.start()
                    proc.join()
                    if proc.exitcode != 0:
                        print(f"{B:>3} {S:>6} {'causal' if causal else 'bidir':<6} "
                              f"{'yes' if maps else 'no':<4} failed (exit {proc.exitcode})")
                        continue
                    median, best, rss = q.get()
                    gf = forward_flops(B, S, causal) / (median * 1e-3) / 1e9
                    a = attn.get((B, S, causal, maps))
                    a_ms = f"{a['median_ms']:9.2f}" if a else f"{'-':>9}"
                    ratio = f"{a['median_ms'] / median:7.2f}" if a else f"{'-':>7}"
                    print(f"{B:>3} {S:>6} {'causal' if causal else 'bidir':<6} "
                          f"{'yes' if maps else 'no':<4} {median:10.2f} {best:10.2f} {gf:9.1f} "
                          f"{rss:9.1f} {a_ms} {ratio}", flush=True)
                    results.append(dict(B=B, S=S, causal=causal, maps=maps, median_ms=median,
                                        best_ms=best, gflops=gf, peak_rss_mib=rss))
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
