"""stoker.Loader.images with the reference script's --mixup-alpha and --cutmix-alpha
(mixup_alpha, cutmix_alpha, num_classes):

- each mixed batch equals what torchvision's reference RandomMixup / RandomCutmix
  (references/classification/transforms.py, p=1.0) make of the same batch unmixed (a loader
  of the same seed without mixing: the per-sample pass is unchanged) for the lambda, the box
  centre and the roll stoker drew (stoker.transforms.mix_draw says them; the reference's
  torch._sample_dirichlet and torch.randint are made to return them), images and targets
  bit for bit, CHW and HWC, float32 and uint8 (CutMix's paste);
- the reference's file is imported from the installed torchvision's reference scripts
  (scripts/torchvision-references.sh's folder, or STOKER_TORCHVISION_SOURCE); where there is
  none, the test re-states its arithmetic (below, _Restated) and says so on stderr;
- lambda over many batches follows Beta(alpha, alpha) (mean and variance), and the loader's
  batches carry the draws mix_draw gives; a resumed epoch repeats the mixing;
- bad values are errors naming the option.
"""
import io
import math
import os
import sys
import tarfile
import unittest
from unittest import mock

import numpy as np
import torch

import stoker
from stoker.transforms import mix_draw
from testdata import ImageFolderCase, reference_module

SIZE, BATCH, SEED = 16, 6, 3




class _Restated:
    """The reference's RandomMixup and RandomCutmix (torchvision 0.14), p=1.0, re-stated:
    used only where its source is not on this machine."""

    class _Mix:
        def __init__(self, num_classes, p=1.0, alpha=1.0):
            self.num_classes, self.alpha = num_classes, alpha

        def _start(self, batch, target):
            target = torch.nn.functional.one_hot(target, self.num_classes).to(batch.dtype)
            lam = float(torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha]))[0])
            return batch.clone(), target, batch.roll(1, 0), target.roll(1, 0), lam

    class RandomMixup(_Mix):
        def __call__(self, batch, target):
            batch, target, rolled, target_rolled, lam = self._start(batch, target)
            rolled.mul_(1.0 - lam)
            batch.mul_(lam).add_(rolled)
            target_rolled.mul_(1.0 - lam)
            return batch, target.mul_(lam).add_(target_rolled)

    class RandomCutmix(_Mix):
        def __call__(self, batch, target):
            batch, target, rolled, target_rolled, lam = self._start(batch, target)
            h, w = batch.shape[-2:]
            r_x, r_y = torch.randint(w, (1,)), torch.randint(h, (1,))
            r = 0.5 * math.sqrt(1.0 - lam)
            r_w_half, r_h_half = int(r * w), int(r * h)
            x1 = int(torch.clamp(r_x - r_w_half, min=0))
            y1 = int(torch.clamp(r_y - r_h_half, min=0))
            x2 = int(torch.clamp(r_x + r_w_half, max=w))
            y2 = int(torch.clamp(r_y + r_h_half, max=h))
            batch[:, :, y1:y2, x1:x2] = rolled[:, :, y1:y2, x1:x2]
            lam = float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))
            target_rolled.mul_(1.0 - lam)
            return batch, target.mul_(lam).add_(target_rolled)


REFERENCE = reference_module("transforms.py")
if REFERENCE is None:
    print("test_loader_mixing: torchvision's reference transforms.py is not here; its "
          "arithmetic is re-stated in the test (_Restated)", file=sys.stderr)
    REFERENCE = _Restated


def reference_mix(draw, data, labels, num_classes, alpha):
    """The reference's transform of draw["kind"] on (data, labels), CHW, with stoker's draw."""
    beta = torch.tensor([draw["beta"], 1.0 - draw["beta"]], dtype=torch.float32)
    centre = iter([torch.tensor([draw["r_x"]]), torch.tensor([draw["r_y"]])])
    kind = REFERENCE.RandomMixup if draw["kind"] == "mixup" else REFERENCE.RandomCutmix
    with mock.patch.object(torch, "_sample_dirichlet", lambda _alpha: beta), \
            mock.patch.object(torch, "randint", lambda *a, **k: next(centre)):
        out, target = kind(num_classes, p=1.0, alpha=alpha)(torch.from_numpy(data),
                                                            torch.from_numpy(labels))
    return out.numpy(), target.numpy()


