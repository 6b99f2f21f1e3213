# PyTorch's side of `kiln-cpu-engines gemm` (bench/cpu_engines): GFLOP/s of the CNN's
# convolutions as PyTorch runs them on the CPU (oneDNN), forward and both gradients, batch 64,
# and of torch.mm at the per-image product shapes the patched flex hands to gemm.
#   python bench/conv_floor_torch.py [THREADS]
import sys, time, torch
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
torch.set_num_threads(threads)
torch.manual_seed(0)

def best_secs(fn, rounds=5, calls=10):
    fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls)
    return best

batch = 64
for name, c_in, c_out, side in [("conv2", 32, 32, 28), ("conv3", 32, 64, 14), ("conv4", 64, 64, 14)]:
    conv = torch.nn.Conv2d(c_in, c_out, 3, padding=1)
    x = torch.randn(batch, c_in, side, side, requires_grad=True)
    flop = 2 * batch * c_out * side * side * c_in * 9
    with torch.no_grad():
        fwd = best_secs(lambda: conv(x))
    y = conv(x)
    dy = torch.randn_like(y)
    bwd = best_secs(lambda: torch.autograd.grad(conv(x), (x, conv.weight), dy))
    # The backward of one forward-and-backward call is its time less the forward's.
    print(f'{{"torch_conv":"{name} (batch {batch}, {c_in}->{c_out}, {side}x{side})","threads":{threads},'
          f'"forward_gflops":{flop / fwd / 1e9:.1f},"both_gradients_gflops":{2 * flop / max(bwd - fwd, 1e-9) / 1e9:.1f}}}')

for name, m, n, k in [("conv2 forward, one image", 32, 784, 288), ("conv4 forward, one image", 64, 196, 576),
                      ("square", 1024, 1024, 1024)]:
    a, b = torch.randn(m, k), torch.randn(k, n)
    calls = 64 if m < 1024 else 1
    secs = best_secs(lambda: torch.mm(a, b), calls=calls)
    print(f'{{"torch_mm":"{name} ({m} x {n} x {k})","threads":{threads},"gflops":{2 * m * n * k / secs / 1e9:.1f}}}')
