#!/usr/bin/env python3
"""The lesson book in a real browser: every page of a folder the lessons
wrote (NN_<name>.html and index.html) loaded in headless Chromium.

    python3 tests/book/check_pages.py OUT_DIR SCREENSHOT_DIR

For each page, at 1280 and at 700 px: no console error, no broken link,
anchor or image, every figure drawn with a nonzero size inside its column and
none of its text below 11 px, every formula laid out, no verdict over 30
words, no internal name (a report's snake_case key, a cached model's file)
in the text, every part naming the code files that compute it (files of this
repository), one claim on the page for every claim in the lesson's report
(NN_<name>.json; on index.html one row for every claim of every report, and
a result for every exercise in grade.json). A screenshot of each
page at both widths (and of index.html at a phone's) goes to SCREENSHOT_DIR. Exit status 0 when every page passes, 1 otherwise, 2 when
the folder or Chromium is missing.

The checks run in a small page of our own that loads the page under test in
an iframe (Chromium's --allow-file-access-from-files lets it read the
frame's document and the files it links to) and writes what it found into
its own DOM, which --dump-dom prints.
"""
import html
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

CHECKER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body><pre id="result">no result</pre>
<script>
const query = new URLSearchParams(location.search);
const frame = document.createElement('iframe');
frame.style.width = (query.get('width') || '1000') + 'px';
frame.style.height = '2000px';
function read(url) {  // the text of a file:// URL, or null
  try {
    const request = new XMLHttpRequest();
    request.open('GET', url, false);
    request.send();
    return request.status === 0 || request.status === 200 ? request.responseText : null;
  } catch (e) {
    return null;
  }
}
frame.onload = () => {
  const doc = frame.contentDocument, problems = [];
  if (!doc || !doc.body) {
    document.getElementById('result').textContent = JSON.stringify({problems: ['the page cannot be read']});
    return;
  }
  const images = Array.from(doc.images);
  for (const img of images) {
    const box = img.getBoundingClientRect();
    if (!img.complete || img.naturalWidth === 0) problems.push('image not rendered: ' + img.alt);
    else if (box.width <= 0 || box.height <= 0) problems.push('image of zero size: ' + img.alt);
  }
  // Figures: inline SVGs, each within its column, no text drawn below 11 px.
  const figures = Array.from(doc.querySelectorAll('figure svg'));
  for (const svg of figures) {
    const box = svg.getBoundingClientRect(), column = svg.closest('figure').parentElement.getBoundingClientRect();
    const name = svg.getAttribute('aria-label') || 'a figure';
    if (box.width <= 0 || box.height <= 0) problems.push('figure of zero size: ' + name);
    if (box.right > column.right + 0.5 || box.left < column.left - 0.5)
      problems.push('figure overflows its column (' + Math.round(box.width) + ' px in ' + Math.round(column.width) + '): ' + name);
    const scale = svg.viewBox.baseVal && svg.viewBox.baseVal.width ? box.width / svg.viewBox.baseVal.width : 1;
    let smallest = Infinity, sample = '';
    for (const text of svg.querySelectorAll('text')) {
      if (!text.textContent.trim()) continue;
      const size = parseFloat(frame.contentWindow.getComputedStyle(text).fontSize) * scale;
      if (size < smallest) { smallest = size; sample = text.textContent.trim().slice(0, 30); }
    }
    if (smallest < 11) problems.push('figure text at ' + smallest.toFixed(1) + ' px ("' + sample + '"): ' + name);
  }
  // Formulas: MathML the browser laid out (a box of nonzero size).
  for (const math of doc.querySelectorAll('math')) {
    const box = math.getBoundingClientRect();
    if (box.width <= 0 || box.height <= 0) problems.push('formula not rendered: ' + math.textContent.slice(0, 40));
  }
  // A verdict is one sentence a student reads aloud.
  for (const verdict of doc.querySelectorAll('.verdict')) {
    const words = verdict.textContent.trim().split(/\s+/).filter(w => w).length - 
                  verdict.querySelector('.outcome').textContent.trim().split(/\s+/).length;
    if (words > 30) problems.push('a verdict of ' + words + ' words: ' + verdict.textContent.slice(0, 60));
  }
  const page = frame.src.split('#')[0];
  for (const a of doc.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href'), url = new URL(href, frame.src);
    if (url.protocol !== 'file:') { problems.push('a link off the machine: ' + href); continue; }
    const file = url.href.split('#')[0], anchor = decodeURIComponent(url.hash.slice(1));
    const text = file === page ? doc.documentElement.outerHTML : read(file);
    if (!text) problems.push('broken link: ' + href);
    else if (anchor && !text.includes('id="' + anchor + '"')) problems.push('broken anchor: ' + href);
  }
  document.getElementById('result').textContent = JSON.stringify({
    title: doc.title,
    images: images.length + figures.length,
    text: (() => {  // the page's words, without what is code (a file or a flag to type)
      const copy = doc.body.cloneNode(true);
      for (const code of copy.querySelectorAll('code')) code.remove();
      return copy.textContent;
    })(),
    claims: doc.querySelectorAll('div.claim, tr.reproduced, tr.not-reproduced').length,
    exercises: Array.from(doc.querySelectorAll('tr.exercise'))
                   .filter(row => !row.lastElementChild.textContent.includes('not graded yet')).length,
    problems: problems,
  });
};
frame.src = query.get('page');
document.body.appendChild(frame);
</script></body></html>
"""

CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--allow-file-access-from-files", "--no-first-run", "--disable-extensions"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(browser, args, timeout=90):
    return subprocess.run([browser, *CHROMIUM_FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def console_errors(browser, url):
    """Console messages at error level while the page loads."""
    result = run(browser, ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom", url])
    return [line for line in result.stderr.splitlines()
            if ":CONSOLE" in line and re.search(r"error|uncaught|failed", line, re.IGNORECASE)]


def expected(out, page):
    """(claims, exercises, figures) the page must show, from the reports."""
    reports = sorted(out.glob("[0-9][0-9]_*.json"))
    if page.name != "index.html":
        reports = [page.with_suffix(".json")]
    claims = figures = 0
    for report in reports:
        parts = json.loads(report.read_text(encoding="utf-8"))["parts"].values()
        claims += sum(len(p["claims"]) for p in parts)
        if page.name != "index.html":
            figures += sum(1 for p in parts for item in p["items"] if "figure" in item)
    exercises = 0
    grade = out / "grade.json"
    if page.name == "index.html" and grade.exists():
        exercises = len(json.loads(grade.read_text(encoding="utf-8"))["exercises"])
    return claims, exercises, figures


# The widths every page is checked and photographed at: a laptop's window
# and a half-screen one.
WIDTHS = (1280, 700)

# What only a program should read: a recorded value's, table's or claim's
# key (snake_case, as the report's JSON has them), a cached model's file.
CACHE_FILE = re.compile(r"[a-z_]+-[0-9a-f]{16}\.safetensors|\.safetensors")


def internal_names(out, page, text):
    """The report's keys and cache file names that appear in the page's text."""
    reports = sorted(out.glob("[0-9][0-9]_*.json")) if page.name == "index.html" else [page.with_suffix(".json")]
    keys = set()
    for report in reports:
        for part in json.loads(report.read_text(encoding="utf-8"))["parts"].values():
            keys.update(part["values"]), keys.update(part["tables"]), keys.update(part["claims"])
    found = sorted(k for k in keys if "_" in k and re.search(r"(?<![\w-])" + re.escape(k) + r"(?![\w-])", text))
    return found + sorted(set(CACHE_FILE.findall(text)))


REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


def missing_sources(page):
    """Parts of the page's lesson that name no code, or code that is not in the repository."""
    if page.name == "index.html":
        return []
    problems = []
    for number, part in json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))["parts"].items():
        if not part.get("sources"):
            problems.append(f"part {number} names no code file")
        problems += [f"part {number}'s code {source} is not in the repository"
                     for source in part.get("sources", []) if not (REPOSITORY / source).is_file()]
    return problems


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out, shots = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    browser = chromium()
    if browser is None:
        print("check_pages: Chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    pages = sorted(out.glob("[0-9][0-9]_*.html")) + [out / "index.html"]
    if not (out / "index.html").exists():
        print(f"check_pages: {out} has no index.html: run the lessons with --out {out} first", file=sys.stderr)
        return 2
    shots.mkdir(parents=True, exist_ok=True)
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        checker = pathlib.Path(scratch) / "check.html"
        checker.write_text(CHECKER, encoding="utf-8")
        for page in pages:
            url = page.as_uri()
            problems, result = [], {}
            for width in WIDTHS:
                dom = run(browser, ["--virtual-time-budget=10000", "--dump-dom",
                                    checker.as_uri() + f"?width={width}&page=" + urllib.parse.quote(url, safe="")]).stdout
                found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.DOTALL)
                result = json.loads(html.unescape(found.group(1))) if found and found.group(1) != "no result" \
                    else {"problems": ["the checker saw no result (the page did not load)"]}
                problems += [f"at {width} px: {p}" for p in result.get("problems", [])]
            problems += ["console: " + line for line in console_errors(browser, url)]
            claims, exercises, figures = expected(out, page)
            if result.get("claims", claims) != claims:
                problems.append(f"{result['claims']} claims shown, {claims} in the reports")
            if result.get("exercises", exercises) != exercises:
                problems.append(f"{result['exercises']} exercises shown graded, {exercises} in grade.json")
            if result.get("images", figures) < figures:
                problems.append(f"{result['images']} images shown, {figures} figures in the report")
            problems += [f"an internal name on the page: {name}" for name in internal_names(out, page, result.get("text", ""))]
            problems += missing_sources(page)
            for width in WIDTHS:
                shot = shots / f"{page.stem}-{width}.png"
                run(browser, [f"--window-size={width},2400", "--screenshot=" + str(shot), url])
                if not shot.exists() or shot.stat().st_size == 0:
                    problems.append(f"no screenshot at {width} px")
            if page.name == "index.html":
                run(browser, ["--window-size=390,844", "--screenshot=" + str(shots / "index-phone.png"), url])
            status = "ok" if not problems else "FAILED"
            print(f"{page.name:<28} {status}: {result.get('images', 0)} figures, {result.get('claims', 0)} claims"
                  + (f", {result.get('exercises', 0)} exercises" if page.name == "index.html" else ""))
            for problem in problems:
                print("    " + problem)
            failures += bool(problems)
    print(f"{len(pages)} pages, {failures} with problems; screenshots in {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
