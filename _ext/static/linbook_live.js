// "Live code": run a chapter's code cells on a Jupyter kernel on the reader's own machine.
//
// `make live` (tools/live.py) serves this site together with a local Jupyter server, and answers
// live-config.json (the kernel's address and token) to this machine's pages only. Without it the
// fetch fails and the control says how to start it; the page stays as it is. With it, the
// vendored thebe (_static/thebe/, loaded only now, from this site) turns every code cell into
// an editor with a "run" control; "Run all" restarts the kernel and runs the cells in order.
// An output computed live replaces the stored one of its cell.
(function () {
  "use strict";

  var HOWTO = "Live code runs this page's cells on your own computer. In the book's folder run " +
              "<code>make live</code> and open the address it prints.";
  // Cells that must never run on a reader's machine (the Colab cell installs packages).
  var SKIP_CELLS = ".tag_colab-setup, .tag_remove-cell, .tag_skip-execution";

  function siteRoot() {
    var root = document.documentElement.getAttribute("data-content_root");
    if (root == null && window.DOCUMENTATION_OPTIONS) root = DOCUMENTATION_OPTIONS.URL_ROOT;
    return root || "./";
  }

  function absolute(rel) { return new URL(rel, document.baseURI).href; }

  // The page's notebook, relative to the site (chapters/01_estimation.html -> .ipynb): the
  // kernel starts in its folder, as nbval runs it.
  function notebookPath() {
    var root = new URL(siteRoot(), document.baseURI).pathname;
    var page = decodeURIComponent(window.location.pathname);
    var rel = page.indexOf(root) === 0 ? page.slice(root.length) : page.replace(/^\//, "");
    return rel.replace(/\.html$/, ".ipynb");
  }

  function codeCells() {
    var article = document.querySelector("article.bd-article") || document.body;
    return Array.prototype.filter.call(article.querySelectorAll("div.cell"), function (cell) {
      return cell.querySelector(".cell_input pre") && !cell.matches(SKIP_CELLS);
    });
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  function loadStyle(href) {
    var l = document.createElement("link");
    l.rel = "stylesheet";
    l.href = href;
    document.head.appendChild(l);
  }

  // The page's MathJax 3 typesets LaTeX outputs (sympy's "$\displaystyle ...$"); thebe's own
  // typesetter would load MathJax 2 from a CDN.
  var typesetter = {
    typeset: function (host) {
      if (!window.MathJax || !MathJax.typesetPromise) return;
      var m = /^\s*(\$\$?)([\s\S]+?)\1\s*$/.exec(host.textContent || "");
      if (m && !host.querySelector("*")) {
        host.textContent = (m[1] === "$$" ? "\\[" : "\\(") + m[2] + (m[1] === "$$" ? "\\]" : "\\)");
      }
      host.classList.add("mathjax_process");
      return MathJax.typesetPromise([host]);
    },
  };

  function Live(cells) {
    this.cells = cells;
    this.bar = document.createElement("div");
    this.bar.className = "linbook-live";
    this.bar.setAttribute("data-state", "off");
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "linbook-live-button";
    this.button.textContent = "Live code";
    this.button.title = "Run and edit this page's code on a Python kernel on your computer";
    this.runAll = document.createElement("button");
    this.runAll.type = "button";
    this.runAll.className = "linbook-live-runall";
    this.runAll.textContent = "Run all";
    this.runAll.title = "Restart the kernel and run every cell of the page in order";
    this.runAll.hidden = true;
    this.status = document.createElement("span");
    this.status.className = "linbook-live-status";
    this.status.setAttribute("role", "status");
    this.bar.append(this.button, this.runAll, this.status);
    this.button.addEventListener("click", this.start.bind(this));
    this.runAll.addEventListener("click", this.restartRunAll.bind(this));
  }

  Live.prototype.mount = function () {
    var h1 = document.querySelector("article.bd-article h1");
    if (h1) h1.insertAdjacentElement("afterend", this.bar);
    else this.cells[0].insertAdjacentElement("beforebegin", this.bar);
  };

  Live.prototype.say = function (state, html) {
    this.bar.setAttribute("data-state", state);
    this.status.innerHTML = html;
  };

  Live.prototype.start = function () {
    var self = this;
    this.button.disabled = true;
    this.say("connecting", "Looking for the local kernel…");
    fetch(siteRoot() + "live-config.json", { cache: "no-store", credentials: "omit" })
      .then(function (r) {
        if (!r.ok) throw new Error("no live config");
        return r.json();
      })
      .catch(function () { throw { howto: true }; })
      .then(function (config) {
        self.say("connecting", "Starting a Python kernel…");
        loadStyle(siteRoot() + "_static/thebe/thebe.css");
        return loadScript(siteRoot() + "_static/thebe/index.js").then(function () {
          return self.connect(config);
        });
      })
      .then(function () {
        self.button.hidden = true;
        self.runAll.hidden = false;
        self.say("connected", "Connected to a Python kernel on this computer. Edit a cell and " +
                 "press <em>run</em> (or Shift-Enter); <em>Run all</em> restarts and runs the page.");
      })
      .catch(function (err) {
        self.button.disabled = false;
        if (err && err.howto) self.say("unavailable", HOWTO);
        else self.say("failed", "Could not start live code: " + escapeHtml(String(err && err.message || err)) +
                      ". Is <code>make live</code> still running?");
      });
  };

  // Each code cell's source goes into a new <pre> that thebe turns into an editor with a "run"
  // control; each cell gets an empty output box. The stored output stays until the cell runs.
  Live.prototype.prepare = function () {
    this.cells.forEach(function (cell) {
      var input = cell.querySelector(".cell_input");
      var source = document.createElement("pre");
      source.setAttribute("data-executable", "true");
      source.setAttribute("data-language", "python");
      source.textContent = input.querySelector("pre").textContent.replace(/\s+$/, "");
      input.hidden = true;
      input.insertAdjacentElement("afterend", source);
      var out = document.createElement("div");
      out.setAttribute("data-output", "true");
      out.className = "linbook-live-output";
      var stored = cell.querySelector(".cell_output");
      if (stored) stored.insertAdjacentElement("beforebegin", out);
      else cell.appendChild(out);
    });
  };

  Live.prototype.connect = function (config) {
    var self = this;
    this.prepare();
    var dark = document.documentElement.getAttribute("data-theme") === "dark";
    var started = window.thebe.bootstrap({
      requestKernel: true,
      useBinder: false,
      useJupyterLite: false,
      selector: "pre[data-executable]",
      outputSelector: "div[data-output]",
      mountRunButton: true,
      mountRunAllButton: false,
      mountRestartButton: false,
      mountRestartAllButton: false,
      serverSettings: { baseUrl: config.baseUrl, wsUrl: config.wsUrl, token: config.token,
                        appendToken: true },
      kernelOptions: { kernelName: config.kernelName || "python3", path: notebookPath() },
      savedSessionOptions: { enabled: false },
      // Must be set for thebe to render text/latex at all; the typesetter below replaces the
      // MathJax 2 one before any output is rendered, so this file is never requested.
      mathjaxUrl: siteRoot() + "_static/thebe/mathjax2-not-used.js",
      mathjaxConfig: "TeX-AMS_CHTML-full,Safe",
      codeMirrorConfig: { theme: dark ? "abcdef" : "default", lineNumbers: false },
    });
    // bootstrap() builds the notebook synchronously, before its first await.
    var notebook = window.thebe.notebook;
    notebook.rendermime.latexTypesetter = typesetter;
    notebook.cells.forEach(function (cell) {
      var execute = cell.execute.bind(cell);
      cell.execute = function (source) {
        var box = document.querySelector('[data-thebe-id="' + cell.id + '"]');
        var stored = box && box.closest("div.cell").querySelector(".cell_output");
        if (stored) stored.hidden = true;
        return execute(source);
      };
    });
    // bootstrap() resolves once the kernel's session exists, before its websocket is open. A
    // restart sent into that gap (Run all pressed at once) made the server replace the half-open
    // socket while the page reopened it, and neither side spoke again (2 of 4 runs on a loaded
    // machine); "connected" is said only once the kernel has answered over its socket.
    return started.then(function (res) {
      if (!res || !res.session) throw new Error("the kernel did not start");
      self.session = res.session;
      return answering(res.session.kernel, ANSWER_MS, "the kernel did not answer");
    });
  };

  Live.prototype.restartRunAll = function () {
    var self = this, notebook = window.thebe.notebook, n = notebook.cells.length;
    this.runAll.disabled = true;
    this.say("running", "Restarting the kernel…");
    var kernel = notebook.session.kernel;
    kernel.restart()
      .then(function () { return answering(kernel, ANSWER_MS, "the kernel did not answer after its restart"); })
      .then(function () {
        var k = 0;
        return notebook.cells.reduce(function (chain, cell, i) {
          return chain.then(function (stopped) {
            if (stopped) return stopped;
            k = i + 1;
            self.say("running", "Running cell " + k + " of " + n + "…");
            return cell.execute(cell.source).then(function (res) {
              if (res == null) return { at: k, what: "the kernel did not answer" };
              if (res.error) return { at: k, what: res.error[0].ename + ": " + res.error[0].evalue };
              return null;
            });
          });
        }, Promise.resolve(null));
      })
      .then(function (stopped) {
        self.runAll.disabled = false;
        if (stopped) self.say("error", "Stopped at cell " + stopped.at + " of " + n + ": " + escapeHtml(stopped.what));
        else self.say("done", "Ran all " + n + " cells.");
      }, function (err) {
        self.runAll.disabled = false;
        self.say("failed", "Run all failed: " + escapeHtml(String(err && err.message || err)));
      });
  };

  // How long the kernel may take to answer after it starts or restarts, in the page's time: a
  // busy machine (a CI run beside two nbval workers) also slows this page's own script.
  var ANSWER_MS = 240000;

  // Resolves once the kernel answers a kernel_info request (a round trip on its shell channel),
  // or fails after `ms` with `what`. It asks every 5 s; a request that cannot be sent yet (the
  // socket still connecting) is asked again. After a restart the REST call returns before the new
  // kernel's channels are certain to be up: Run all once sent cell 1 into that gap and waited for
  // ever (a CI run: "Running cell 1 of 59" for 600 s). An open socket that carries no answer for
  // 20 s (any socket, after 60 s) is opened anew, as the page does after a lost connection: the
  // server then connects it to the kernel afresh. A socket still opening is left to finish: the
  // server may still be waiting for a slow kernel, and replacing a half-open socket is what
  // left both sides silent.
  function answering(kernel, ms, what) {
    var start = Date.now(), opened = start;
    function ask() {
      var wait = new Promise(function (resolve) { setTimeout(resolve, 5000, null); });
      var reply = Promise.resolve()
        .then(function () { return kernel.requestKernelInfo(); })
        .catch(function () { return wait; });
      return Promise.race([reply, wait]).then(function (answer) {
        if (answer) return answer;
        var now = Date.now();
        if (now - start > ms) throw new Error(what);
        var silent = now - opened;
        if (silent > 60000 || (silent > 20000 && kernel.connectionStatus === "connected")) {
          opened = now;
          kernel.reconnect().catch(function () { /* the next ask tells */ });
        }
        return ask();
      });
    }
    return ask();
  }

  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var cells = codeCells();
    if (!cells.length) return;
    var live = new Live(cells);
    live.mount();
    window.linbookLive = live;
  });
})();
