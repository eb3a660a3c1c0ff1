"""Print, for every page of the site whose code failed, the error and what its cells wrote to stderr.

Run by .ci/run when the docs build fails, so that the cause is the last thing in the run's log
(myst-nb's report holds the traceback only: a failing %%bash cell's own message is in the page).
"""

import html
import pathlib
import re
import sys


def say(*lines: str) -> None:
    sys.stderr.write("".join(line + "\n" for line in lines))


site = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html")
for report in sorted(site.glob("reports/**/*.err.log")):
    say(f"ci: {report}, the end of the failing cell's report:")
    say(*report.read_text(errors="replace").splitlines()[-25:])
    page = site / report.relative_to(site / "reports").with_suffix("").with_suffix(".html")
    if page.exists():
        blocks = re.findall(
            r'class="output stderr[^"]*"><div class="highlight"><pre>(.*?)</pre>', page.read_text(), re.S
        )
        for block in blocks:
            text = html.unescape(re.sub(r"<[^>]+>", "", block))
            say(f"ci: {page.name}, a cell's standard error:")
            say(*text.splitlines()[-40:])
