#!/usr/bin/env python3
"""Opens a page in Debian's headless Chromium and checks what a person would see.

    browser_check.py PAGE --screenshot OUT.png --expect-text TEXT [--expect-text ...]
                     [--expect-selector CSS ...] [--timeout SECONDS]

PAGE is a local file or an http://127.0.0.1 / http://localhost URL (the check never goes
to the network). The page is driven through chromedriver's WebDriver HTTP API (Python's
urllib only), so pages that draw with JavaScript after loading are waited for: the check
polls until every expected text is visible and every selector has drawn, or the timeout.

It passes when
  - each --expect-text is in the rendered text of the page (document.body.innerText:
    what is shown, not what is hidden by CSS or only in the source),
  - each --expect-selector matches at least one element that is drawn with a size, and
    when they are plot elements, one of them has points: a <polyline>/<polygon> or a
    <path> with at least 2 points, a <canvas> with at least one painted pixel,
  - the browser logged no error: no uncaught script error, no failed script or resource.
The screenshot (the whole page, up to 4000 pixels tall) is written in every case once
the page has loaded, so a failure can be looked at.

Exit status: 0 passed; 1 a check failed or the browser could not run (one line on
stderr says which); 2 bad arguments; 77 (ctest: skipped) Chromium or chromedriver is
not installed (apt-get install chromium chromium-driver).
"""
import argparse
import base64
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77
WIDTH, MIN_HEIGHT, MAX_HEIGHT = 1280, 800, 4000

# Runs in the page: what is visible now. Returns {ready, text, selectors: {css: [count, points]}}.
PAGE_STATE_JS = """
const selectors = arguments[0];
function drawn(el) {  // a plot's line may be empty: its drawing's size counts
  const r = (el.ownerSVGElement || el).getBoundingClientRect();
  return r.width > 0 || r.height > 0;
}
function points(el) {
  const tag = el.tagName.toLowerCase();
  if (tag === 'polyline' || tag === 'polygon') return el.points ? el.points.numberOfItems : 0;
  if (tag === 'path') {
    const numbers = (el.getAttribute('d') || '').match(/-?[0-9]*\\.?[0-9]+(e[-+]?[0-9]+)?/gi);
    return numbers ? Math.floor(numbers.length / 2) : 0;
  }
  if (tag === 'canvas') {
    try {
      const data = el.getContext('2d').getImageData(0, 0, el.width, el.height).data;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return 2;
    } catch (e) { return 0; }
    return 0;
  }
  return -1;  // not a plot element
}
const result = {};
for (const css of selectors) {
  let count = 0, plots = 0, best = 0;
  for (const el of document.querySelectorAll(css)) {
    if (!drawn(el)) continue;
    count += 1;
    const n = points(el);
    if (n >= 0) { plots += 1; best = Math.max(best, n); }
  }
  result[css] = [count, plots, best];
}
return {ready: document.readyState === 'complete',
        text: document.body ? document.body.innerText : '',
        height: Math.max(document.documentElement.scrollHeight,
                         document.body ? document.body.scrollHeight : 0),
        selectors: result};
"""


class CheckFailed(Exception):
    """One clear line for the caller."""


