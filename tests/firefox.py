"""Firefox for the browser tests, driven over WebDriver BiDi (the W3C protocol Firefox speaks).

Playwright drives Firefox only through its own patched build, which cannot be downloaded here,
and its BiDi mode needs a newer Firefox than Debian's ESR. So this is a small BiDi client of our
own: real page loads, real pointer clicks and key presses, script evaluation, screenshots, and
the page's uncaught errors. Firefox runs on an Xvfb display rather than headless, because
headless Firefox finds no GL driver here, while on Xvfb Mesa's llvmpipe renders WebGL.
"""
from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

FIREFOX = "/usr/bin/firefox-esr"
XVFB = "/usr/bin/Xvfb"
MISSING = [path for path in (FIREFOX, XVFB) if not Path(path).exists()]

# No first-run pages, updates, telemetry or experiments: the machine has no internet.
PREFERENCES = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "network.captive-portal-service.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "messaging-system.rsexperimentloader.enabled": False,
    "intl.accept_languages": "en-US",
}
ENTER, TAB = "\ue007", "\ue004"  # WebDriver key codes


class BiDiError(AssertionError):
    """A command the browser refused, or a wait that ran out."""


class Firefox:
    """One Firefox window at ``width`` x ``height``; use as a context manager."""

    def __init__(self, *, width: int = 1280, height: int = 900) -> None:
        self.width, self.height = width, height
        self.errors: list[str] = []  # uncaught exceptions of the pages, as "text (url:line)"
        self._ids = itertools.count(1)

    def __enter__(self) -> Firefox:
        self._workdir = Path(tempfile.mkdtemp(prefix="twin-firefox-"))
        display = self._start_xvfb()
        profile = self._workdir / "profile"
        profile.mkdir()
        (profile / "user.js").write_text("".join(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n" for name, value in PREFERENCES.items()))
        self._log = self._workdir / "firefox.log"
        with self._log.open("w") as log:
            self._process = subprocess.Popen(
                [FIREFOX, "--remote-debugging-port=0", "--no-remote", "--profile", str(profile), f"--width={self.width}", f"--height={self.height}", "about:blank"],
                env={**os.environ, "DISPLAY": f":{display}", "MOZ_CRASHREPORTER_DISABLE": "1"}, stdout=log, stderr=subprocess.STDOUT,
            )
        self._connection = contextlib.ExitStack()
        self._socket = self._connection.enter_context(connect(self._endpoint() + "/session", max_size=None, open_timeout=30))
        self.version = self.send("session.new", capabilities={})["capabilities"]["browserVersion"]
        self.context = self.send("browsingContext.getTree")["contexts"][0]["context"]
        self.send("browsingContext.setViewport", context=self.context, viewport={"width": self.width, "height": self.height})
        self.send("session.subscribe", events=["log.entryAdded"])
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            self._connection.close()
        finally:
            for process in (self._process, self._xvfb):
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _start_xvfb(self, timeout_s: float = 20) -> str:
        """An Xvfb on a display no other X server has used lately: reusing a number just freed
        (what ``-displayfd`` picks) sometimes left Firefox without the display's socket."""
        taken = {path.name for path in Path("/tmp").glob(".X*-lock")}
        display = next(number for number in random.sample(range(100, 30000), 50) if f".X{number}-lock" not in taken)
        self._xvfb = subprocess.Popen(
            [XVFB, f":{display}", "-screen", "0", f"{self.width}x{self.height + 200}x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while not Path(f"/tmp/.X11-unix/X{display}").exists():
            if self._xvfb.poll() is not None or time.monotonic() > deadline:
                raise BiDiError(f"Xvfb did not start on :{display} (exit code {self._xvfb.poll()})")
            time.sleep(0.05)
        return str(display)

    def _endpoint(self, timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = re.search(r"WebDriver BiDi listening on (ws://\S+)", self._log.read_text(errors="replace"))
            if found:
                return found.group(1)
            if self._process.poll() is not None:
                raise BiDiError(f"Firefox exited with {self._process.returncode}:\n{self._log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        raise BiDiError(f"Firefox did not open WebDriver BiDi within {timeout_s} s")

    # -- the protocol ---------------------------------------------------------

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are recorded."""
        command_id = next(self._ids)
        self._socket.send(json.dumps({"id": command_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=120))
            if message.get("id") == command_id:
                if message.get("type") == "error":
                    raise BiDiError(f"{method}: {message.get('error')}: {message.get('message')}")
                return message["result"]
            if message.get("method") == "log.entryAdded" and message["params"].get("type") == "javascript":
                entry = message["params"]
                frames = (entry.get("stackTrace") or {}).get("callFrames")
                # Exceptions come with the frames that threw. Firefox reports network failures
                # here too, frameless (a websocket still connecting when a test leaves the page).
                if frames:
                    self.errors.append(f"{entry.get('text')} ({frames[0].get('url', '?')}:{frames[0].get('lineNumber', '?')})")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send("script.evaluate", expression=expression, target={"context": self.context}, awaitPromise=True)
        if result["type"] == "exception":
            raise BiDiError(f"{expression}: {result['exceptionDetails']['text']}")
        return _plain(result["result"])

    # -- what a test does -----------------------------------------------------

    def goto(self, url: str) -> None:
        self.send("browsingContext.navigate", context=self.context, url=url, wait="complete")

    @property
    def url(self) -> str:
        return self.evaluate("location.href")

    def wait_for(self, expression: str, *, timeout_s: float = 30) -> Any:
        """Poll ``expression`` until it is truthy; its value. (An element comes back as None:
        test for one with ``!!``.)"""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = self.evaluate(expression)
            except BiDiError:
                value = None  # e.g. the page is navigating
            if value:
                return value
            if time.monotonic() > deadline:
                raise BiDiError(f"still false after {timeout_s} s: {expression}")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        """A real pointer click in the middle of the first element matching ``selector``."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
        node = self.send("script.evaluate", expression=f"document.querySelector({json.dumps(selector)})", target={"context": self.context}, awaitPromise=False)["result"]
        if node.get("type") != "node":
            raise BiDiError(f"nothing matches {selector!r}")
        origin = {"type": "element", "element": {"sharedId": node["sharedId"]}}
        self.send("input.performActions", context=self.context, actions=[{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": 0, "y": 0, "origin": origin}, {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}],
        }])  # fmt: skip

    def type(self, text: str) -> None:
        """Real key presses into whatever has the focus (``ENTER`` for the Enter key)."""
        keys = [action for key in text for action in ({"type": "keyDown", "value": key}, {"type": "keyUp", "value": key})]
        self.send("input.performActions", context=self.context, actions=[{"type": "key", "id": "keyboard", "actions": keys}])

    def fill(self, selector: str, text: str) -> None:
        """Click a field, select what it holds and type over it."""
        self.click(selector)
        self.evaluate(f"document.querySelector({json.dumps(selector)}).select()")
        self.type(text)

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        params: dict[str, Any] = {"context": self.context}
        if full_page:
            params["origin"] = "document"
        path.write_bytes(base64.b64decode(self.send("browsingContext.captureScreenshot", **params)["data"]))


def _plain(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python data (nodes and other handles as None)."""
    kind, value = remote.get("type"), remote.get("value")
    if kind in ("string", "boolean"):
        return value
    if kind == "number":
        return value if isinstance(value, (int, float)) else float(value)  # "NaN", "-0", "Infinity"...
    if kind == "array":
        return [_plain(item) for item in value]
    if kind == "object":
        return {key if isinstance(key, str) else _plain(key): _plain(item) for key, item in value}
    return None
