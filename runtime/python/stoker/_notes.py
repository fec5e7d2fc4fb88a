"""stoker's notes on stderr: one line each, written to sys.stderr itself, never through print().

Training scripts replace builtins.print so that only rank 0 prints (torchvision's reference
scripts do so in their setup_for_distributed); a note that went through print() was then lost
on every other rank, the very ranks that say "waited N s for rank 0". The line and its newline
go in one write(), so that two processes sharing a stream (mpirun, srun) never glue lines.
"""
import sys

__all__ = ["note"]


def note(text):
    """Writes `text` and a newline to sys.stderr, then flushes it. No stream (sys.stderr is
    None under pythonw or after a script closed it): the note is dropped, never an error."""
    stream = sys.stderr
    if stream is None:
        return
    stream.write(text + "\n")
    stream.flush()
