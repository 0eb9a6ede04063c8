/* Tables on a phone, measured as the reader sees them (loaded on every page by book/_ext/tj_assets.py).
 *
 * On a screen up to 700 px wide, a book table (table.tj-table) wider than the content width of the box
 * that holds it is first set tighter (smaller type, thinner cells: class tj-tight); if it is still too
 * wide, each row becomes a card, one "header: value" line per cell (class tj-cards), its column headers
 * copied to the cells as data-label. Nothing is hidden and no number is cut. A table that still
 * overflows scrolls in its own box, whose cut edge shows a shadow (book.css). The fit is redone when
 * the window is resized and when a dropdown holding a table is opened.
 *
 * Wider screens get the same care without cards: a table wider than its box puts each interval under
 * its value (class tj-ci-under) and, if it holds sentences (tj-stack), wraps its cells (tj-wrap).
 */
(() => {
  "use strict";
  const PHONE = 700;

  const holderOf = (table) => {
    for (let a = table.parentElement; a; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === "auto" || ox === "scroll") return a;
    }
    return null;
  };

  const overflow = (table) => {
    const box = holderOf(table) || table.closest("article") || document.body;
    const cs = getComputedStyle(box);
    const content = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    return table.getBoundingClientRect().width - content;
  };

  // a value with its interval and marks ("+0.393 (0.31–0.46)", "2.91 times", "0.000 (0.00–0.04)†"), not a sentence
  const isNumber = (t) => /^[(\[]?[<>≤≥±+\-−]?\d/.test(t) && t.length <= 32 && !/[A-Za-z]{3,}/.test(t.replace(/\b(times|to)\b/g, ""));

  const clean = (text) => text.replace(/\u00ad/g, "").replace(/\s+/g, " ").trim();

  // Column j's header: every header level over it (pandas Styler: th.col_heading.level{k}.col{j},
  // spanning colspan columns), joined with " · ".
  const labelCells = (table) => {
    if (table.dataset.tjLabelled) return;
    const levels = {};
    for (const th of table.querySelectorAll("thead th.col_heading")) {
      const col = /(?:^|\s)col(\d+)(?:\s|$)/.exec(th.className);
      const lvl = /(?:^|\s)level(\d+)(?:\s|$)/.exec(th.className);
      if (!col) continue;
      const start = +col[1], span = +(th.getAttribute("colspan") || 1), text = clean(th.textContent);
      for (let j = start; j < start + span; j++) (levels[j] = levels[j] || []).push([lvl ? +lvl[1] : 0, text]);
    }
    for (const td of table.querySelectorAll("tbody td")) {
      const col = /(?:^|\s)col(\d+)(?:\s|$)/.exec(td.className);
      const parts = col && levels[+col[1]];
      if (!parts || td.hasAttribute("data-label")) continue;
      const words = parts.sort((a, b) => a[0] - b[0]).map((p) => p[1]).filter((t, i, all) => t && all.indexOf(t) === i);
      td.setAttribute("data-label", words.join(" · "));
    }
    table.dataset.tjLabelled = "1";
  };

  const fit = () => {
    const phone = window.innerWidth <= PHONE;
    for (const table of document.querySelectorAll("article table.tj-table")) {
      table.classList.remove("tj-tight", "tj-cards", "tj-ci-under", "tj-wrap");
      if (!table.getClientRects().length) continue;
      if (!phone) {
        if (overflow(table) > 1) table.classList.add("tj-ci-under");
        if (overflow(table) > 1 && table.classList.contains("tj-stack")) {
          // sentences wrap; a cell that is a number (and its interval) stays on one line
          for (const td of table.querySelectorAll("td")) td.classList.toggle("tj-num", isNumber(td.textContent.trim()));
          table.classList.add("tj-wrap");
        }
        continue;
      }
      if (table.classList.contains("tj-stack")) continue;  // its rows are cards on a phone already
      if (overflow(table) > 1) table.classList.add("tj-tight");
      if (overflow(table) > 1) {
        labelCells(table);
        table.classList.remove("tj-tight");
        table.classList.add("tj-cards");
      }
    }
  };

  let pending = null;
  const later = () => { clearTimeout(pending); pending = setTimeout(fit, 100); };
  if (document.readyState === "complete") fit(); else window.addEventListener("load", fit);
  window.addEventListener("resize", later);
  document.addEventListener("toggle", (e) => { if (e.target.querySelector && e.target.querySelector("table")) fit(); }, true);
  window.tjFitTables = fit;  // for the browser test, after it opens every dropdown
})();
