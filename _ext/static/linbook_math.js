// Display equations wider than the text column (on a phone) are scaled down to fit, but to no
// less than MIN_SCALE of their size, so that they stay readable (about 10 px type); MathJax 3
// cannot break lines, so longer equations are written over several lines in the sources.
// tests/browser/test_site_browser.py fails on one still too wide at MIN_SCALE (at 390 px);
// such an equation would scroll inside its box with the shadow cue of linbook_site.css,
// never cut off.
(function () {
  "use strict";
  var MIN_SCALE = 0.6;

  function fit() {
    document.querySelectorAll('mjx-container[jax="CHTML"][display="true"]').forEach(function (m) {
      if (m.dataset.linbookSize === undefined) m.dataset.linbookSize = m.style.fontSize || "";
      var base = parseFloat(m.dataset.linbookSize) || 100;
      m.style.fontSize = m.dataset.linbookSize;
      m.removeAttribute("data-linbook-scale");
      var avail = m.clientWidth, need = m.scrollWidth;
      if (!avail || need <= avail + 1) return;
      // MathJax sizes everything in em, so the width scales with the font size.
      var scale = Math.max(MIN_SCALE, 0.99 * avail / need);
      m.style.fontSize = (base * scale).toFixed(2) + "%";
      m.setAttribute("data-linbook-scale", scale.toFixed(3));
    });
    // (a count of the runs: the browser test measures the page once the first run is done)
    window.linbookMathFitted = (window.linbookMathFitted || 0) + 1;
  }

  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(fit, 150);
  });
  (function whenTypeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(fit);
    else setTimeout(whenTypeset, 100);
  })();
  window.linbookFitMath = fit;
})();
