"""What the management commands share: a progress bar (one line on a terminal, plain lines when
piped) and option types."""
import argparse
import sys
import time
from typing import TextIO

from twin.simcore.errors import TwinCoreError
from twin.simcore.units import parse_count

__all__ = ("ProgressBar", "parameter_count")


def parameter_count(text: str) -> float:
    """An option type for a model's parameters: 175B, 175e9 or 175000000000."""
    try:
        return parse_count(text)
    except TwinCoreError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class ProgressBar:
    """A `(fraction, message)` callable, like the core's `on_progress` hooks expect."""

    width = 30

    def __init__(self, stream: TextIO = sys.stderr, label: str = ""):
        self.stream = stream
        self.label = label
        self.is_terminal = stream.isatty()
        self.started = time.monotonic()
        self.last_percent = -1

    def __call__(self, fraction: float, message: str = "") -> None:
        percent = int(round(max(0.0, min(1.0, fraction)) * 100))
        if percent == self.last_percent and fraction < 1.0:
            return
        self.last_percent = percent
        filled = self.width * percent // 100
        elapsed = time.monotonic() - self.started
        line = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {percent:3d}% {elapsed:5.1f}s {message}"
        if self.is_terminal:
            self.stream.write("\r" + line.ljust(100)[:100])
            if fraction >= 1.0:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
