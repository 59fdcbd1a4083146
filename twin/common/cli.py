"""What the management commands share: the language of their output, a progress bar (one line on
a terminal, plain lines when piped) and option types."""
import argparse
import os
import sys
import time
from collections.abc import Mapping
from typing import TextIO

from django.core.management.base import BaseCommand, DjangoHelpFormatter
from django.utils import translation

from twin.common.errors import core_error_text
from twin.simcore.errors import TwinCoreError
from twin.simcore.translation import Phrase, rendered
from twin.simcore.units import parse_count

__all__ = ("ProgressBar", "TwinCommand", "cli_language", "parameter_count")

# Where a shell says its language, first that counts first (as gettext reads them).
LANGUAGE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def cli_language(environ: Mapping[str, str] = os.environ) -> str:
    """The site language for a command's output, as gettext picks one: the first language of
    LANGUAGE (a colon-separated list) that the site has, else the first of LC_ALL, LC_MESSAGES
    and LANG that is set ("zh_CN.UTF-8" is zh-hans); English when that one is "C", "POSIX" or a
    language the site lacks, and when none is set."""
    for variable in LANGUAGE_VARIABLES:
        value = environ.get(variable, "")
        if not value:
            continue
        for name in value.split(":"):
            locale = name.split(".")[0].split("@")[0]
            if locale and locale not in ("C", "POSIX"):
                try:
                    return translation.get_supported_language_variant(translation.to_language(locale))
                except LookupError:
                    pass
        if variable != "LANGUAGE":
            return "en"
    return "en"


class ShellLanguageHelp(DjangoHelpFormatter):
    """--help in the shell's language: it is printed while the arguments are parsed, before
    `execute` chooses the language."""

    def format_help(self):
        with translation.override(cli_language()):
            return super().format_help()


class TwinCommand(BaseCommand):
    """A management command whose messages and help are in the shell's language (`cli_language`)."""

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, formatter_class=ShellLanguageHelp, **kwargs)
        if parser.description:  # `help`, lazy: argparse wraps it as text, which a lazy string is not
            with translation.override(cli_language()):
                parser.description = str(parser.description)
        return parser

    def execute(self, *args, **options):
        with translation.override(cli_language()):
            return super().execute(*args, **options)


def parameter_count(text: str) -> float:
    """An option type for a model's parameters: 175B, 175e9 or 175000000000."""
    try:
        return parse_count(text)
    except TwinCoreError as error:
        raise argparse.ArgumentTypeError(core_error_text(error)) from None


class ProgressBar:
    """A `(fraction, message)` callable, like the core's `on_progress` hooks expect."""

    width = 30

    def __init__(self, stream: TextIO = sys.stderr, label: str = ""):
        self.stream = stream
        self.label = label
        self.is_terminal = stream.isatty()
        self.started = time.monotonic()
        self.last_percent = -1

    def __call__(self, fraction: float, message: Phrase | str = "") -> None:
        message = rendered(message, translation)
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
