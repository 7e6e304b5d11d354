# cuBLAS DGEMM (torch's float64 matmul) on the GPU: the physical reference for gemm.
import torch
torch.backends.cuda.matmul.allow_tf32 = False
print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__)
for (m, n, k) in [(1000, 1100, 1200), (2000, 2300, 2600), (4096, 4096, 4096)]:
    a = torch.rand(m, k, dtype=torch.float64, device="cuda")
    b = torch.rand(k, n, dtype=torch.float64, device="cuda")
    for _ in range(3):
        c = a @ b
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 20
    s.record()
    for _ in range(reps):
        c = a @ b
    e.record()
    torch.cuda.synchronize()
    ms = s.elapsed_time(e) / reps
    print(f"cublas-dgemm m={m} n={n} k={k}: {ms:.4f} ms, {2 * m * n * k / ms / 1e9:.2f} TFLOP/s")
