"""Loader(to_device=...)'s CUDA faults that need a GPU (labels gpu and faults;
every test skips without a CUDA device): a pin that fails through torch's cudart leaves no
error for torch's next kernel (its launch check used to raise it: the designed fallback to
pageable memory became a crash in the first step), and feeding the last GPU from a thread
that never chose a device makes no context on GPU 0.
No thread count is checked (testdata.NoLeftovers): the CUDA runtime's threads live as long
as the process."""
import re
import subprocess
import sys
import textwrap
import unittest

import numpy as np
try:
    import torch
except ImportError:  # a Python without torch (gpu-check may pick any): every test skips
    torch = None

from stoker._device import torch_pinner
from testdata import make_records, TempDir

HAS_CUDA = torch is not None and torch.cuda.is_available()
NO_CUDA = "no CUDA device" + ("" if torch else " (no torch in this Python)")
GPUS = torch.cuda.device_count() if HAS_CUDA else 0
TORCH = tuple(int(v) for v in re.findall(r"\d+", torch.__version__)[:2]) if torch else (0, 0)


@unittest.skipUnless(HAS_CUDA, NO_CUDA)
class TorchPinFaults(unittest.TestCase):
    def test_a_failed_pin_leaves_no_error_for_torchs_next_kernel(self):
        device = torch.device("cuda", GPUS - 1)
        pin, unpin, _ = torch_pinner(device)
        memory = np.zeros(1 << 20, dtype=np.uint8)
        pointer = memory.ctypes.data
        pin(pointer, memory.nbytes)
        try:
            with self.assertRaises(torch.cuda.CudaError):  # the range is registered already
                pin(pointer, memory.nbytes)
            doubled = torch.ones(4, device=device) * 2  # the user's first kernel after it
            torch.cuda.synchronize(device)
            self.assertEqual(doubled.sum().item(), 8.0)
        finally:
            unpin(pointer)

    @unittest.skipUnless(GPUS >= 2, "needs two GPUs: GPU 0 must stay untouched")
    @unittest.skipUnless(TORCH >= (2, 1), "torch before 2.1 makes a context on GPU 0 itself "
                                          "(its device guard restores device 0)")
    def test_feeding_the_last_gpu_from_a_worker_thread_makes_no_context_on_gpu_0(self):
        # A fresh process, so that nothing of this one has touched GPU 0.
        script = textwrap.dedent("""
            import sys, threading, torch, stoker
            def feed():
                loader = stoker.Loader.records(sys.argv[1], record_bytes=4096, batch_size=8,
                                               labels_path=sys.argv[2], world_size=1, rank=0,
                                               to_device=f"cuda:{torch.cuda.device_count() - 1}")
                for _batch in loader:
                    pass
                loader.close()  # the slots are unpinned on this thread
            worker = threading.Thread(target=feed)
            worker.start()
            worker.join()
            print("context on GPU 0:", torch._C._cuda_hasPrimaryContext(0))
        """)
        tmp = TempDir()
        self.addCleanup(tmp.cleanup)
        path, labels_path, _ = make_records(tmp.path, 64, 4096)
        run = subprocess.run([sys.executable, "-c", script, path, labels_path],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("context on GPU 0: False", run.stdout, run.stderr)


if __name__ == "__main__":
    unittest.main()