class MixedBatches(ImageFolderCase, unittest.TestCase):
    FOLDER = {"classes": 4, "per_class": 5}  # 20 images: batches of 6, 6, 6 and 2

    def batches(self, epoch=0, **kw):
        loader = stoker.Loader.images(self.root, batch_size=BATCH, size=SIZE, seed=SEED,
                                      world_size=1, rank=0, as_numpy=True, return_indices=True,
                                      **kw)
        loader.set_epoch(epoch)
        out = [(np.array(d), np.array(l), np.array(i)) for d, l, i in loader]
        loader.close()
        return out

    def check_against_reference(self, layout="CHW", dtype="float32", **alphas):
        options = {"layout": layout, "dtype": dtype}
        plain, mixed = self.batches(**options), self.batches(**options, **alphas)
        self.assertEqual(len(plain), 4)
        kinds = set()
        for n, ((data, labels, idx), (got, targets, got_idx)) in enumerate(zip(plain, mixed)):
            np.testing.assert_array_equal(got_idx, idx)
            self.assertEqual(labels.dtype, np.int64)
            self.assertEqual((targets.dtype, targets.shape), (np.float32, (len(idx), 4)))
            draw = mix_draw(n * BATCH, size=SIZE, seed=SEED, **alphas)
            kinds.add(draw["kind"])
            alpha = alphas.get(f"{draw['kind']}_alpha")
            chw = data.transpose(0, 3, 1, 2) if layout == "HWC" else data
            want, want_targets = reference_mix(draw, np.ascontiguousarray(chw, np.float32),
                                               labels, 4, alpha)
            if layout == "HWC":
                want = want.transpose(0, 2, 3, 1)
            np.testing.assert_array_equal(got.astype(np.float32), want,
                                          err_msg=f"batch {n}: {draw}")
            np.testing.assert_array_equal(targets, want_targets, err_msg=f"batch {n}: {draw}")
        return kinds

    def test_mixup_is_the_references_for_the_same_lambda_and_roll(self):
        self.assertEqual(self.check_against_reference(mixup_alpha=0.2), {"mixup"})

    def test_cutmix_is_the_references_for_the_same_box(self):
        self.assertEqual(self.check_against_reference(cutmix_alpha=1.0), {"cutmix"})
        self.check_against_reference(layout="HWC", cutmix_alpha=1.0)
        self.check_against_reference(dtype="uint8", cutmix_alpha=1.0)  # a paste: exact

    def test_both_alphas_take_one_per_batch_and_hwc_equals_chw(self):
        kinds = set()
        for seed_epoch in range(3):
            for n in range(4):
                kinds.add(mix_draw(n * BATCH, size=SIZE, seed=SEED, epoch=seed_epoch,
                                   mixup_alpha=0.2, cutmix_alpha=1.0)["kind"])
        self.assertEqual(kinds, {"mixup", "cutmix"})
        self.check_against_reference(layout="HWC", mixup_alpha=0.2, cutmix_alpha=1.0)

    def test_a_resumed_epoch_repeats_the_mixing_and_another_epoch_does_not(self):
        options = {"mixup_alpha": 0.4, "cutmix_alpha": 1.0}
        whole = self.batches(**options)
        loader = stoker.Loader.images(self.root, batch_size=BATCH, size=SIZE, seed=SEED,
                                      world_size=1, rank=0, as_numpy=True, **options)
        it = iter(loader)
        next(it)
        state = loader.state_dict()
        it.close()
        resumed = stoker.Loader.images(self.root, batch_size=BATCH, size=SIZE, seed=SEED,
                                       world_size=1, rank=0, as_numpy=True, **options)
        resumed.load_state_dict(state)
        rest = [(np.array(d), np.array(l)) for d, l in resumed]
        loader.close()
        resumed.close()
        self.assertEqual(len(rest), 3)
        for (d, l), (wd, wl, _) in zip(rest, whole[1:]):
            np.testing.assert_array_equal(d, wd)
            np.testing.assert_array_equal(l, wl)
        other = self.batches(epoch=1, **options)
        self.assertFalse(np.array_equal(other[0][1], whole[0][1]))

    def test_the_loaders_lambdas_are_mix_draws_and_follow_beta(self):
        # Each MixUp batch's targets hold lambda at a sample's label when its partner's differs.
        for n, (_, targets, _) in enumerate(self.batches(mixup_alpha=0.2, num_classes=6)):
            self.assertEqual(targets.shape[1], 6)
            lam = np.float32(mix_draw(n * BATCH, size=SIZE, seed=SEED, mixup_alpha=0.2)["lambda"])
            for row in targets:
                if row.max() < 1.0:  # two labels: lambda and 1 - lambda
                    self.assertIn(lam, row)
        for alpha in (0.2, 1.0):
            lams = np.array([mix_draw(k * BATCH, size=SIZE, seed=s, mixup_alpha=alpha)["lambda"]
                             for s in range(5) for k in range(1000)])
            want_var = 1 / (4 * (2 * alpha + 1))
            # 5000 draws: the mean's standard error is under 0.006, the variance's under 0.0025;
            # four of each.
            self.assertAlmostEqual(lams.mean(), 0.5, delta=0.024, msg=f"alpha {alpha}")
            self.assertAlmostEqual(lams.var(), want_var, delta=0.01, msg=f"alpha {alpha}")

    def test_without_mixing_labels_stay_int64(self):
        for _, labels, _ in self.batches():
            self.assertEqual((labels.dtype, labels.ndim), (np.int64, 1))

    def test_tensors_carry_the_soft_targets(self):
        loader = stoker.Loader.images(self.root, batch_size=BATCH, size=SIZE, seed=SEED,
                                      world_size=1, rank=0, cutmix_alpha=1.0)
        data, targets = next(iter(loader))
        self.assertEqual((targets.dtype, tuple(targets.shape)), (torch.float32, (BATCH, 4)))
        torch.testing.assert_close(targets.sum(1), torch.ones(BATCH))
        loader.close()


