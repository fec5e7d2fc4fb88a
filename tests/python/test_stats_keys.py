"""Loader.stats() is written from the table of what a run measures (run_measures.cpp): every
key a released stoker gave is still there (scripts read them), a renamed one under both names
for one release, and the quantities the run record holds are there by the same names."""
import os
import unittest

import stoker
from testdata import TempDir, make_tokens

# The keys of the stoker release before the table (a script may read any of them).
RELEASED = {
    "stages", "produce_ns", "consumer_wait_ns", "wall_ns", "wait_share", "samples", "batches",
    "bytes", "skipped", "decode_warnings", "skipped_files", "discarded_batches", "stream_reads",
    "workers", "threads_created", "depth", "max_depth", "slots", "slot_bytes", "arena_bytes",
    "mem_budget", "numa_bound", "pinned", "adaptive", "depth_history", "producer_bound_waits",
    "epoch_first_batch", "notes", "agreement", "summary",
}


class StatsKeys(unittest.TestCase):
    def test_released_renamed_and_recorded_keys(self):
        tmp = TempDir()
        self.addCleanup(tmp.cleanup)
        path = os.path.join(tmp.path, "tokens.bin")
        make_tokens(path, 64 * 8 + 1)
        loader = stoker.Loader.tokens(path, seq_len=8, batch_size=4, world_size=1, rank=0)
        for _ in loader:
            pass
        s = loader.stats()
        samples = s["samples"]
        self.assertLessEqual(RELEASED, set(s), RELEASED - set(s))
        self.assertEqual(set(s["stages"]), {"read_ns", "decode_ns", "transform_ns", "collate_ns"})
        self.assertEqual(set(s["stream_reads"]), {"reads", "bytes", "largest"})
        # max_depth is prefetch_max's old name (docs/admin-guide.md, "Renamed"): both, equal.
        self.assertEqual(s["prefetch_max"], s["max_depth"])
        self.assertGreater(s["prefetch_max"], 0)
        self.assertEqual(samples, 64)
        # The run record's derived quantities, by the record's names.
        self.assertAlmostEqual(s["samples_per_s"], samples / (s["wall_ns"] / 1e9), delta=1e-6 * samples)
        self.assertGreaterEqual(s["depth_reached"], 1)
        self.assertTrue(0 <= s["at_max_share"] <= 1)
        self.assertIsInstance(s["budget_depth"], int)


if __name__ == "__main__":
    unittest.main()
