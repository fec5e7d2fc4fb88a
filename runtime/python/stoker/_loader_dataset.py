"""stoker.Loader.dataset: what a loader reads, as scripts read torch's DataLoader.dataset.

Training and evaluation scripts ask the loader's dataset for its length (to check that every
sample was evaluated) and its classes (the model's class count, the names in a report), as
torchvision's ImageFolder has them; without it the evaluation loader had to stay torch's.
"""

__all__ = ["LoaderDataset"]

# Why a source has no class names (classes and class_to_idx are None for it).
_NO_CLASSES = {
    "shards": "tar shards carry numbers as labels (.cls members), not class names",
    "tokens": "token windows have no labels: their targets are the next tokens",
    "records": "record labels are numbers (labels_path), not class names",
}


class LoaderDataset:
    """The dataset a stoker.Loader reads (loader.dataset).

    len()         the samples of the whole dataset, over all ranks (as len(dataset) beside
                  torch's DistributedSampler; this rank's share is loader.samples_per_epoch)
    classes       an image folder's classes: its subfolders' names, sorted as torchvision's
                  ImageFolder sorts them (a class's label is its position)
    class_to_idx  {name: label} for those classes, as ImageFolder's
    no_classes    None for an image folder; else why classes and class_to_idx are None:
                  tar shards label samples by number (.cls), token windows have no labels,
                  records take numbers from labels_path. None rather than [] or {}, so that
                  len(dataset.classes) as a model's class count fails, where 0 would not
    kind, source  'images' (root or shards), 'tokens' or 'records', and what was given

    It is no map-style dataset: samples come from iterating the loader, not dataset[i].
    """

    def __init__(self, kind, source, size, classes):
        self.kind = kind
        self.source = source
        self._size = int(size)
        from_folder = kind == "images" and source.get("root") is not None
        if from_folder:
            self.no_classes = None
            self.classes = list(classes)
            self.class_to_idx = {name: i for i, name in enumerate(self.classes)}
        else:
            self.no_classes = _NO_CLASSES["shards" if kind == "images" else kind]
            self.classes = self.class_to_idx = None

    def __len__(self):
        return self._size

    def __repr__(self):
        where = self.source.get("root") or self.source.get("shards") or self.source.get("path")
        classes = (f"{len(self.classes)} classes" if self.classes is not None
                   else f"no classes: {self.no_classes}")
        return f"LoaderDataset({self.kind}, {where!r}, {self._size} samples, {classes})"
