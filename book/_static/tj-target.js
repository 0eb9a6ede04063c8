/* A link to a row of a table in a dropdown (the claims register's rows, linked from every chapter that cites a
 * verdict): the dropdown holding the target is opened, the row scrolled into view and marked (class tj-target),
 * on load and whenever the address's fragment changes (loaded on every page by book/_ext/tj_assets.py).
 */
(() => {
  "use strict";
  const open = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (!target) return;
    for (let d = target.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    for (const old of document.querySelectorAll(".tj-target")) old.classList.remove("tj-target");
    target.classList.add("tj-target");
    target.scrollIntoView({ block: "center" });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", open); else open();
  window.addEventListener("hashchange", open);
})();
