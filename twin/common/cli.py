"""Command-line progress: a one-line bar on a terminal, plain lines when piped."""
import sys
import time
from typing import TextIO

__all__ = ("ProgressBar",)


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