def page_url(page):
    """The URL to open, or CheckFailed when PAGE is neither a local file nor a local URL."""
    if page.startswith(("http://", "https://")):
        host = urllib.parse.urlsplit(page).hostname
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise CheckFailed(f"{page}: only local pages are opened (127.0.0.1 or localhost), "
                              "the check does not go to the network")
        return page
    path = pathlib.Path(page)
    if not path.is_file():
        raise CheckFailed(f"{page}: no such file (give a local HTML file or an "
                          "http://127.0.0.1 URL)")
    return path.resolve().as_uri()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few WebDriver commands the check needs, over chromedriver's HTTP API."""

    def __init__(self, chromium, chromedriver, workdir):
        self.chromium, self.workdir = chromium, workdir
        self.port = free_port()
        self.log = open(os.path.join(workdir, "chromedriver.log"), "w")
        # Its own session: the whole group (chromedriver and the Chromium it started) is
        # ended by its id in close(), even when the check fails half-way.
        self.process = subprocess.Popen(
            [chromedriver, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.session = None

    def start_session(self):
        self.wait_ready()
        options = {"binary": self.chromium,
                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", "--no-first-run",
                            "--disable-background-networking", "--hide-scrollbars",
                            f"--user-data-dir={os.path.join(self.workdir, 'profile')}",
                            f"--window-size={WIDTH},{MIN_HEIGHT}"]}
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        self.session = self.call("POST", "/session", caps, base="")["sessionId"]

    def wait_ready(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CheckFailed(f"chromedriver exited with status {self.process.returncode}")
            try:
                if self.call("GET", "/status", None, base="").get("ready"):
                    return
            except (OSError, CheckFailed):
                pass
            time.sleep(0.1)
        raise CheckFailed("chromedriver did not answer within 30 s")

    def call(self, method, path, body, base=None):
        prefix = f"/session/{self.session}" if base is None else base
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{prefix}{path}",
                                         data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.load(response).get("value")
        except urllib.error.HTTPError as e:
            try:
                value = json.load(e).get("value", {})
                message = value.get("message", "").splitlines()[0]
            except (ValueError, AttributeError, IndexError):
                message = str(e)
            raise CheckFailed(f"the browser refused {method} {path or '/'}: {message}") from None

    def script(self, source, *args):
        return self.call("POST", "/execute/sync", {"script": source, "args": list(args)})

    def browser_errors(self):
        entries = self.call("POST", "/se/log", {"type": "browser"}) or []
        return [e.get("message", "") for e in entries if e.get("level") == "SEVERE"]

    def close(self):
        try:
            if self.session:
                self.call("DELETE", "", None)
        except (OSError, CheckFailed):
            pass
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


def missing(state, texts, selectors):
    """What the page does not show yet, as a list of reasons (empty: all there)."""
    reasons = [f"text {t!r} is not visible" for t in texts if t not in state["text"]]
    for css in selectors:
        count, plots, points = state["selectors"].get(css, [0, 0, 0])
        if count == 0:
            reasons.append(f"no drawn element matches {css!r}")
        elif plots > 0 and points < 2:
            reasons.append(f"{css!r} is a plot without points ({plots} plot element(s), "
                           f"at most {points} point)")
    return reasons


def check(args, driver):
    driver.call("POST", "/url", {"url": page_url(args.page)})
    deadline = time.monotonic() + args.timeout
    while True:
        state = driver.script(PAGE_STATE_JS, args.expect_selector)
        reasons = missing(state, args.expect_text, args.expect_selector)
        if state["ready"] and not reasons:
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    height = min(max(int(state.get("height") or 0), MIN_HEIGHT), MAX_HEIGHT)
    driver.call("POST", "/window/rect", {"width": WIDTH, "height": height})
    png = base64.b64decode(driver.call("GET", "/screenshot", None))
    pathlib.Path(args.screenshot).write_bytes(png)
    errors = driver.browser_errors()
    if errors:
        raise CheckFailed(f"{args.page}: the browser logged {len(errors)} error(s), first: "
                          f"{errors[0]}")
    if not state["ready"]:
        raise CheckFailed(f"{args.page}: did not finish loading within {args.timeout} s")
    if reasons:
        raise CheckFailed(f"{args.page}: after {args.timeout} s: " + "; ".join(reasons))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", help="local HTML file or http://127.0.0.1 URL")
    parser.add_argument("--screenshot", required=True, help="PNG to write")
    parser.add_argument("--expect-text", action="append", default=[], metavar="TEXT")
    parser.add_argument("--expect-selector", action="append", default=[], metavar="CSS")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for the page to show everything (default 30)")
    args = parser.parse_args()

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.access("/usr/bin/chromedriver", os.X_OK) else None)
    if not chromium or not chromedriver:
        print("SKIP: browser_check needs Chromium and chromedriver "
              "(apt-get install chromium chromium-driver)")
        return SKIP
    screenshot_dir = pathlib.Path(args.screenshot).resolve().parent
    if not screenshot_dir.is_dir():
        print(f"browser_check: {args.screenshot}: its folder does not exist", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="browser_check.") as workdir:
        driver = None
        try:
            page_url(args.page)  # a bad PAGE is said before a browser starts
            driver = WebDriver(chromium, chromedriver, workdir)
            driver.start_session()
            check(args, driver)
        except CheckFailed as e:
            print(f"browser_check: {e}", file=sys.stderr)
            return 1
        finally:
            if driver:
                driver.close()
    print(f"browser_check: {args.page}: ok ({len(args.expect_text)} texts, "
          f"{len(args.expect_selector)} selectors, no browser errors); "
          f"screenshot {args.screenshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