class MixingErrors(ImageFolderCase, unittest.TestCase):
    FOLDER = {"classes": 3, "per_class": 2}

    def loader(self, root=None, **kw):
        root = self.root if root is None and "shards" not in kw else root
        return stoker.Loader.images(root, batch_size=2, size=SIZE, world_size=1, rank=0, **kw)

    def shard(self, name="s.tar"):
        path = os.path.join(self.tmp.path, name)
        with tarfile.open(path, "w") as tar:
            for k, (image, label) in enumerate(self.items):
                with open(image, "rb") as f:
                    jpeg = f.read()
                for suffix, data in ((".jpg", jpeg), (".cls", str(label).encode())):
                    info = tarfile.TarInfo(f"{k:04d}{suffix}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        return path

    def test_bad_values_name_the_option(self):
        for kw, name, kind in (({"mixup_alpha": -0.1}, "mixup_alpha", ValueError),
                               ({"cutmix_alpha": float("nan")}, "cutmix_alpha", ValueError),
                               ({"cutmix_alpha": "1"}, "cutmix_alpha", TypeError),
                               ({"mixup_alpha": 0.2, "num_classes": 0}, "num_classes", ValueError)):
            with self.assertRaisesRegex(kind, name):
                self.loader(**kw)

    def test_a_label_beyond_num_classes_is_an_error_naming_it(self):
        loader = self.loader(mixup_alpha=0.2, num_classes=2)
        with self.assertRaisesRegex(stoker.Error, "num_classes=2.*label 2"):
            for _ in loader:
                pass
        loader.close()

    def test_shards_need_labels_and_num_classes(self):
        shard = self.shard()
        with self.assertRaisesRegex(stoker.Error, "labels=False"):
            self.loader(shards=shard, labels=False, mixup_alpha=0.2, num_classes=3)
        with self.assertRaisesRegex(stoker.Error, "num_classes"):
            self.loader(shards=shard, cutmix_alpha=1.0)
        loader = self.loader(shards=shard, cutmix_alpha=1.0, num_classes=5)
        _, targets = next(iter(loader))
        self.assertEqual(tuple(targets.shape), (2, 5))
        loader.close()


if __name__ == "__main__":
    unittest.main()
