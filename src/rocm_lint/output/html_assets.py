"""The porting report's inline style, script and Content-Security-Policy (``output/html.py``).

Family colours are categorical, not a verdict: no family is green (green reads "good" next to
the safe-fix bar) and each colour has a contrast of at least 3:1 against the light and the dark
background (WCAG 1.4.11 for graphics); every bar also carries its family's name as text.
"""

from __future__ import annotations

# One colour per family (ROC0..ROC9); tests/test_html_report.py checks the contrast and the hue.
FAMILY_COLOURS = {
    "ROC0": "#6e7781",
    "ROC1": "#2f6fd0",
    "ROC2": "#8a4fd6",
    "ROC3": "#c03a8c",
    "ROC4": "#d1495b",
    "ROC5": "#c2570c",
    "ROC6": "#9a7400",
    "ROC7": "#7a6a58",
    "ROC8": "#1e7fa6",
    "ROC9": "#a05a9c",
}
LIGHT_BACKGROUND, DARK_BACKGROUND = "#ffffff", "#0d1117"

_FAMILY_RULES = "".join(
    f".fam-{fam}{{fill:{colour};background:{colour}}}" for fam, colour in FAMILY_COLOURS.items()
)

STYLE = (
    """
:root{--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--hit:#fff8c5;--card:#f6f8fa;
--safe:#1a7f37;--unsafe:#bf8700;--manual:#cf222e;--nvidia:#59636e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;
--hit:#3b2e00;--card:#151b23;--nvidia:#9198a1}}
*{box-sizing:border-box}body{margin:0 auto;max-width:1100px;padding:16px 24px 48px;color:var(--fg);
background:var(--bg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}.muted{color:var(--muted)}a{color:#0969da}
@media (prefers-color-scheme:dark){a{color:#4493f8}}
dl.scan{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:10px 0}
dl.scan dt{color:var(--muted)}dl.scan dd{margin:0;overflow-wrap:anywhere}
.totals{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0}.total{background:var(--card);border:1px solid var(--line);
border-radius:8px;padding:10px 14px;min-width:120px}.total b{display:block;font-size:24px}
.chart{max-width:100%;height:auto;display:block}.chart text{fill:var(--fg);font-size:12px}
.bar-count{fill:var(--muted)}
"""
    + _FAMILY_RULES
    + """.dir{fill:#57606a}
.fix-safe{fill:var(--safe)}.fix-unsafe{fill:var(--unsafe)}.fix-manual{fill:var(--manual)}
span.fix{font-size:12px;border-radius:10px;padding:1px 8px;color:#fff;white-space:nowrap}
span.fix-safe{background:var(--safe)}span.fix-unsafe{background:var(--unsafe)}span.fix-manual{background:var(--manual)}
.legend span{margin-right:14px}.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
table.list{border-collapse:collapse}table.list td,table.list th{padding:3px 12px 3px 0;text-align:left;
vertical-align:top}table.list td.n{text-align:right}table.list td.fam{white-space:nowrap}
fieldset{border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:6px 12px}
fieldset label{margin-right:12px;white-space:nowrap}
details.dir{margin:0 0 0 18px}details.dir>summary{cursor:pointer;padding:2px 0;list-style-position:outside}
#dir-tree>details.dir{margin-left:0}
.dir-name{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.mix{display:inline-flex;width:120px;height:10px;vertical-align:middle;margin:0 8px;border-radius:2px;overflow:hidden;
background:var(--line)}.mix i{display:block;height:100%}
.split{font-size:12px;color:var(--muted);margin-left:8px}.split b{color:var(--fg);font-weight:600}
ul.dir-files{list-style:none;margin:0 0 4px 18px;padding:0;font-size:13px}
ul.dir-files li{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
span.nvidia-only{font-size:12px;border:1px dashed var(--nvidia);border-radius:10px;padding:0 7px;white-space:nowrap;
color:var(--muted)}
details.file{border:1px solid var(--line);border-radius:8px;margin:8px 0;background:var(--card)}
details.file>summary{cursor:pointer;padding:6px 10px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
overflow-wrap:anywhere}ul.findings{list-style:none;margin:0;padding:0 10px 8px}
li.finding{border-top:1px solid var(--line);padding:6px 0}.pos{font-family:ui-monospace,monospace;color:var(--muted)}
a.code{font-weight:600;font-family:ui-monospace,monospace}.msg{overflow-wrap:anywhere}
table.frame{border-collapse:collapse;margin-top:4px;width:100%;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
background:var(--bg);border:1px solid var(--line)}table.frame td{padding:0 8px;white-space:pre-wrap;overflow-wrap:anywhere}
table.frame td.ln{color:var(--muted);text-align:right;width:1%;white-space:nowrap;overflow-wrap:normal;
user-select:none}tr.hit{background:var(--hit)}
.hidden{display:none}.errors li{overflow-wrap:anywhere}
"""
)

SCRIPT = """
(function () {
  var form = document.getElementById('filters');
  if (!form) return;
  var items = Array.prototype.slice.call(document.querySelectorAll('li.finding'));
  var files = Array.prototype.slice.call(document.querySelectorAll('details.file'));
  var shown = document.getElementById('shown');
  function chosen(group) {
    var out = {};
    Array.prototype.forEach.call(form.querySelectorAll('input[data-group="' + group + '"]'), function (box) {
      out[box.value] = box.checked;
    });
    return out;
  }
  function apply() {
    var family = chosen('family'), fix = chosen('fix'), sev = chosen('severity'), src = chosen('source'), n = 0;
    items.forEach(function (li) {
      var ok = family[li.getAttribute('data-family')] !== false && fix[li.getAttribute('data-fix')] !== false &&
               sev[li.getAttribute('data-severity')] !== false && src[li.getAttribute('data-source')] !== false;
      li.classList.toggle('hidden', !ok);
      if (ok) n += 1;
    });
    files.forEach(function (d) {
      d.classList.toggle('hidden', !d.querySelector('li.finding:not(.hidden)'));
    });
    if (shown) shown.textContent = String(n);
  }
  form.addEventListener('change', apply);
  var all = document.getElementById('show-all');
  if (all) all.addEventListener('click', function (e) {
    e.preventDefault();
    Array.prototype.forEach.call(form.querySelectorAll('input[type=checkbox]'), function (b) { b.checked = true; });
    apply();
  });
  Array.prototype.forEach.call(document.querySelectorAll('#family-chart g.bar'), function (g) {
    g.style.cursor = 'pointer';
    g.addEventListener('click', function () {
      var fam = g.getAttribute('data-key');
      Array.prototype.forEach.call(form.querySelectorAll('input[data-group="family"]'), function (b) {
        b.checked = b.value === fam;
      });
      apply();
      document.getElementById('findings').scrollIntoView();
    });
  });
  apply();
})();
"""

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
